#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The shared-group layout of extresctl(8) (EXAMPLES): root's coordination file and queue,
# mode 0660, in a group of users. Root is in no such group: it trusts the
# one extres.coordination-group names; members trust their own groups;
# nobody else can open the files, so nobody else can hold their locks.
# Each case makes its own group (groupadd) and removes it at the end; the
# users are uids without a passwd entry (setpriv).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

NOBODY=65534
GROUP=
GID=

# group_setup: root, setpriv and groupadd; a fresh group GROUP (gid GID),
# removed on exit; $WORK reachable by every user; the layout under
# $WORK/shared made as extresctl(8) says, with config $WORK/extres.yaml (root's,
# 0644) naming it. Call first.
group_setup() {
	it_setup_nofuse
	[[ $(id -u) == 0 ]] || fail "this case needs root (groupadd, setpriv)"
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
	command -v groupadd >/dev/null || {
		echo "SKIP: $IT_CASE: groupadd is missing"
		exit 77
	}
	GROUP=extres-it-$$
	groupadd "$GROUP" || fail "groupadd $GROUP failed"
	trap 'rc=$?; groupdel "$GROUP" 2>/dev/null; it_cleanup "$rc"' EXIT
	GID=$(getent group "$GROUP" | cut -d: -f3)
	[[ -n $GID ]] || fail "no gid for $GROUP"
	chmod 0755 "$WORK"
	install -d -m 0755 -o root -g root "$WORK/shared"
	COORD=$WORK/shared/gpu
	QUEUE=$COORD.queue
	install -m 0660 -o root -g "$GROUP" /dev/null "$COORD"
	install -m 0660 -o root -g "$GROUP" /dev/null "$QUEUE"
	group_config
}

# group_config [EXTRA...]: the config, EXTRA lines appended.
group_config() {
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.amount: 1' \
			'external-resource.gpu.driver: static' \
			'external-resource.gpu.param.indexes: 0,1' \
			"external-resource.gpu.coordination-file: $COORD"
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
	chmod 0644 "$WORK/extres.yaml"
}

ctl() {
	"$EXTRESCTL" -c "$WORK/extres.yaml" "$@"
}

member() {
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --groups="$GID" -- "$@"
}

outsider() {
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- "$@"
}

# Root on that layout: refused without the setting (with a hint at
# it), then run, coord list and coord gc --drop-unparsable all work.
case_root() {
	group_setup
	local rc out
	printf 'garbage\n' >"$COORD"
	rc=0
	ctl run gpu -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "root's run without extres.coordination-group"
	assert_contains "$(cat "$RUN_ERR")" "it is group-writable (mode 0660); if members of group $GROUP may write coordination files, set extres.coordination-group: $GROUP" "the refusal"
	rc=0
	ctl coord list "$COORD" >/dev/null 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "root's coord list without the setting"
	assert_contains "$(cat "$RUN_ERR")" "extres.coordination-group: $GROUP" "coord list's refusal"

	group_config "extres.coordination-group: $GROUP"
	out=$(ctl run gpu -- cat "$COORD" 2>"$RUN_ERR") ||
		fail "root's run failed: $(cat "$RUN_ERR")"
	[[ $out == *"0 "*"lease="* ]] || fail "no lease line while root's command ran: $out"
	out=$(ctl coord list "$COORD" 2>&1) || fail "root's coord list failed: $out"
	assert_contains "$out" 'unparsable "garbage"' "coord list"
	out=$(ctl coord gc --drop-unparsable "$COORD" 2>&1) ||
		fail "root's coord gc --drop-unparsable failed: $out"
	assert_contains "$out" "removed 1 entry, kept 0" "coord gc"
	assert_eq 0 "$(grep -c . "$COORD" || true)" "lines left"
	# The layout stays as it was made.
	assert_eq "660 0 $GID" "$(stat -c '%a %u %g' "$COORD")" "mode, owner and group of the file"
}

