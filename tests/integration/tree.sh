# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The mounted tree: listings, contents, sizes, modes, reads, and the errors
# that every other operation must answer.
#
# usage: tree.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Mount the standard config (flat keys).
mount_std() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
}

case_mount_info() {
	mount_std
	local fstype source opts
	read -r fstype source opts <<<"$(mount_info "$MNT")"
	assert_eq fuse.extresd "$fstype" "fstype of $MNT"
	assert_eq extres "$source" "mount source of $MNT"
	[[ ,$opts, == *,ro,* ]] || fail "$MNT not mounted ro: options '$opts'"
	daemon_stop
}

case_ls_root() {
	mount_std
	assert_eq $'gpu\nnic\nself' "$(ls -1 "$MNT")" "ls $MNT"
	# The daemon's own files live under a hidden name: only -a shows it.
	assert_eq $'.\n..\n.leases\n.meta\ngpu\nnic\nself' "$(ls -1a "$MNT")" "ls -a $MNT"
	assert_eq $'.leases\n.meta\ngpu\nnic\nself' "$(ls -1A "$MNT")" "ls -A $MNT"
	assert_eq "$MNT/gpu $MNT/nic $MNT/self" "$(echo "$MNT"/*)" "glob $MNT/*"
	daemon_stop
}

case_ls_resource() {
	mount_std
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_eq $'.\n..\n0\n1' "$(ls -1a "$MNT/gpu")" "ls -a gpu"
	assert_eq 0 "$(ls -1 "$MNT/nic")" "ls nic"
	assert_eq $'.\n..\n0' "$(ls -1a "$MNT/nic")" "ls -a nic"
	# Globs and wc -l mean what they say.
	assert_eq 2 "$(ls -1 "$MNT/gpu" | wc -l)" "ls gpu | wc -l"
	assert_eq "$MNT/gpu/0 $MNT/gpu/1" "$(echo "$MNT"/gpu/*)" "glob gpu/*"
	daemon_stop
}

case_ls_info() {
	mount_std
	local keys=$'index\nmemory.total\nname\nuuid'
	assert_eq "$keys" "$(ls -1 "$MNT/gpu/0")" "ls gpu/0"
	assert_eq "$keys" "$(ls -1 "$MNT/gpu/1")" "ls gpu/1"
	assert_eq $'.\n..\n'"$keys" "$(ls -1a "$MNT/gpu/1")" "ls -a gpu/1"
	assert_eq $'index\nlink_layer\nname' "$(ls -1 "$MNT/nic/0")" "ls nic/0"
	assert_eq $'.\n..\nindex\nlink_layer\nname' "$(ls -1a "$MNT/nic/0")" "ls -a nic/0"
	daemon_stop
}

case_cat() {
	mount_std
	assert_file "$MNT/gpu/0/index" $'0\n'
	assert_file "$MNT/gpu/1/index" $'1\n'
	assert_file "$MNT/gpu/0/name" $'Test GPU\n'
	assert_file "$MNT/gpu/1/memory.total" $'32768 MiB\n'
	assert_file "$MNT/gpu/1/uuid" $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	assert_file "$MNT/nic/0/link_layer" $'InfiniBand\n'
	assert_eq "$STD_CONTENTS" "$(tree_contents "$MNT")" "every property file"
	# Several files in one command, as scripts do.
	assert_eq $'0\n1\n0' "$(cat "$MNT"/gpu/*/index "$MNT"/nic/0/index)" "cat of several index files"
	daemon_stop
}

case_stat() {
	mount_std
	assert_eq "$STD_LISTING" "$(tree_listing "$MNT")" "types, modes and sizes of the tree"
	local root
	root=$("$PROBE" stat "$MNT")
	[[ $root == "dir 0555 "* ]] || fail "probe stat $MNT: wanted 'dir 0555 ...', got '$root'"
	root=$("$PROBE" stat "$MNT/gpu/1")
	[[ $root == "dir 0555 "* ]] || fail "probe stat gpu/1: wanted 'dir 0555 ...', got '$root'"
	assert_probe "reg 0444 41" stat "$MNT/gpu/0/uuid"
	assert_probe "reg 0444 10" stat "$MNT/gpu/1/memory.total"
	assert_probe "reg 0444 2" stat "$MNT/nic/0/index"
	# wc -c trusts st_size; it must match the bytes read.
	assert_eq 41 "$(wc -c <"$MNT/gpu/0/uuid")" "wc -c gpu/0/uuid"
	assert_eq 41 "$(stat -c %s "$MNT/gpu/0/uuid")" "stat -c %s gpu/0/uuid"
	daemon_stop
}

