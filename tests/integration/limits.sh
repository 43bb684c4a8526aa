# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The largest tree extresd serves (extresd(8), LIMITS): 262,144 infos and
# properties, and 16 MiB of property names and values, in one discovery and
# in the whole tree. A tree exactly at each limit is served whole; one entry
# or one byte more, in one discovery or across resources, fails with an
# error that names the resource and the limit, and a reload past a limit
# leaves the tree served as it was.
#
# usage: limits.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SIZED=$BUILDDIR/tests/mock/mock_sized.so

# sized_config NAME:AMOUNT[:PARAM=VALUE...]...: resources served by
# mock_sized (see tests/mock/mock_sized.c), in $WORK/extres.yaml.
sized_config() {
	local spec names=() fields kv
	for spec in "$@"; do
		names+=("${spec%%:*}")
	done
	{
		printf 'external-resources: %s\n' "$(IFS=';'; echo "${names[*]}")"
		for spec in "$@"; do
			IFS=: read -ra fields <<<"$spec"
			printf 'external-resource.%s.amount: %s\n' "${fields[0]}" "${fields[1]}"
			printf 'external-resource.%s.driver: %s\n' "${fields[0]}" "$SIZED"
			for kv in "${fields[@]:2}"; do
				printf 'external-resource.%s.param.%s: %s\n' "${fields[0]}" "${kv%%=*}" "${kv#*=}"
			done
		done
	} >"$WORK/extres.yaml.new"
	mv -f "$WORK/extres.yaml.new" "$WORK/extres.yaml"
}

# The daemon's peak RSS stays under 256 MiB (scripts/bench --scale measures it).
assert_hwm_bounded() {
	local kb
	kb=$(awk '$1 == "VmHWM:" { print $2 }' "/proc/$DAEMON_PID/status")
	it_log "$1: VmHWM $kb kB"
	it_sanitized && return 0
	((kb < 262144)) || fail "$1: extresd's peak RSS is $kb kB, over 256 MiB"
}

# Infos and properties under the resources (directories and files).
count_entries() {
	find "$@" -mindepth 1 | wc -l
}

# Bytes of property names and values under the resources: each file holds
# its value and a newline.
count_bytes() {
	find "$@" -type f -printf '%f %s\n' |
		awk '{ n += length($1) + $2 - 1 } END { print n }'
}

# A: 4095 infos of index and 62 properties; b: one more such info.
AT_ENTRIES=(a:4095:infos=4095:props=62 b:1:props=62)
# The names and values of a (256 infos of one 64 KiB property, the last
# 62568 bytes) and b (index 0) add up to 16 MiB.
AT_BYTES=(a:256:infos=256:props=1:value-bytes=65536:last-value-bytes=62568 b:1)

case_entries() {
	it_setup
	sized_config "${AT_ENTRIES[@]}"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq 262144 "$(count_entries "$MNT/a" "$MNT/b")" "infos and properties served"
	assert_file "$MNT/a/4094/index" $'4094\n'
	assert_file "$MNT/b/0/p062" $'v\n'
	assert_hwm_bounded "262144 infos and properties"
	daemon_stop

	# One more, across resources: each discovery is within the limit.
	sized_config a:4095:infos=4095:props=62 b:1:props=62:extra=1
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'b' and those before it: 262145 infos and properties, more than the 262144 extres serves"

	# One more in one discovery, however few of them are taken.
	sized_config a:1:infos=4096:props=62:extra=1
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'a': driver 'mock_sized': property 'x001' of info 4095: 262145 infos and properties, more than the 262144 extres serves"
}

case_bytes() {
	it_setup
	sized_config "${AT_BYTES[@]}"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq 16777216 "$(count_bytes "$MNT/a" "$MNT/b")" "bytes of names and values served"
	assert_eq 62569 "$(stat -c %s "$MNT/a/255/p001")" "size of the last value"
	assert_eq 65537 "$(wc -c <"$MNT/a/0/p001")" "bytes read from a 64 KiB value"
	assert_hwm_bounded "16 MiB of names and values"
	daemon_stop

	# One byte more, across resources.
	sized_config a:256:infos=256:props=1:value-bytes=65536:last-value-bytes=62569 b:1
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'b' and those before it: 16777217 bytes of property names and values, more than the 16777216 extres serves"

	# One byte more in one discovery.
	sized_config a:1:infos=256:props=1:value-bytes=65536:last-value-bytes=62575
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'a': driver 'mock_sized': property 'p001' of info 255: 16777217 bytes of property names and values, more than the 16777216 extres serves"
}

# A reload past a limit fails whole: the tree at the limit stays served.
case_reload() {
	it_setup
	local why out rc=0
	sized_config "${AT_BYTES[@]}"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	sized_config a:256:infos=256:props=1:value-bytes=65536:last-value-bytes=62568 b:1:extra=1
	why="resource 'b' and those before it: 16777221 bytes of property names and values, more than the 16777216 extres serves"
	out=$("$EXTRESCTL" reload "$MNT" 2>"$WORK/ctl.err") || rc=$?
	assert_eq 1 "$rc" "extresctl reload status"
	assert_eq "" "$out" "extresctl reload stdout"
	assert_contains "$(cat "$WORK/ctl.err")" "$why; still serving generation 0" "extresctl reload stderr"
	assert_file "$MNT/.meta/error" "$why
"
	assert_eq 16777216 "$(count_bytes "$MNT/a" "$MNT/b")" "bytes served after the failed reload"
	assert_eq "index" "$(ls "$MNT/b/0")" "b/0 after the failed reload"
	kill -TERM "$DAEMON_PID" || fail "cannot send SIGTERM to extresd"
	daemon_reap
	assert_eq 0 "$DAEMON_STATUS" "exit status after SIGTERM"
	assert_eq "extresd: error: reload failed, still serving generation 0: $why" \
		"$(grep -i error "$DAEMON_ERR")" "errors on the daemon's stderr"
}

it_main "$@"
