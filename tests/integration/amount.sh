# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# external-resource.<name>.amount as `all` and as a range N-M, through real
# daemons on the static driver: what is taken with 3 and 8 devices, with
# devices held by others in the coordination file, across a reload, and
# what `extresctl request` prints for them.
#
# usage: amount.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# write_config AMOUNT N: resource gpu with AMOUNT and N static devices
# (indexes 0..N-1) through $WORK/gpu.coord, with Kubernetes and YARN
# names. Replaced atomically, so that a reload never reads half a file.
write_config() {
	local amount=$1 n=$2 i
	{
		printf '%s\n' 'external-resources: gpu' \
			"external-resource.gpu.amount: $amount" \
			'external-resource.gpu.driver: static' \
			"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
			'external-resource.gpu.kubernetes.config-key: nvidia.com/gpu' \
			'external-resource.gpu.yarn.config-key: yarn.io/gpu' \
			'external-resource.gpu.param.devices:'
		for ((i = 0; i < n; i++)); do
			printf '  - {index: "%s", uuid: "GPU-%s"}\n' "$i" "$i"
		done
	} >"$WORK/extres.yaml.new"
	mv -f "$WORK/extres.yaml.new" "$WORK/extres.yaml"
}

# The daemon's own coordination lines for INDEX...
own_lines() {
	local st i
	st=$(proc_starttime "$DAEMON_PID")
	for i in "$@"; do
		printf '%s %s%s%s%suuid=GPU-%s\n' "$i" "$DAEMON_PID" "$T" "$st" "$T" "$i"
	done
}

# expect_taken AMOUNT-FORM INDEX...: the mount serves exactly these devices,
# in order, the coordination file records them for the daemon after
# `foreign` lines, and .meta/extres.json says how many, and the form.
expect_taken() {
	local form=$1 foreign=$2 want=() i n
	shift 2
	n=$#
	for ((i = 0; i < n; i++)); do
		want+=("$i")
	done
	assert_eq "${want[*]}" "$(cd "$MNT/gpu" && echo *)" "ls $MNT/gpu"
	assert_eq "$*" "$(cat "$MNT"/gpu/*/index | tr '\n' ' ' | sed 's/ $//')" "indexes served"
	assert_eq "$foreign$(own_lines "$@")" "$(coord_lines "$WORK/gpu.coord")" "coordination file"
	assert_contains "$(cat "$MNT/.meta/extres.json")" "\"amount\": $n, \"amount-form\": \"$form\"," ".meta/extres.json"
	assert_contains "$(cat "$MNT/.meta/env")" "export EXTRES_GPU_INDEXES='$(IFS=,; echo "$*")'" ".meta/env"
}

# foreign_lines INDEX...: Flink-style `INDEX PID` lines for this (live)
# shell, as Flink's discovery script writes them.
foreign_lines() {
	local i
	for i in "$@"; do
		printf '%s %s\n' "$i" "$$"
	done
}

# `all` takes every device, 3 and 8 of them.
case_all_3() {
	it_setup
	write_config all 3
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	expect_taken all "" 0 1 2
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after a clean exit"
}

case_all_8() {
	it_setup
	write_config all 8
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	expect_taken all "" 0 1 2 3 4 5 6 7
	daemon_stop
}

# `all` with every device held by others: a start-up error saying so, the
# file left as it was. (The drivers refuse to find no device at all.)
case_all_none() {
	it_setup
	local foreign
	foreign=$(foreign_lines 0 1 2)
	printf '%s\n' "$foreign" >"$WORK/gpu.coord"
	write_config all 3
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': wanted at least 1 (amount all), found 0 free of 3 (coordination file $WORK/gpu.coord)"
	assert_eq "$foreign" "$(coord_lines "$WORK/gpu.coord")" "coordination file after the failed start"
}

# A discovery script is asked for the most the amount may take: 4096 for
# `all`, M for N-M (Flink's script prints at most its first argument).
case_script_asked() {
	it_setup
	local amount
	cat >"$WORK/discover.sh" <<-'EOF'
	#!/bin/sh
	echo "$1" >"${0%/*}/asked"
	echo 0,1,2,3,4,5
	EOF
	chmod 755 "$WORK/discover.sh"
	for amount in all 2-4 3; do
		printf '%s\n' 'external-resources: gpu' \
			"external-resource.gpu.amount: $amount" \
			'external-resource.gpu.driver: script' \
			"external-resource.gpu.param.discovery-script.path: $WORK/discover.sh" >"$WORK/extres.yaml"
		daemon_start -c "$WORK/extres.yaml" "$MNT"
		case $amount in
		all)
			assert_file "$WORK/asked" $'4096\n'
			assert_eq "0 1 2 3 4 5" "$(cd "$MNT/gpu" && echo *)" "ls gpu with $amount" ;;
		2-4)
			assert_file "$WORK/asked" $'4\n'
			assert_eq "0 1 2 3" "$(cd "$MNT/gpu" && echo *)" "ls gpu with $amount" ;;
		3)
			assert_file "$WORK/asked" $'3\n'
			assert_eq "0 1 2" "$(cd "$MNT/gpu" && echo *)" "ls gpu with $amount" ;;
		esac
		daemon_stop
	done
}

# 2-4 with 8 devices free takes 4.
case_range_free() {
	it_setup
	write_config 2-4 8
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	expect_taken 2-4 "" 0 1 2 3
	daemon_stop
}