case_find() {
	mount_std
	local want
	want=$(sort <<-EOF
	$MNT
	$MNT/gpu
	$MNT/gpu/0
	$MNT/gpu/0/index
	$MNT/gpu/0/memory.total
	$MNT/gpu/0/name
	$MNT/gpu/0/uuid
	$MNT/gpu/1
	$MNT/gpu/1/index
	$MNT/gpu/1/memory.total
	$MNT/gpu/1/name
	$MNT/gpu/1/uuid
	$MNT/nic
	$MNT/nic/0
	$MNT/nic/0/index
	$MNT/nic/0/link_layer
	$MNT/nic/0/name
	$MNT/self
	EOF
	)
	assert_eq "$want" "$(find "$MNT" -name '.?*' -prune -o -print | sort)" "find $MNT (hidden pruned)"
	assert_eq 11 "$(find "$MNT" -name '.?*' -prune -o -type f -print | wc -l)" "find -type f | wc -l"
	# Names that do not start with '.' are exactly resources, infos and
	# keys; the hidden directory itself never matches.
	assert_eq "" "$(find "$MNT" -mindepth 1 -maxdepth 1 -name '[!.]*' | grep -F /.meta)" "find -name '[!.]*' at the top"
	daemon_stop
}

case_head() {
	mount_std
	assert_eq GPU "$(head -c 3 "$MNT/gpu/0/uuid")" "head -c 3 gpu/0/uuid"
	assert_eq 'Tes' "$(head -c 3 "$MNT/gpu/1/name")" "head -c 3 gpu/1/name"
	assert_eq '0' "$(head -c 1 "$MNT/gpu/0/index")" "head -c 1 gpu/0/index"
	assert_eq '30 0a' "$(head -c 100 "$MNT/gpu/0/index" | od -An -tx1 | sed 's/^ //')" \
		"head -c 100 gpu/0/index"
	assert_eq 'InfiniBand' "$(head -n 1 "$MNT/nic/0/link_layer")" "head -n 1 nic/0/link_layer"
	daemon_stop
}

case_pread() {
	mount_std
	local f=$MNT/gpu/0/uuid
	assert_probe '41:GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000000\n' pread "$f" 0 4096
	assert_probe '3:GPU' pread "$f" 0 3
	assert_probe '8:0f4c6d3e' pread "$f" 4 8
	assert_probe '5:0000\n' pread "$f" 36 100
	assert_probe '1:\n' pread "$f" 40 1
	# At and beyond the end: nothing, not an error.
	assert_probe '0:' pread "$f" 41 10
	assert_probe '0:' pread "$f" 42 10
	assert_probe '0:' pread "$f" 1000000 10
	assert_probe '0:' pread "$f" 5 0
	assert_probe '10:32768 MiB\n' pread "$MNT/gpu/1/memory.total" 0 10
	assert_probe '4:MiB\n' pread "$MNT/gpu/1/memory.total" 6 64
	daemon_stop
}

case_enoent() {
	mount_std
	assert_probe ENOENT stat "$MNT/fpga"
	assert_probe ENOENT stat "$MNT/gpu/2"
	assert_probe ENOENT stat "$MNT/gpu/00"
	assert_probe ENOENT stat "$MNT/gpu/-1"
	assert_probe ENOENT stat "$MNT/nic/1"
	assert_probe ENOENT stat "$MNT/gpu/0/serial"
	assert_probe ENOENT stat "$MNT/gpu/0/Index"
	assert_probe ENOENT stat "$MNT/gpu/0/.index"
	assert_probe ENOENT pread "$MNT/gpu/5/index" 0 10
	assert_probe ENOENT open-wr "$MNT/gpu/0/serial"
	assert_probe ENOTDIR stat "$MNT/gpu/0/index/x"
	# Asked twice: a cached negative answer must stay ENOENT.
	assert_probe ENOENT stat "$MNT/fpga"
	assert_probe ENOENT stat "$MNT/gpu/0/serial"
	daemon_stop
}

