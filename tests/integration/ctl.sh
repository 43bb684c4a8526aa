# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# extresctl: help and usage errors, check and discover, `request` for
# Kubernetes and YARN, `status` on live, dead and foreign mounts, and
# `coord list|gc` on real coordination files with real owners (live, dead,
# reused, zombie, Flink's two-field lines, garbage), including a running
# extresd's lines.
#
# usage: ctl.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# run_ctl ARGS...: run extresctl; keep RUN_STATUS and its exact stdout and
# stderr (trailing newlines included) in CTL_OUT and CTL_ERR.
run_ctl() {
	RUN_STATUS=0
	timeout 10 "$EXTRESCTL" "$@" >"$WORK/ctl.out" 2>"$WORK/ctl.err" </dev/null || RUN_STATUS=$?
	[[ $RUN_STATUS != 124 ]] || fail "extresctl $* did not return within 10 s"
	CTL_OUT=$(file_bytes "$WORK/ctl.out"; printf x)
	CTL_OUT=${CTL_OUT%x}
	CTL_ERR=$(file_bytes "$WORK/ctl.err"; printf x)
	CTL_ERR=${CTL_ERR%x}
}

# expect_ctl STATUS STDOUT STDERR ARGS...: run extresctl ARGS and require
# exactly that status, stdout and stderr.
expect_ctl() {
	local status=$1 out=$2 err=$3
	shift 3
	run_ctl "$@"
	assert_eq "$status" "$RUN_STATUS" "exit status of extresctl $*"
	assert_eq "$out" "$CTL_OUT" "stdout of extresctl $*"
	assert_eq "$err" "$CTL_ERR" "stderr of extresctl $*"
}

# expect_usage ARGS...: a usage error (exit 2, nothing on stdout) whose
# message names $NEEDLE.
expect_usage() {
	run_ctl "$@"
	assert_eq 2 "$RUN_STATUS" "exit status of extresctl $*"
	assert_eq "" "$CTL_OUT" "stdout of extresctl $*"
	[[ $CTL_ERR == "extresctl: error: "* ]] || fail "extresctl $*: stderr does not start with 'extresctl: error: ': $CTL_ERR"
	assert_contains "$CTL_ERR" "$NEEDLE" "stderr of extresctl $*"
}

# table ROW...: rows with tab-separated cells, laid out as extresctl prints
# a table: each column as wide as its widest cell, two spaces between
# columns, the last column not padded.
table() {
	printf '%s\n' "$@" | awk -F '\t' '
		{
			n[NR] = NF
			for (i = 1; i <= NF; i++) {
				cell[NR, i] = $i
				if (i < NF && length($i) > w[i])
					w[i] = length($i)
			}
		}
		END {
			for (r = 1; r <= NR; r++) {
				line = ""
				for (i = 1; i < n[r]; i++)
					line = line sprintf("%-" w[i] "s  ", cell[r, i])
				print line cell[r, n[r]]
			}
		}'
}

HEADER=$'KEY\tPID\tSTARTTIME\tSTATE'

# The mtime (ns), inode and bytes of a file, to show that it was not written.
fingerprint() {
	stat -c '%Y.%y %i %s' -- "$1"
	od -An -c -- "$1"
}

# Back-date a file so that a write would show in its mtime.
backdate() {
	touch -h -d '2001-09-09 01:46:40' -- "$1"
}

