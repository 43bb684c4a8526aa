#!/bin/bash
# SPDX-License-Identifier: MIT
#
# What the cases of extresctl run (lease.sh, shared.sh) share; sourced after
# lib.sh. Cases set WORK's extres.yaml and COORD.

# extresctl run with the case's config; SIGINT and SIGQUIT as a shell in
# the foreground would leave them (bash ignores them in background jobs).
run() {
	env --default-signal=INT,QUIT "$EXTRESCTL" -c "$WORK/extres.yaml" run "$@"
}

# The same in the background, as `run_bg ARGS... &`: the job's PID ($!) is
# extresctl's own, not a subshell's, so that signals reach it.
run_bg() {
	# HUP too: under nohup it comes ignored, and a shell cannot trap a
	# signal ignored on entry (POSIX), so the command would never end.
	exec env --default-signal=INT,QUIT,HUP "$EXTRESCTL" -c "$WORK/extres.yaml" run "$@"
}

# Lines of FILE (0 when missing).
nlines() {
	[[ -e $1 ]] || { echo 0; return; }
	grep -c . "$1" || true
}

lines_are() { [[ $(nlines "$1") == "$2" ]]; }

# A blocker: a lease of N devices whose command runs until $WORK/go.
start_blocker() {
	run_bg "gpu=$1" -- sh -c "while [ ! -e '$WORK/go' ]; do sleep 0.01; done" \
		2>>"$WORK/blocker.err" &
	BLOCKER=$!
	wait_until 10 "the blocker's $1 lines" lines_are "$COORD" "$1"
}

