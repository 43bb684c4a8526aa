# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Hostile YAML against the daemon: nesting 100,000 deep, which libyaml took
# seconds (and a reload made SIGTERM wait for) before the depth limit was
# checked as the parser reads; and an alias bomb, which expanded a small
# file into hundreds of megabytes, once per reload.
#
# usage: parse.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# N copies of the character C.
repeat() {
	local s
	printf -v s '%*s' "$1" ''
	printf '%s' "${s// /$2}"
}

# A valid config whose Flink key x holds a list nested 100,000 deep: the
# depth is the only thing wrong with it.
write_deep_config() {
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.amount: 1' \
			'external-resource.gpu.driver: static' \
			'external-resource.gpu.param.indexes: "0"'
		printf 'flink.x: '
		repeat 100000 '['
		repeat 100000 ']'
		printf '\n'
	} >"$1"
}

# The alias bomb of issue 10: 1,000 devices; the first SHARED of them have a
# property that names one 60 KB value, the others a short one of their own.
write_alias_config() {
	local path=$1 shared=$2 i
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.amount: 1000' \
			'external-resource.gpu.driver: static'
		printf 'blob: &b "%s"\n' "$(repeat 60000 x)"
		printf 'external-resource.gpu.param.devices:\n'
		for ((i = 0; i < 1000; i++)); do
			if ((i < shared)); then
				printf '  - {index: %d, blob: *b}\n' "$i"
			else
				printf '  - {index: %d, blob: v%d}\n' "$i" "$i"
			fi
		done
	} >"$path"
}

# The daemon's peak resident memory, in kB.
daemon_hwm_kb() {
	awk '$1 == "VmHWM:" { print $2 }' "/proc/$DAEMON_PID/status"
}

# At most 64 MiB, unless sanitized.
assert_hwm_bounded() {
	local what=$1 kb
	kb=$(daemon_hwm_kb)
	it_log "$what: VmHWM $kb kB"
	if it_sanitized; then
		it_log "sanitized build: the 64 MiB bound is not checked"
		return 0
	fi
	((kb < 65536)) || fail "$what: extresd's peak RSS is $kb kB, over 64 MiB"
}

# Start-up refuses the file at the 64th bracket, without reading the rest
# (libyaml alone took over 20 s for it).
case_deep() {
	it_setup
	write_deep_config "$WORK/deep.yaml"
	daemon_run_fail -f -c "$WORK/deep.yaml" "$MNT"
	it_log "refused in $RUN_SECONDS s"
	assert_startup_error "$WORK/deep.yaml:5:73: nested deeper than 64 levels"
	# A hang guard: the refusal takes milliseconds.
	awk -v s="$RUN_SECONDS" 'BEGIN { exit !(s < 3) }' ||
		fail "refusing a 100,000-deep config took $RUN_SECONDS s"
}

# SIGTERM right after a SIGHUP that reloads the deep file: the reload
# fails at once and the daemon exits 0 within a second.
case_deep_reload_term() {
	it_setup
	local t0 t1 ms
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	write_deep_config "$WORK/deep.yaml"
	mv -f "$WORK/deep.yaml" "$WORK/extres.yaml"
	kill -HUP "$DAEMON_PID"
	wait_until 10 "the failed reload on stderr" grep -q 'nested deeper than 64 levels' "$DAEMON_ERR"
	t0=$(date +%s%N)
	kill -TERM "$DAEMON_PID"
	daemon_reap
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	it_log "exit status $DAEMON_STATUS $ms ms after SIGTERM"
	[[ $DAEMON_STATUS == 0 ]] || fail "extresd exited with status $DAEMON_STATUS after SIGTERM, wanted 0"
	((ms < 2500)) || fail "extresd took $ms ms to exit after SIGTERM during a reload"
	! is_mounted "$MNT" || fail "$MNT still mounted after SIGTERM"
	assert_contains "$(cat "$DAEMON_ERR")" "$WORK/extres.yaml:5:73: nested deeper than 64 levels" \
		"the daemon's stderr after the reload"
}

# The bomb is refused at start and at every reload, naming the alias;
# sharing within the limit is served; RSS stays under 64 MiB throughout.
case_alias_bomb() {
	it_setup
	local i out rc
	write_alias_config "$WORK/bomb.yaml" 1000
	daemon_run_fail -f -c "$WORK/bomb.yaml" "$MNT"
	assert_startup_error "$WORK/bomb.yaml:23:23: aliases add more than 1 MiB of text to the document (the alias *b adds 60000 bytes)"

	write_alias_config "$WORK/extres.yaml" 4
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq 1000 "$(find "$MNT/gpu" -mindepth 1 -maxdepth 1 | wc -l)" "devices served"
	assert_eq 60001 "$(stat -c %s "$MNT/gpu/3/blob")" "size of a shared value"
	assert_file "$MNT/gpu/4/blob" $'v4\n'
	assert_hwm_bounded "at start"

	write_alias_config "$WORK/extres.yaml.new" 1000
	mv -f "$WORK/extres.yaml.new" "$WORK/extres.yaml"
	for ((i = 1; i <= 16; i++)); do
		rc=0
		out=$("$EXTRESCTL" reload "$MNT" 2>&1) || rc=$?
		[[ $rc == 1 ]] || fail "reload $i of the bomb: extresctl exited with $rc, wanted 1: $out"
		assert_contains "$out" "aliases add more than 1 MiB of text" "reload $i of the bomb"
	done
	assert_file "$MNT/gpu/4/blob" $'v4\n'
	assert_hwm_bounded "after 16 reloads"
	sed -i '/reload failed/d' "$DAEMON_ERR"
	daemon_stop
}

it_main "$@"