case_help() {
	it_setup_nofuse
	local word
	run_ctl --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresctl --help"
	assert_eq "" "$CTL_ERR" "stderr of extresctl --help"
	[[ $CTL_OUT == "usage: extresctl [-c CONFIG] COMMAND [ARGS]"$'\n'* ]] ||
		fail "extresctl --help does not start with its usage line: $CTL_OUT"
	for word in check 'discover [NAME]' 'coord list FILE [--json]' \
		'coord gc FILE [--json] [--dry-run]' 'request --kubernetes [--json]' \
		'request --yarn' 'status [--json] [--timeout SECONDS] [MOUNTPOINT]' --config --help --version; do
		assert_contains "$CTL_OUT" "$word" "extresctl --help"
	done

	run_ctl coord --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresctl coord --help"
	assert_eq "" "$CTL_ERR" "stderr of extresctl coord --help"
	[[ $CTL_OUT == "usage: extresctl [-c CONFIG] coord list FILE [--json] [--timeout SECONDS]"$'\n'"       extresctl [-c CONFIG] coord gc FILE [--json] [--dry-run] [--timeout SECONDS]"$'\n'* ]] ||
		fail "extresctl coord --help does not start with its usage lines: $CTL_OUT"
	for word in live dead reused zombie unparsable --json --dry-run '"removed"' '"kept"'; do
		assert_contains "$CTL_OUT" "$word" "extresctl coord --help"
	done
	local coord_help=$CTL_OUT
	expect_ctl 0 "$coord_help" "" coord list --help
	expect_ctl 0 "$coord_help" "" coord gc x --help

	run_ctl check --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresctl check --help"
	[[ $CTL_OUT == "usage: extresctl [-c CONFIG] check"$'\n'* ]] ||
		fail "extresctl check --help: $CTL_OUT"
	run_ctl discover --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresctl discover --help"
	[[ $CTL_OUT == "usage: extresctl [-c CONFIG] discover [NAME]"$'\n'* ]] ||
		fail "extresctl discover --help: $CTL_OUT"
	run_ctl request --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresctl request --help"
	assert_eq "" "$CTL_ERR" "stderr of extresctl request --help"
	[[ $CTL_OUT == "usage: extresctl [-c CONFIG] request --kubernetes [--json]"$'\n'"       extresctl [-c CONFIG] request --yarn"$'\n'* ]] ||
		fail "extresctl request --help: $CTL_OUT"
	for word in kubernetes.config-key yarn.config-key limits requests 'yarn.io/gpu=2'; do
		assert_contains "$CTL_OUT" "$word" "extresctl request --help"
	done
	expect_ctl 0 "$CTL_OUT" "" request --yarn --help
	run_ctl status --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresctl status --help"
	assert_eq "" "$CTL_ERR" "stderr of extresctl status --help"
	[[ $CTL_OUT == "usage: extresctl status [--json] [--timeout SECONDS] [MOUNTPOINT]"$'\n'* ]] ||
		fail "extresctl status --help: $CTL_OUT"
	for word in /run/extres --json --timeout Hidden 'dead mount' 'not responding'; do
		assert_contains "$CTL_OUT" "$word" "extresctl status --help"
	done

	expect_ctl 0 "extresctl ${EXTRES_VERSION:?EXTRES_VERSION is not set}"$'\n' "" --version
}

# Usage errors exit 2, name the argument at fault, and touch nothing.
case_usage() {
	it_setup_nofuse
	local f=$WORK/coord NEEDLE
	NEEDLE="missing COMMAND" expect_usage
	NEEDLE="unknown command 'frob'" expect_usage frob
	NEEDLE="unknown option '--bogus'" expect_usage --bogus check
	NEEDLE="unknown option '-x'" expect_usage -x check
	NEEDLE="option '-c' needs an argument" expect_usage -c
	NEEDLE="check: unexpected argument 'extra'" expect_usage check extra
	NEEDLE="discover: unexpected argument 'b'" expect_usage discover a b
	NEEDLE="coord: missing command" expect_usage coord
	NEEDLE="coord: unknown command 'ls'" expect_usage coord ls "$f"
	NEEDLE="coord list: missing FILE" expect_usage coord list
	NEEDLE="coord list: missing FILE" expect_usage coord list --json
	NEEDLE="coord list: unexpected argument '$f.2'" expect_usage coord list "$f" "$f.2"
	NEEDLE="coord list: unknown option '--dry-run'" expect_usage coord list --dry-run "$f"
	NEEDLE="coord gc: unknown option '--force'" expect_usage coord gc --force "$f"
	NEEDLE="coord gc: unknown option '-n'" expect_usage coord gc -n "$f"
	NEEDLE="coord gc: option '--json=yes' takes no argument" expect_usage coord gc --json=yes "$f"
	NEEDLE="coord gc: FILE is an empty string" expect_usage coord gc ""
	NEEDLE="request: missing --kubernetes or --yarn" expect_usage request
	NEEDLE="request: missing --kubernetes or --yarn" expect_usage request --json
	NEEDLE="request: --kubernetes and --yarn exclude each other" expect_usage request --kubernetes --yarn
	NEEDLE="request: --json goes with --kubernetes only" expect_usage request --yarn --json
	NEEDLE="request: unexpected argument 'gpu'" expect_usage request --yarn gpu
	NEEDLE="request: unknown option '--k8s'" expect_usage request --k8s
	NEEDLE="request: option '--yarn=1' takes no argument" expect_usage request --yarn=1
	NEEDLE="status: unexpected argument '$f.2'" expect_usage status "$f" "$f.2"
	NEEDLE="status: unknown option '--all'" expect_usage status --all
	NEEDLE="status: MOUNTPOINT is an empty string" expect_usage status ""
	[[ ! -e $f && ! -e $f.2 ]] || fail "a usage error created a file"
}

# check and discover on the standard config.
case_check_discover() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_std_config "$cfg"
	expect_ctl 0 "$cfg: 2 resources
gpu: amount 2, driver static, coordination-file -, kubernetes -, yarn -
nic: amount 1, driver static, coordination-file -, kubernetes -, yarn -
gpu: coordination: none: no coordination-file, so other processes on this host may take the same devices
nic: coordination: none: no coordination-file, so other processes on this host may take the same devices
" "" -c "$cfg" check
	expect_ctl 0 "nic: driver static, 1 candidate, amount 1
  0: index=0 name=mlx5_0 link_layer=InfiniBand
" "" -c "$cfg" discover nic
	expect_ctl 1 "" "extresctl: error: no resource 'tpu' in $cfg