# 2-4 with 5 of 8 held by a live Flink-style owner takes the 3 left; `2-`
# would too.
case_range_held() {
	it_setup
	local foreign
	foreign=$(foreign_lines 0 2 4 5 7)
	printf '%s\n' "$foreign" >"$WORK/gpu.coord"
	write_config 2-4 8
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	expect_taken 2-4 "$foreign
" 1 3 6
	daemon_stop
	assert_eq "$foreign" "$(coord_lines "$WORK/gpu.coord")" "coordination file after a clean exit"
}

# 2-4 with 7 of 8 held by a second extresd: a start-up error naming the
# resource, the range and what was free; the file left as it was.
case_range_too_few() {
	it_setup
	local before mnt2=$WORK/mnt2 first_err=$DAEMON_ERR
	write_config 7 8
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	before=$(coord_lines "$WORK/gpu.coord")
	assert_eq 7 "$(wc -l <<<"$before")" "lines of the first daemon"
	write_config 2-4 8
	mkdir "$mnt2"
	local saved=$MNT
	MNT=$mnt2
	daemon_run_fail -f -c "$WORK/extres.yaml" "$mnt2"
	assert_startup_error "resource 'gpu': wanted at least 2 (amount 2-4), found 1 free of 8 (coordination file $WORK/gpu.coord)"
	MNT=$saved
	assert_eq "$before" "$(coord_lines "$WORK/gpu.coord")" "coordination file after the failed start"
	DAEMON_ERR=$first_err
	daemon_stop
}

# A reload follows the device count for `all`: more devices are taken, a
# device gone is dropped, and those still there stay held (same numbers,
# same lines); a reload that finds fewer than the minimum fails and keeps
# what is held.
case_reload() {
	it_setup
	local out
	write_config all 3
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	expect_taken all "" 0 1 2
	write_config all 5
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload: $out"
	expect_taken all "" 0 1 2 3 4
	write_config all 2
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload: $out"
	expect_taken all "" 0 1
	write_config 3-4 2
	local rc=0
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || rc=$?
	assert_eq 1 "$rc" "exit status of a reload that finds too few"
	assert_contains "$out" "resource 'gpu': wanted at least 3 (amount 3-4), found 2 free of 2" "extresctl reload stderr"
	expect_taken all "" 0 1
	# The failed reload's error is in the log.
	daemon_stop_quiet
}

# daemon_stop, allowing only the failed reload's lines in stderr.
daemon_stop_quiet() {
	kill -TERM "$DAEMON_PID" || fail "cannot send SIGTERM to extresd ($DAEMON_PID)"
	daemon_reap
	assert_eq 0 "$DAEMON_STATUS" "exit status of extresd after SIGTERM"
	! is_mounted "$MNT" || fail "$MNT still mounted after SIGTERM"
	local bad
	bad=$(grep -i error "$DAEMON_ERR" | grep -v "wanted at least 3 (amount 3-4)" || true)
	[[ -z $bad ]] || fail "unexpected error in daemon stderr: $bad"
}

# ctl_request ARGS...: run extresctl -c $WORK/extres.yaml request ARGS...;
# sets RC, OUT and ERR.
ctl_request() {
	RC=0
	timeout 10 "$EXTRESCTL" -c "$WORK/extres.yaml" request "$@" \
		>"$WORK/ctl.out" 2>"$WORK/ctl.err" </dev/null || RC=$?
	[[ $RC != 124 ]] || fail "extresctl request $* did not return within 10 s"
	OUT=$(cat "$WORK/ctl.out")
	ERR=$(cat "$WORK/ctl.err")
}

# A range asks Kubernetes and YARN for its minimum, with a note; `all` has
# no count to ask for and is refused, naming the resource and the form.
case_request() {
	it_setup_nofuse
	write_config 2-4 8
	ctl_request --kubernetes
	assert_eq 0 "$RC" "exit status of request --kubernetes for 2-4"
	assert_eq "resources:
  limits:
    nvidia.com/gpu: 2
  requests:
    nvidia.com/gpu: 2" "$OUT" "request --kubernetes for 2-4"
	assert_eq "extresctl: note: resource 'gpu': amount '2-4' is a range; requesting its minimum, 2, since a pod asks for an exact number of devices" \
		"$ERR" "stderr of request --kubernetes for 2-4"
	ctl_request --yarn
	assert_eq 0 "$RC" "exit status of request --yarn for 2-4"
	assert_eq "yarn.io/gpu=2" "$OUT" "request --yarn for 2-4"
	write_config 3- 8
	ctl_request --kubernetes --json
	assert_eq 0 "$RC" "exit status of request --kubernetes --json for 3-"
	assert_eq '{"resources": {"limits": {"nvidia.com/gpu": 3}, "requests": {"nvidia.com/gpu": 3}}}' \
		"$OUT" "request --kubernetes --json for 3-"
	write_config all 8
	ctl_request --kubernetes
	assert_eq 1 "$RC" "exit status of request --kubernetes for all"
	assert_eq "" "$OUT" "stdout of request --kubernetes for all"
	assert_eq "extresctl: error: $WORK/extres.yaml: resource 'gpu': amount 'all' cannot be requested from Kubernetes: a pod asks for an exact number of devices, and 'all' is whatever the node has; set external-resource.gpu.amount to a number, or a range N-M to request its minimum" \
		"$ERR" "stderr of request --kubernetes for all"
	ctl_request --yarn
	assert_eq 1 "$RC" "exit status of request --yarn for all"
	assert_eq "" "$OUT" "stdout of request --yarn for all"
	assert_contains "$ERR" "resource 'gpu': amount 'all' cannot be requested from YARN: a container asks" "stderr of request --yarn for all"
}

it_main "$@"