# A member uses the layout with or without the setting; somebody outside
# the group cannot open the files at all, nor lock them.
case_member() {
	group_setup
	local rc out
	out=$(member "$EXTRESCTL" -c "$WORK/extres.yaml" run --wait=5 gpu -- cat "$COORD" 2>"$RUN_ERR") ||
		fail "a member's run failed: $(cat "$RUN_ERR")"
	[[ $out == *"0 "*"lease="* ]] || fail "no lease line while the member's command ran: $out"
	group_config "extres.coordination-group: $GROUP"
	out=$(member "$EXTRESCTL" -c "$WORK/extres.yaml" run --wait=5 gpu -- cat "$COORD" 2>"$RUN_ERR") ||
		fail "a member's run failed with the setting: $(cat "$RUN_ERR")"
	[[ $out == *"0 "*"lease="* ]] || fail "no lease line while the member's command ran: $out"

	rc=0
	outsider "$EXTRESCTL" -c "$WORK/extres.yaml" run gpu -- touch "$WORK/shared/ran" 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "a run by somebody outside the group"
	assert_contains "$(cat "$RUN_ERR")" "Permission denied" "the refusal"
	[[ ! -e $WORK/shared/ran ]] || fail "the outsider's command ran"
	rc=0
	outsider flock -s -n "$COORD" true 2>/dev/null || rc=$?
	[[ $rc != 0 ]] || fail "somebody outside the group could lock $COORD"
	assert_eq 0 "$(grep -c . "$COORD" || true)" "lines left"
}

# The setting widens trust only from a config nobody else could change.
case_untrusted_config() {
	group_setup
	local rc
	group_config "extres.coordination-group: $GROUP"
	chown "$NOBODY" "$WORK/extres.yaml"
	rc=0
	ctl run gpu -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "root's run with the setting in another user's config"
	assert_contains "$(cat "$RUN_ERR")" "extres.coordination-group is ignored: config file $WORK/extres.yaml could be modified by another user: it is owned by uid $NOBODY" "the warning"
	assert_contains "$(cat "$RUN_ERR")" "it is group-writable (mode 0660)" "the refusal"
	# A name that is no group: an error naming it.
	chown root "$WORK/extres.yaml"
	group_config "extres.coordination-group: no-such-group-$$"
	rc=0
	ctl run gpu -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "a group that does not exist"
	assert_contains "$(cat "$RUN_ERR")" "extres.coordination-group is 'no-such-group-$$', which is no group on this host" "the error"
}

# Files extres creates are 0660: in the trusted group when one is named
# (root may give it), else in the creator's.
case_create_mode() {
	group_setup
	rm "$COORD" "$QUEUE"
	group_config "extres.coordination-group: $GROUP"
	ctl run --wait=5 gpu -- true 2>"$RUN_ERR" || fail "root's run failed: $(cat "$RUN_ERR")"
	assert_eq "660 0 $GID" "$(stat -c '%a %u %g' "$COORD")" "the coordination file made"
	assert_eq "660 0 $GID" "$(stat -c '%a %u %g' "$QUEUE")" "the queue made"
	rm "$COORD" "$QUEUE"
	group_config
	(umask 0; ctl run --wait=5 gpu -- true) 2>"$RUN_ERR" || fail "root's run failed: $(cat "$RUN_ERR")"
	assert_eq "660 0 0" "$(stat -c '%a %u %g' "$COORD")" "the coordination file made without a group"
	assert_eq "660 0 0" "$(stat -c '%a %u %g' "$QUEUE")" "the queue made without a group"
}

# extresctl check warns on a coordination file or queue every user can
# open (and so lock), naming the file, its mode and the fix.
case_check_world_readable() {
	group_setup
	local out
	group_config "extres.coordination-group: $GROUP"
	out=$(ctl check 2>&1) || fail "check failed: $out"
	[[ $out != *world-readable* ]] || fail "check warned about 0660 files: $out"
	chmod 0664 "$COORD" "$QUEUE"
	out=$(ctl check 2>&1) || fail "check failed: $out"
	assert_contains "$out" "resource 'gpu': coordination file $COORD is world-readable (mode 0664): any user can hold a lock on it and stop every allocation; make it 0660 (chmod o-rwx $COORD)" "the warning on the file"
	assert_contains "$out" "resource 'gpu': queue $QUEUE is world-readable (mode 0664)" "the warning on the queue"
	# What the warning is about: anyone may now hold a lock.
	outsider flock -s -n "$COORD" true || fail "the outsider could not lock a 0664 file"
}

# extresd as root takes its devices in the group's file when the config
# names the group, and refuses it at start-up, with the hint, when not.
case_daemon() {
	[[ -c /dev/fuse ]] || {
		echo "SKIP: $IT_CASE: /dev/fuse is missing, cannot mount"
		exit 77
	}
	group_setup
	local st
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "it is group-writable (mode 0660); if members of group $GROUP may write coordination files, set extres.coordination-group: $GROUP"
	group_config "extres.coordination-group: $GROUP"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st" "$(cat "$COORD")" "the daemon's line"
	daemon_stop
	assert_eq "" "$(coord_lines "$COORD")" "lines after a clean exit"
}

it_main "$@"