" -c "$cfg" discover tpu
}

# list: one row per line in file order, the state of each owner, Flink's
# two-field line live, garbage quoted; the same as JSON; the file unchanged.
case_coord_list() {
	it_setup_nofuse
	local f=$WORK/gpu.coord me=$$ st dead before
	st=$(proc_starttime "$me")
	dead=$(dead_pid)
	printf '%s\n' "0 $me $st" "1 $dead $st" "2 $me" 'not a "line"	at all' >"$f"
	backdate "$f"
	before=$(fingerprint "$f")

	expect_ctl 0 "$(table "$HEADER" \
		$'0\t'"$me"$'\t'"$st"$'\tlive' \
		$'1\t'"$dead"$'\t'"$st"$'\tdead' \
		$'2\t'"$me"$'\t-\tlive' \
		$'-\t-\t-\tunparsable "not a \\"line\\"\\tat all"')
" "" coord list "$f"

	expect_ctl 0 "[\
{\"key\": \"0\", \"pid\": $me, \"starttime\": $st, \"state\": \"live\", \"line\": \"0 $me $st\"}, \
{\"key\": \"1\", \"pid\": $dead, \"starttime\": $st, \"state\": \"dead\", \"line\": \"1 $dead $st\"}, \
{\"key\": \"2\", \"pid\": $me, \"starttime\": null, \"state\": \"live\", \"line\": \"2 $me\"}, \
{\"key\": null, \"pid\": null, \"starttime\": null, \"state\": \"unparsable\", \"line\": \"not a \\\"line\\\"\\tat all\"}]
" "" coord list --json "$f"

	assert_eq "$before" "$(fingerprint "$f")" "coordination file after list"

	: >"$f"
	expect_ctl 0 "$(table "$HEADER")
" "" coord list "$f"
	expect_ctl 0 $'[]\n' "" coord list "$f" --json
}

# The file gc starts from: one line for each owner state.
write_gc_file() {
	local f=$1 me=$$ st dead
	st=$(proc_starttime "$me")
	dead=$(dead_pid)
	make_zombie
	LIVE="0 $me $st"
	DEAD="1 $dead $st"
	REUSED="2 $me $((st + 1))"
	ZOMB="3 $ZOMBIE"
	FLINK="4 $me"
	GARBAGE=$'# not\tan entry'
	DEAD2="5 $dead"
	printf '%s\n' "$LIVE" "$DEAD" "$REUSED" "$ZOMB" "$FLINK" "$GARBAGE" "$DEAD2" >"$f"
	REMOVED_TABLE=$(table "$HEADER" \
		$'1\t'"$dead"$'\t'"$st"$'\tdead' \
		$'2\t'"$me"$'\t'"$((st + 1))"$'\treused' \
		$'3\t'"$ZOMBIE"$'\t-\tzombie' \
		$'5\t'"$dead"$'\t-\tdead')
	REMOVED_JSON="[\
{\"key\": \"1\", \"pid\": $dead, \"starttime\": $st, \"state\": \"dead\", \"line\": \"$DEAD\"}, \
{\"key\": \"2\", \"pid\": $me, \"starttime\": $((st + 1)), \"state\": \"reused\", \"line\": \"$REUSED\"}, \
{\"key\": \"3\", \"pid\": $ZOMBIE, \"starttime\": null, \"state\": \"zombie\", \"line\": \"$ZOMB\"}, \
{\"key\": \"5\", \"pid\": $dead, \"starttime\": null, \"state\": \"dead\", \"line\": \"$DEAD2\"}]"
}

# gc drops dead, reused and zombie owners; live, Flink and garbage lines stay
# byte for byte, in order, in the same inode.
case_coord_gc() {
	it_setup_nofuse
	local f=$WORK/gpu.coord ino
	write_gc_file "$f"
	ino=$(stat -c %i "$f")
	expect_ctl 0 "$REMOVED_TABLE
$f: removed 4 entries, kept 3
" "" coord gc "$f"
	assert_file "$f" "$LIVE
$FLINK
$GARBAGE
"
	assert_eq "$ino" "$(stat -c %i "$f")" "inode after gc"
	assert_eq "-rw-r--r--" "$(stat -c %A "$f")" "mode after gc"

	# Nothing left to remove: nothing is written.
	backdate "$f"
	local before
	before=$(fingerprint "$f")
	expect_ctl 0 "$f: removed 0 entries, kept 3
" "" coord gc "$f"
	expect_ctl 0 '{"removed": [], "kept": 3}
' "" coord gc --json "$f"
	assert_eq "$before" "$(fingerprint "$f")" "coordination file after gc with nothing to do"

	write_gc_file "$f"
	expect_ctl 0 "{\"removed\": $REMOVED_JSON, \"kept\": 3}
" "" coord gc "$f" --json
	assert_file "$f" "$LIVE
$FLINK
$GARBAGE
"
}