case_erofs() {
	mount_std
	local f=$MNT/gpu/0/index
	assert_probe EROFS write "$f"
	assert_probe EROFS open-wr "$f"
	assert_probe EROFS create "$MNT/gpu/0/serial"
	assert_probe EROFS create "$MNT/fpga"
	assert_probe EROFS mkdir "$MNT/fpga"
	assert_probe EROFS mkdir "$MNT/gpu/2"
	assert_probe EROFS rmdir "$MNT/gpu/1"
	assert_probe EROFS rmdir "$MNT/nic"
	assert_probe EROFS unlink "$f"
	assert_probe EROFS rename "$f" "$MNT/gpu/0/index2"
	assert_probe EROFS rename "$MNT/gpu/1" "$MNT/gpu/2"
	assert_probe EROFS truncate "$f"
	assert_probe EROFS chmod "$f"
	assert_probe EROFS chmod "$MNT/gpu"
	assert_probe EROFS symlink index "$MNT/gpu/0/link"
	assert_probe EROFS link "$f" "$MNT/gpu/0/index2"
	assert_probe EROFS utime "$f"
	# Nothing changed.
	assert_eq "$STD_LISTING" "$(tree_listing "$MNT")" "tree after the refused writes"
	assert_eq "$STD_CONTENTS" "$(tree_contents "$MNT")" "contents after the refused writes"
	daemon_stop
}

# The same configuration with nested keys gives the same tree.
case_nested() {
	it_setup
	write_std_config_nested "$WORK/config.yaml"
	daemon_start -c "$WORK/config.yaml" "$MNT"
	assert_eq $'gpu\nnic\nself' "$(ls -1 "$MNT")" "ls $MNT"
	assert_eq "$STD_LISTING" "$(tree_listing "$MNT")" "types, modes and sizes of the tree"
	assert_eq "$STD_CONTENTS" "$(tree_contents "$MNT")" "every property file"
	daemon_stop
}

# Big directories: readdir must page through every entry exactly once.
case_many() {
	it_setup
	local i want
	{
		echo 'external-resources: acc;wide'
		echo 'external-resource.acc.amount: 300'
		echo 'external-resource.acc.driver: static'
		echo 'external-resource.acc.param.devices:'
		for i in $(seq 0 299); do
			printf '  - {index: "%d", serial: "SN%05d"}\n' "$i" "$i"
		done
		echo 'external-resource.wide.amount: 1'
		echo 'external-resource.wide.driver: static'
		echo 'external-resource.wide.param.devices:'
		printf '  - index: "0"\n'
		for i in $(seq 1 199); do
			printf '    p%03d: "v%d"\n' "$i" "$i"
		done
	} >"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "$(seq 0 299)" "$(ls -1 "$MNT/acc" | sort -n)" "ls acc"
	assert_eq 302 "$(ls -1a "$MNT/acc" | wc -l)" "ls -a acc | wc -l"
	assert_eq 600 "$(find "$MNT/acc" -type f | wc -l)" "files under acc"
	assert_file "$MNT/acc/299/serial" $'SN00299\n'
	assert_file "$MNT/acc/150/index" $'150\n'
	want=$( (echo index; seq -f 'p%03g' 1 199) | sort)
	assert_eq "$want" "$(ls -1 "$MNT/wide/0")" "ls wide/0"
	assert_file "$MNT/wide/0/p199" $'v199\n'
	daemon_stop
}

# A value longer than a page, and one in UTF-8: exact bytes and sizes.
case_large_value() {
	it_setup
	local big
	big=$(printf '0123456789%.0s' $(seq 6000))
	{
		echo 'external-resources: gpu'
		echo 'external-resource.gpu.amount: 1'
		echo 'external-resource.gpu.driver: static'
		echo 'external-resource.gpu.param.devices:'
		echo '  - index: "0"'
		echo "    blob: \"$big\""
		echo '    name: "Démo GPU ✓"'
	} >"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_probe "reg 0444 60001" stat "$MNT/gpu/0/blob"
	assert_file "$MNT/gpu/0/blob" "$big"$'\n'
	assert_probe '12:012345678901' pread "$MNT/gpu/0/blob" 4090 12
	assert_probe '6:56789\n' pread "$MNT/gpu/0/blob" 59995 100
	assert_probe '0:' pread "$MNT/gpu/0/blob" 60001 100
	assert_probe OK readloop "$MNT/gpu/0/blob" 50 "$big"$'\n'
	assert_probe "reg 0444 14" stat "$MNT/gpu/0/name"
	assert_file "$MNT/gpu/0/name" $'Démo GPU ✓\n'
	daemon_stop
}

