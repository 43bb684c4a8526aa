#!/bin/sh
# SPDX-License-Identifier: MIT
#
# usage: check-pages.sh PAGE...
#
# Render each manual page as man(1) does (-Tutf8) and for print (groff's
# default device), with every warning on and the man macros' style checks
# (CHECKSTYLE, groff >= 1.23); any output on stderr fails the page. Exit 77
# (skip) when groff is not installed.
set -u

if ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: groff is not installed (Debian: apt-get install groff-base)"
	exit 77
fi
[ $# -gt 0 ] || { echo "usage: $0 PAGE..." >&2; exit 2; }

failed=0
for page in "$@"; do
	for dev in utf8 ps; do
		# groff-base has no ps device: a missing device is no warning.
		[ "$dev" = ps ] && ! groff -Tps -z /dev/null 2>/dev/null && continue
		out=$(groff -man -T"$dev" -z -ww -rCHECKSTYLE=3 "$page" 2>&1)
		status=$?
		if [ $status -ne 0 ] || [ -n "$out" ]; then
			printf 'FAIL: %s (-T%s, exit %d):\n%s\n' "$page" "$dev" "$status" "$out"
			failed=1
		fi
	done
	[ $failed -ne 0 ] || echo "ok: $page"
done
exit $failed