# --dry-run says the same and writes nothing.
case_coord_gc_dry_run() {
	it_setup_nofuse
	local f=$WORK/gpu.coord before
	write_gc_file "$f"
	backdate "$f"
	before=$(fingerprint "$f")
	expect_ctl 0 "$REMOVED_TABLE
$f: would remove 4 entries, keep 3 (dry run: nothing written)
" "" coord gc --dry-run "$f"
	expect_ctl 0 "{\"removed\": $REMOVED_JSON, \"kept\": 3}
" "" coord gc "$f" --json --dry-run
	assert_eq "$before" "$(fingerprint "$f")" "coordination file after gc --dry-run"
}

# A missing file is an error for list and gc alike, and is not created.
case_coord_list_missing() {
	it_setup_nofuse
	local f=$WORK/gpu.coord args
	for args in "list" "list --json" "gc" "gc --dry-run"; do
		# shellcheck disable=SC2086 # split on purpose
		expect_ctl 1 "" "extresctl: error: $f: No such file or directory
" coord $args "$f"
	done
	[[ ! -e $f ]] || fail "$f was created"
	expect_ctl 1 "" "extresctl: error: $WORK/no/gpu.coord: No such file or directory
" coord list "$WORK/no/gpu.coord"
	[[ ! -e $WORK/no ]] || fail "$WORK/no was created"
}

# A symbolic link is refused, never followed: its target keeps every line
# (dead ones too), and a dangling link does not create its target. A FIFO
# is refused without blocking.
case_coord_list_symlink() {
	it_setup_nofuse
	local f=$WORK/gpu.coord link=$WORK/link before args
	write_gc_file "$f"
	ln -s "$f" "$link"
	backdate "$f"
	before=$(fingerprint "$f")
	for args in "list" "list --json" "gc" "gc --dry-run"; do
		# shellcheck disable=SC2086 # split on purpose
		expect_ctl 1 "" "extresctl: error: $link is a symbolic link; refusing to use it as a coordination file
" coord $args "$link"
	done
	assert_eq "$before" "$(fingerprint "$f")" "symlink target after list and gc"

	ln -s "$WORK/nowhere" "$WORK/dangling"
	expect_ctl 1 "" "extresctl: error: $WORK/dangling is a symbolic link; refusing to use it as a coordination file
" coord gc "$WORK/dangling"
	[[ ! -e $WORK/nowhere ]] || fail "gc created the target of a dangling symlink"

	mkfifo "$WORK/fifo"
	expect_ctl 1 "" "extresctl: error: $WORK/fifo is a FIFO; refusing to use it as a coordination file
" coord list "$WORK/fifo"
}

# A running extresd's lines are live in list and survive gc, which removes
# only the dead line beside them; the daemon still serves and then releases
# its lines on a clean exit.
case_coord_daemon() {
	it_setup
	local f=$WORK/gpu.coord dst dead garbage='garbage kept as is'
	printf '%s\n' "$garbage" >"$f"
	write_std_config "$WORK/extres.yaml" "$f"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	dst=$(proc_starttime "$DAEMON_PID")
	dead=$(dead_pid)
	printf '%s\n' "2 $dead" >>"$f"
	expect_ctl 0 "$(table "$HEADER" \
		$'-\t-\t-\tunparsable "'"$garbage"'"' \
		$'0\t'"$DAEMON_PID"$'\t'"$dst"$'\tlive' \
		$'1\t'"$DAEMON_PID"$'\t'"$dst"$'\tlive' \
		$'2\t'"$dead"$'\t-\tdead')
" "" coord list "$f"
	expect_ctl 0 "$(table "$HEADER" $'2\t'"$dead"$'\t-\tdead')
$f: removed 1 entry, kept 3
" "" coord gc "$f"
	assert_file "$f" "$garbage
0 $DAEMON_PID$T$dst$(std_uuid 0)
1 $DAEMON_PID$T$dst$(std_uuid 1)
"
	assert_file "$MNT/gpu/1/index" $'1\n'
	daemon_stop
	assert_file "$f" "$garbage
"
}

# ---------------------------------------------------------------------------
# check

# A usable config: the listing on stdout, exit 0, warnings (with file:line:col)
# on stderr; the drivers are opened but nothing is discovered: the script of
# fpga does not run.
case_check() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	cat >"$cfg" <<-EOF
	external-resources: gpu;fpga
	external-resource.gpu.amount: 2
	external-resource.gpu.driver: static
	external-resource.gpu.param.indexes: 0,1,2
	external-resource.gpu.coordination-file: gpu.coord
	external-resource.gpu.kubernetes.config-key: nvidia.com/gpu
	external-resource.gpu.yarn.config-key: yarn.io/gpu
	external-resource.gpu.amout: 3
	external-resource.fpga.amount: 1
	external-resource.fpga.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory
	external-resource.fpga.param.discovery-script.path: $SRCDIR/tests/integration/scripts/flink.sh
	external-resource.fpga.param.discovery-script.args: --indexes 3 --record $WORK/fpga.args
	EOF
	expect_ctl 0 "$cfg: 2 resources
