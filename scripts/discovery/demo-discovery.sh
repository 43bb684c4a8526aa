#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A demo discovery script under Flink's contract, for machines without the
# devices: prints AMOUNT indexes out of a configured list, split by ",".
#
#   demo-discovery.sh AMOUNT [--indexes 0,1,2,3]
#
# extres (and Flink) pass the amount as the first argument and append the
# configured discovery-script.args. Exits 1 with a message on stderr when the
# amount cannot be satisfied, as Flink's nvidia-gpu-discovery.sh does.

prog=demo-discovery.sh
usage() {
	echo "usage: $prog AMOUNT [--indexes LIST]" >&2
	exit 1
}

[ $# -ge 1 ] || usage
amount=$1
shift
# Digits only, and short enough for sh arithmetic.
case $amount in
'' | *[!0-9]* | ??????????*) amount_ok=0 ;;
*) [ "$amount" -gt 0 ] && amount_ok=1 || amount_ok=0 ;;
esac
if [ "$amount_ok" = 0 ]; then
	echo "$prog: amount '$amount' is not a positive integer" >&2
	exit 1
fi
indexes=0,1
while [ $# -gt 0 ]; do
	case $1 in
	--indexes)
		[ $# -ge 2 ] || usage
		indexes=$2
		shift 2
		;;
	*)
		echo "$prog: unknown argument '$1'" >&2
		usage
		;;
	esac
done

out=
found=0
IFS=,
for i in $indexes; do
	[ "$found" -lt "$amount" ] || break
	out=${out:+$out,}$i
	found=$((found + 1))
done
if [ "$found" -lt "$amount" ]; then
	echo "$prog: wanted $amount device(s), found $found in '$indexes'" >&2
	exit 1
fi
echo "$out"