# 16 readers, 2000 open+read+close each, all getting the right bytes.
case_readers() {
	mount_std
	local files=(gpu/0/uuid gpu/1/uuid gpu/0/index gpu/1/memory.total
		nic/0/link_layer gpu/0/name gpu/1/index nic/0/name)
	local i f want pids=()
	for i in $(seq 0 15); do
		f=${files[i % ${#files[@]}]}
		want=$(file_bytes "$MNT/$f"; printf x)
		want=${want%x}
		"$PROBE" readloop "$MNT/$f" 2000 "$want" >"$WORK/reader.$i" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 0 15); do
		wait "${pids[i]}" || fail "reader $i exited with status $?: $(cat "$WORK/reader.$i")"
		assert_eq OK "$(cat "$WORK/reader.$i")" "reader $i"
	done
	# The expected values themselves, independently of the readers.
	assert_eq "$STD_CONTENTS" "$(tree_contents "$MNT")" "every property file"
	daemon_stop
}

# Once a file is cached, reading it again does not reach the daemon.
case_hotpath() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_spawn -d -c "$WORK/extres.yaml" "$MNT"
	wait_mounted "$MNT"
	local f=$MNT/gpu/1/uuid before new
	assert_file "$f" $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	# The first access reaches the daemon (its bytes may then come by a
	# READ, or be pushed ahead of it): proof that -d shows requests.
	grep -q 'opcode: LOOKUP' "$DAEMON_ERR" ||
		fail "the debug log (-d) shows no LOOKUP request for the first access"
	before=$(wc -l <"$DAEMON_ERR")
	assert_probe OK readloop "$f" 200 $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	new=$(tail -n +"$((before + 1))" "$DAEMON_ERR" |
		grep -E 'opcode: (READ|OPEN|LOOKUP|GETATTR) ' || true)
	[[ -z $new ]] || fail "200 hot reads of $f reached the daemon:
$(head -n 20 <<<"$new")
($(wc -l <<<"$new") requests)"
	daemon_stop
}

# isatty() (CPython's open() asks it before 3.14) is an ioctl the kernel
# always sends: the daemon answers ENOTTY itself, on files and directories,
# rather than leaving libfuse to say ENOSYS (which the kernel would turn
# into ENOTTY for the caller, so only the log tells them apart).
case_ioctl() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_spawn -d -c "$WORK/extres.yaml" "$MNT"
	wait_mounted "$MNT"
	local p ids answers
	for p in "$MNT/gpu/0/uuid" "$MNT/nic/0/name" "$MNT/gpu/0" "$MNT/gpu" "$MNT"; do
		assert_probe ENOTTY ioctl "$p"
	done
	# The answer to every IOCTL request, by its unique number.
	ids=$(sed -n 's/.*unique: \([0-9]*\), opcode: IOCTL .*/\1/p' "$DAEMON_ERR")
	[[ $(wc -w <<<"$ids") -ge 5 ]] ||
		fail "the debug log (-d) shows $(wc -w <<<"$ids") IOCTL requests for 5 ioctls"
	answers=$(sed -n 's/.*unique: \([0-9]*\), \(error: -[0-9]*\|success\).*/\1 \2/p' \
		"$DAEMON_ERR" | awk -v ids=" $(tr '\n' ' ' <<<"$ids")" '
		index(ids, " " $1 " ") { $1 = ""; sub(/^ /, ""); print }' |
		sort | uniq -c | awk '{ $1 = $1 "x"; print }')
	assert_eq "$(wc -w <<<"$ids")x error: -25" "$answers" "answers (errno) to the IOCTL requests"
	daemon_stop
}

it_main "$@"