gpu: amount 2, driver static, coordination-file $WORK/gpu.coord, kubernetes nvidia.com/gpu, yarn yarn.io/gpu
fpga: amount 1, driver script, coordination-file -, kubernetes -, yarn -
gpu: coordination: extresd records its devices in $WORK/gpu.coord
fpga: coordination: none: no coordination-file, so other processes on this host may take the same devices
" "extresctl: warning: $cfg:8:1: unknown key 'external-resource.gpu.amout' (ignored); did you mean external-resource.gpu.amount?
" -c "$cfg" check
	[[ ! -e $WORK/fpga.args ]] || fail "check ran the discovery script"
	[[ ! -e $WORK/gpu.coord ]] || fail "check created the coordination file"
}

# Unusable configs exit 1 with the error naming the file and position where
# there is one: YAML syntax, a key's value, a driver's param (every driver
# is tried, each failure named), a driver that does not exist, no file.
case_check_errors() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	printf '%s\n' 'external-resources: gpu' 'external-resource.gpu.amount: [1' >"$cfg"
	run_ctl -c "$cfg" check
	assert_eq 1 "$RUN_STATUS" "exit status of check on a syntax error"
	assert_eq "" "$CTL_OUT" "stdout of check on a syntax error"
	[[ $CTL_ERR == "extresctl: error: $cfg:"[0-9]*:[0-9]*": "* ]] ||
		fail "check on a syntax error does not name file:line:col: $CTL_ERR"

	printf '%s\n' 'external-resources: gpu' 'external-resource.gpu.amount: 0' \
		'external-resource.gpu.driver: static' >"$cfg"
	run_ctl -c "$cfg" check
	assert_eq 1 "$RUN_STATUS" "exit status of check with amount 0"
	assert_eq "" "$CTL_OUT" "stdout of check with amount 0"
	[[ $CTL_ERR == "extresctl: error: $cfg:2:"[0-9]*": "*amount* ]] ||
		fail "check with amount 0 does not name file:2:col and the key: $CTL_ERR"

	cat >"$cfg" <<-EOF
	external-resources: gpu;fpga;nic;ok
	external-resource.gpu.amount: 1
	external-resource.gpu.driver: static
	external-resource.gpu.param.devices:
	  - index: "0"
	  - oops
	external-resource.fpga.amount: 1
	external-resource.fpga.driver: script
	external-resource.fpga.param.discovery-script.path: $WORK/missing.sh
	external-resource.nic.amount: 1
	external-resource.nic.driver: nosuch
	external-resource.ok.amount: 1
	external-resource.ok.driver: static
	external-resource.ok.param.indexes: 0
	EOF
	run_ctl -c "$cfg" check
	assert_eq 1 "$RUN_STATUS" "exit status of check with bad drivers"
	assert_eq "$cfg: 4 resources
gpu: amount 1, driver static, coordination-file -, kubernetes -, yarn -
fpga: amount 1, driver script, coordination-file -, kubernetes -, yarn -
nic: amount 1, driver nosuch, coordination-file -, kubernetes -, yarn -
ok: amount 1, driver static, coordination-file -, kubernetes -, yarn -
gpu: coordination: none: no coordination-file, so other processes on this host may take the same devices
fpga: coordination: none: no coordination-file, so other processes on this host may take the same devices
nic: coordination: none: no coordination-file, so other processes on this host may take the same devices
ok: coordination: none: no coordination-file, so other processes on this host may take the same devices
" "$CTL_OUT" "stdout of check with bad drivers"
	local want="extresctl: error: resource 'gpu': driver 'static': $cfg:6:5: param.devices[1] must be a mapping of property: value
extresctl: error: resource 'fpga': driver 'script': discovery script $WORK/missing.sh: No such file or directory
extresctl: error: resource 'nic': driver 'nosuch' not found; drivers found: "
	[[ $CTL_ERR == "$want"*$'\n' ]] ||
		fail "stderr of check with bad drivers: wanted
$want...
got
$CTL_ERR"
	assert_eq 3 "$(grep -c '^extresctl: error: ' <<<"$CTL_ERR")" "errors of check with bad drivers"

	expect_ctl 1 "" "extresctl: error: $WORK/none.yaml: No such file or directory
" -c "$WORK/none.yaml" check
}

# ---------------------------------------------------------------------------
# request

# gpu and gpu-extra share a Kubernetes name (amounts add up); fpga uses the
# older .kubernetes.key / .yarn.key; nic has no name for either.
write_request_config() {
	cat >"$1" <<-'EOF'
	external-resources: gpu;fpga;nic;gpu-extra
	external-resource:
	  gpu:
	    amount: 2
	    driver: static
	    param.indexes: 0,1,2
	    kubernetes.config-key: nvidia.com/gpu
	    yarn.config-key: yarn.io/gpu
	  fpga:
	    amount: 1
	    driver: static
	    param.indexes: 0
	    kubernetes.key: xilinx.com/fpga-xilinx_u250
	    yarn.key: yarn.io/fpga
	  nic:
	    amount: 1
	    driver: static
	    param.indexes: 0
	  gpu-extra:
	    amount: 1
	    driver: static
	    param.indexes: 3
	    kubernetes.config-key: nvidia.com/gpu
	EOF
}

case_request_kubernetes() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_request_config "$cfg"
	expect_ctl 0 "resources:
  limits:
    nvidia.com/gpu: 3
    xilinx.com/fpga-xilinx_u250: 1
  requests:
    nvidia.com/gpu: 3
    xilinx.com/fpga-xilinx_u250: 1
" "extresctl: note: resource 'nic' skipped: external-resource.nic.kubernetes.config-key is not set
" -c "$cfg" request --kubernetes
}

case_request_kubernetes_json() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_request_config "$cfg"
	expect_ctl 0 '{"resources": {"limits": {"nvidia.com/gpu": 3, "xilinx.com/fpga-xilinx_u250": 1}, "requests": {"nvidia.com/gpu": 3, "xilinx.com/fpga-xilinx_u250": 1}}}
' "extresctl: note: resource 'nic' skipped: external-resource.nic.kubernetes.config-key is not set
" -c "$cfg" request --json --kubernetes
}

case_request_yarn() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_request_config "$cfg"
	expect_ctl 0 'yarn.io/gpu=2
yarn.io/fpga=1
' "extresctl: note: resource 'nic' skipped: external-resource.nic.yarn.config-key is not set
extresctl: note: resource 'gpu-extra' skipped: external-resource.gpu-extra.yarn.config-key is not set
" -c "$cfg" request --yarn
}

# No resource with a name for the scheduler: exit 1 and nothing on stdout;
# a name that YAML would read as a boolean is quoted; a name that cannot be
# one (a space, '=') is an error naming resource and name.
case_request_skip() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_std_config "$cfg"
	expect_ctl 1 "" "extresctl: note: resource 'gpu' skipped: external-resource.gpu.kubernetes.config-key is not set
extresctl: note: resource 'nic' skipped: external-resource.nic.kubernetes.config-key is not set
extresctl: error: $cfg: no resource has a kubernetes.config-key (set external-resource.<name>.kubernetes.config-key)
" -c "$cfg" request --kubernetes
	expect_ctl 1 "" "extresctl: note: resource 'gpu' skipped: external-resource.gpu.yarn.config-key is not set
extresctl: note: resource 'nic' skipped: external-resource.nic.yarn.config-key is not set
extresctl: error: $cfg: no resource has a yarn.config-key (set external-resource.<name>.yarn.config-key)
" -c "$cfg" request --yarn

	printf '%s\n' 'external-resource.gpu.kubernetes.config-key: "yes"' \
		'external-resource.nic.kubernetes.config-key: "1"' >>"$cfg"
	expect_ctl 0 'resources:
  limits:
    "yes": 2
    "1": 1
  requests:
    "yes": 2
    "1": 1
' "" -c "$cfg" request --kubernetes

	write_std_config "$cfg"
	printf '%s\n' 'external-resource.nic.yarn.config-key: yarn.io/gpu=1' >>"$cfg"
	expect_ctl 1 "" "extresctl: note: resource 'gpu' skipped: external-resource.gpu.yarn.config-key is not set
extresctl: error: $cfg: resource 'nic': yarn.config-key 'yarn.io/gpu=1' is not a resource name (visible ASCII characters other than '=')
" -c "$cfg" request --yarn
	expect_ctl 1 "" "extresctl: error: $WORK/none.yaml: No such file or directory
" -c "$WORK/none.yaml" request --yarn
}

# ---------------------------------------------------------------------------
# status

STD_STATUS='gpu: 2 infos
  0: index=0 uuid=GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000000 name=Test GPU memory.total=16384 MiB
  1: index=1 uuid=GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001 name=Test GPU memory.total=32768 MiB
nic: 1 info
  0: index=0 name=mlx5_0 link_layer=InfiniBand
'
STD_STATUS_JSON='{"resources": {"gpu": {"driver": "static", "amount": 2, "infos": [{"index": "0", "uuid": "GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000000", "name": "Test GPU", "memory.total": "16384 MiB"}, {"index": "1", "uuid": "GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001", "name": "Test GPU", "memory.total": "32768 MiB"}]}, "nic": {"driver": "static", "amount": 1, "infos": [{"index": "0", "name": "mlx5_0", "link_layer": "InfiniBand"}]}}, "holders": []}
'

# What the live daemon serves, in its order, through a relative path too;
# hidden names the daemon shows are not part of it.
case_status() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	# Last, how requests come: what this kernel allows.
	local transport
	transport="transport: $(status_field transport)
"
	expect_ctl 0 "$MNT: 2 resources
$STD_STATUS$transport" "" status "$MNT"
	(cd "$WORK" && expect_ctl 0 "$MNT: 2 resources
$STD_STATUS$transport" "" status mnt/)
	daemon_stop
}

case_status_json() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	expect_ctl 0 "$STD_STATUS_JSON" "" status --json "$MNT"
	expect_ctl 0 "$STD_STATUS_JSON" "" status "$MNT" --json
	# One shape: the daemon's own document, byte for byte.
	assert_file "$MNT/.meta/extres.json" "$STD_STATUS_JSON"
	daemon_stop
}

# Anything but an extresd mount: exit 1, nothing on stdout, the reason.
case_status_not_extresd() {
	it_setup_nofuse
	mkdir "$WORK/plain"
	: >"$WORK/file"
	expect_ctl 1 "" "extresctl: error: $WORK/plain is not a mount point: no extresd serves it
" status "$WORK/plain"
	expect_ctl 1 "" "extresctl: error: $WORK/file is not a mount point: no extresd serves it
" status "$WORK/file"
	expect_ctl 1 "" "extresctl: error: $WORK/none does not exist: no extresd serves it
" status --json "$WORK/none"
	expect_ctl 1 "" "extresctl: error: /proc is a proc mount, not an extresd one (fuse.extresd)
" status /proc
}

# A daemon that died leaves a dead mount: status says so and exits 1.
case_status_dead() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	expect_ctl 0 "$MNT: 2 resources
${STD_STATUS}transport: $(status_field transport)
" "" status "$MNT"
	kill -KILL "$DAEMON_PID"
	daemon_reap
	is_our_mount "$MNT" || fail "the dead mount went away by itself"
	local err="extresctl: error: $MNT: the extresd mount is dead (Transport endpoint is not connected): its daemon is gone; the next extresd started on it detaches it, or run 'fusermount3 -u $MNT'
"
	expect_ctl 1 "" "$err" status "$MNT"
	expect_ctl 1 "" "$err" status --json "$MNT"
	fusermount3 -u "$MNT" || fail "cannot unmount the dead mount"
	expect_ctl 1 "" "extresctl: error: $MNT is not a mount point: no extresd serves it
" status "$MNT"
}

# ---------------------------------------------------------------------------
# discover --json

# gpu: two static devices whose properties need escaping (a quote, a
# backslash, a non-ASCII name); fpga: Flink's discovery script, asked for 2
# of --indexes 3,5,7, recording its arguments in $WORK/fpga.args. More
# lines (another resource) may follow in "$2".
write_discover_config() {
	cat >"$1" <<-EOF
	external-resources: gpu;fpga${3:-}
	external-resource.gpu.amount: 2
	external-resource.gpu.driver: static
	external-resource.gpu.param.devices:
	  - index: "0"
	    uuid: GPU-aaaa
	    name: 'Test "GPU" \\ 1'
	    memory.total: 16384 MiB
	  - index: "1"
	    uuid: GPU-bbbb
	    name: "Carte graphique \u00e9"
	    memory.total: 32768 MiB
	external-resource.fpga.amount: 2
	external-resource.fpga.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory
	external-resource.fpga.param.discovery-script.path: $SRCDIR/tests/integration/scripts/flink.sh
	external-resource.fpga.param.discovery-script.args: --indexes 3,5,7 --record $WORK/fpga.args
	EOF
	printf '%s' "${2:-}" >>"$1"
}

GPU_JSON='"gpu": {"driver": "static", "amount": 2, "candidates": [{"index": "0", "uuid": "GPU-aaaa", "name": "Test \"GPU\" \\ 1", "memory.total": "16384 MiB"}, {"index": "1", "uuid": "GPU-bbbb", "name": "Carte graphique '$'\xc3\xa9''", "memory.total": "32768 MiB"}]}'
FPGA_JSON='"fpga": {"driver": "script", "amount": 2, "candidates": [{"index": "3"}, {"index": "5"}]}'

# Every resource in one document, in config order, properties in driver
# order; the script got the amount first, then its args.
case_discover_json() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_discover_config "$cfg"
	expect_ctl 0 "{\"resources\": {$GPU_JSON, $FPGA_JSON}}
" "" -c "$cfg" discover --json
	assert_file "$WORK/fpga.args" "2
--indexes
3,5,7
--record
$WORK/fpga.args
"
	# The text form of the same, unchanged.
	expect_ctl 0 'gpu: driver static, 2 candidates, amount 2
  0: index=0 uuid=GPU-aaaa name=Test "GPU" \ 1 memory.total=16384 MiB
  1: index=1 uuid=GPU-bbbb name=Carte graphique '$'\xc3\xa9'' memory.total=32768 MiB
fpga: driver script, 2 candidates, amount 2
  0: index=3
  1: index=5
' "" -c "$cfg" discover
}

# NAME selects one resource, before or after --json; the other's driver
# does not run.
case_discover_json_select() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_discover_config "$cfg"
	expect_ctl 0 "{\"resources\": {$GPU_JSON}}
" "" -c "$cfg" discover --json gpu
	[[ ! -e $WORK/fpga.args ]] || fail "discover gpu ran the fpga script"
	expect_ctl 0 "{\"resources\": {$FPGA_JSON}}
" "" -c "$cfg" discover fpga --json
}

# A script in Spark's format names every address, whatever the amount: all
# are candidates.
case_discover_json_script() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	cat >"$cfg" <<-EOF
	external-resources: gpu
	external-resource.gpu.amount: 1
	external-resource.gpu.driver: script
	external-resource.gpu.param.discovery-script.path: $SRCDIR/tests/integration/scripts/spark.sh
	EOF
	expect_ctl 0 '{"resources": {"gpu": {"driver": "script", "amount": 1, "candidates": [{"index": "3"}, {"index": "5"}, {"index": "7"}]}}}
' "" -c "$cfg" discover --json
}

# All or nothing: one failing driver prints nothing on stdout, its error on
# stderr, exit 1, though the other resources were found; the text form
# still lists those.
case_discover_json_fail() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml script=$SRCDIR/tests/integration/scripts/fail.sh err
	write_discover_config "$cfg" "external-resource.bad.amount: 1
external-resource.bad.driver: script
external-resource.bad.param.discovery-script.path: $script
" ";bad"
	err="extresctl: error: resource 'bad': driver 'script': discovery script $script exited with status 1: fail.sh: no FPGA found on this host (marker 7f3a)
"
	expect_ctl 1 "" "$err" -c "$cfg" discover --json
	expect_ctl 1 "" "$err" -c "$cfg" discover --json bad
	run_ctl -c "$cfg" discover
	assert_eq 1 "$RUN_STATUS" "exit status of extresctl discover"
	assert_eq "$err" "$CTL_ERR" "stderr of extresctl discover"
	assert_contains "$CTL_OUT" "fpga: driver script, 2 candidates, amount 2" "stdout of extresctl discover"
	expect_ctl 0 "{\"resources\": {$GPU_JSON}}
" "" -c "$cfg" discover --json gpu
}

# An unknown resource name: exit 1, the name and the config in the error,
# nothing on stdout.
case_discover_json_unknown() {
	it_setup_nofuse
	local cfg=$WORK/extres.yaml
	write_discover_config "$cfg"
	expect_ctl 1 "" "extresctl: error: no resource 'tpu' in $cfg
" -c "$cfg" discover --json tpu
	[[ ! -e $WORK/fpga.args ]] || fail "discover tpu ran the fpga script"
}

# --json in the help; its usage errors.
case_discover_json_usage() {
	it_setup_nofuse
	local NEEDLE word
	run_ctl discover --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresctl discover --help"
	[[ $CTL_OUT == "usage: extresctl [-c CONFIG] discover [NAME]"$'\n'"       extresctl [-c CONFIG] discover --json [NAME]"$'\n'* ]] ||
		fail "extresctl discover --help: $CTL_OUT"
	for word in '"driver"' '"amount"' '"candidates"' 'All or nothing'; do
		assert_contains "$CTL_OUT" "$word" "extresctl discover --help"
	done
	run_ctl --help
	assert_contains "$CTL_OUT" 'discover [NAME] [--json]' "extresctl --help"
	NEEDLE="discover: option '--json=yes' takes no argument" expect_usage discover --json=yes
	NEEDLE="discover: unknown option '--jsn'" expect_usage discover --jsn
	NEEDLE="discover: unexpected argument 'b'" expect_usage discover --json a b
}

# The verbs on a running extresd share one tail, [--timeout S] [MOUNTPOINT],
# parsed once: each answers its usage errors the same way, reload and top
# included.
case_mount_tail() {
	it_setup_nofuse
	local NEEDLE verb max
	for verb in status reload leases cdi top; do
		max=86400
		[[ $verb == top ]] && max=3600
		run_ctl "$verb" --help
		assert_eq 0 "$RUN_STATUS" "exit status of extresctl $verb --help"
		assert_eq "" "$CTL_ERR" "stderr of extresctl $verb --help"
		[[ $CTL_OUT == "usage: extresctl $verb "* && $CTL_OUT == *"--timeout SECONDS"* ]] ||
			fail "extresctl $verb --help: $CTL_OUT"
		NEEDLE="$verb: MOUNTPOINT is an empty string" expect_usage "$verb" ""
		NEEDLE="$verb: unexpected argument 'b'" expect_usage "$verb" a b
		NEEDLE="$verb: --timeout '0' is not a number of seconds from 1 to $max" expect_usage "$verb" --timeout 0 a
		NEEDLE="$verb: --timeout '$((max + 1))' is not a number of seconds from 1 to $max" expect_usage "$verb" a --timeout=$((max + 1))
		NEEDLE="$verb: option '--timeout' needs an argument" expect_usage "$verb" --timeout
		NEEDLE="$verb: unknown option '--bogus'" expect_usage "$verb" --bogus
	done
}

it_main "$@"
