#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# NVIDIA GPU discovery under Flink's discovery-script contract: a drop-in
# replacement for Flink's plugins/external-resource-gpu/nvidia-gpu-discovery.sh,
# for Flink's GPU driver and for extres' script driver alike.
#
#   nvidia-gpu-discovery.sh AMOUNT [--enable-coordination-mode]
#                           [--coordination-file PATH]
#
# Prints AMOUNT indexes from `nvidia-smi --query-gpu=index` on one line,
# split by ",". As Flink's script does, AMOUNT 0 prints nothing and exits 0
# without running nvidia-smi, and a lone argument `null` after AMOUNT is
# ignored: Flink's GPUDriver runs "PATH AMOUNT ARGS" as one string split on
# blanks, and ARGS is the word null when discovery-script.args is unset.
#
# With --enable-coordination-mode (or --enable-coordination,
# the spelling in Flink's documentation) the GPUs are taken through a
# coordination file shared by every Flink TaskManager and extresd on the
# host: one line per taken GPU, "INDEX PID<TAB>STARTTIME". PID is the
# process that ran this script ($PPID: the TaskManager, or extresd),
# STARTTIME its start time (field 22 of /proc/PID/stat), so that a reused
# PID does not keep a GPU. The tab keeps Flink's `sed -i "/INDEX /d"` from
# matching after the index. Flink's scripts read only the first two
# fields, and their two-field lines are honoured while the PID runs.
#
# Beyond Flink's script:
# - indexes match exactly ("1" is not "10");
# - a GPU is free again only when its owner is gone (no such process, a
#   zombie, or a process with a different start time), and only such
#   owners' lines are removed; lines it cannot parse are kept as they are
#   (a file with NUL bytes, which bash cannot keep, is refused instead);
# - the whole read-decide-write holds an exclusive flock on the file itself,
#   which is rewritten in place, never replaced, so nobody waits on an
#   orphaned inode;
# - a symbolic link, a hard link or anything but a regular file is refused
#   (the default file is in world-writable /var/tmp);
# - a bad AMOUNT, an unknown argument or a failing nvidia-smi is an error on
#   stderr with a non-zero exit, never a silent empty answer.
#
# Exit status: 0 with the indexes on stdout; 1 when the GPUs cannot be
# found or taken; 2 on a usage error.

set -euo pipefail
# Byte lengths, [[:space:]] and tool messages must not depend on the caller.
export LC_ALL=C

readonly PROG=${0##*/}
readonly DEFAULT_COORDINATION_FILE=/var/tmp/flink-gpu-coordination
# A writer that replaces the file (`sed -i` renames a new one over it) can
# leave us holding the lock of an inode that is gone: we open it again.
readonly MAX_REOPEN=64
readonly INT_MAX=2147483647
readonly UINT64_MAX=18446744073709551615
# Whitespace as extres' allocator splits fields: the C locale's isspace().
readonly FIELD_IFS=$' \t\n\v\f\r'
readonly REFUSE="; refusing to use it as a coordination file"

synopsis() {
	cat <<-EOF
	usage: $PROG AMOUNT [--enable-coordination-mode | --enable-coordination]
	       $(printf '%*s' "${#PROG}" '') [--coordination-file PATH]
	EOF
}

usage() {
	synopsis
	cat <<-EOF

	Prints AMOUNT NVIDIA GPU indexes (from nvidia-smi) on one line, split by ','.
	AMOUNT 0 prints nothing. A lone argument 'null', which Flink's GPU driver
	passes when discovery-script.args is unset, is ignored.
	  --enable-coordination-mode, --enable-coordination
	                            take the GPUs through the coordination file, so
	                            that processes on this host never share one
	  --coordination-file PATH  the coordination file
	                            (default $DEFAULT_COORDINATION_FILE)
	EOF
}

die() {
	printf '%s: %s\n' "$PROG" "$*" >&2
	exit 1
}

usage_error() {
	printf '%s: %s\n' "$PROG" "$*" >&2
	synopsis >&2
	exit 2
}

# Helpers that hand a result back through a variable named by the caller
# (printf -v) name their own locals "_..." and unlike any caller's, so that
# the name never resolves to one of theirs.

# "1 GPU", "2 GPUs".
gpus() {
	(($1 == 1)) && printf '1 GPU' || printf '%s GPUs' "$1"
}

# Strip leading zeros from a string of digits: "007" -> "7", "000" -> "0".
strip_zeros() {
	local _s=$1
	_s=${_s#"${_s%%[!0]*}"}
	printf -v "$2" '%s' "${_s:-0}"
}

# 0 when $1 is a string of digits whose value is at most $2 (written without
# leading zeros); no arithmetic, so no overflow.
dec_le() {
	local _v
	[[ $1 =~ ^[0-9]+$ ]] || return 1
	strip_zeros "$1" _v
	((${#_v} < ${#2})) || { ((${#_v} == ${#2})) && [[ ! $_v > $2 ]]; }
}

# parse_amount TEXT VAR: a non-negative integer, into VAR.
parse_amount() {
	local _v
	[[ $1 =~ ^[0-9]+$ ]] || usage_error "AMOUNT '$1' is not a non-negative integer"
	dec_le "$1" "$INT_MAX" || usage_error "AMOUNT '$1' is too large"
	strip_zeros "$1" _v
	printf -v "$2" '%s' "$_v"
}

# The GPU indexes nvidia-smi lists, one per line, in its order; duplicates
# dropped. Its stdout and stderr are passed on when it fails: nvidia-smi says
# what is wrong with the driver on stdout.
query_indexes() {
	local -a cmd=(nvidia-smi --query-gpu=index "--format=csv,noheader")
	local out status=0 line seen=' '

	command -v nvidia-smi >/dev/null 2>&1 ||
		die "nvidia-smi not found in PATH ($PATH); is the NVIDIA driver installed?"
	out=$("${cmd[@]}") || status=$?
	if ((status != 0)); then
		[[ -z $out ]] || printf '%s\n' "$out" >&2
		die "'${cmd[*]}' failed with exit status $status"
	fi
	while IFS= read -r line; do
		line=${line#"${line%%[![:space:]]*}"}
		line=${line%"${line##*[![:space:]]}"}
		[[ -n $line ]] || continue
		[[ $line =~ ^[0-9]+$ ]] ||
			die "'${cmd[*]}' printed '$line' where a GPU index was expected"
		[[ $seen == *" $line "* ]] && continue
		seen+="$line "
		printf '%s\n' "$line"
	done <<<"$out"
}

# proc_stat PID STATE_VAR START_VAR: the state (field 3) and start time
# (field 22) of /proc/PID/stat. 1 when PID does not exist, 2 when its stat
# cannot be read or parsed although it may exist.
proc_stat() {
	local _stat _rest
	local -a _f

	[[ -e /proc/$1 ]] || return 1
	if ! read -r _stat 2>/dev/null <"/proc/$1/stat"; then
		[[ -e /proc/$1 ]] || return 1
		return 2
	fi
	# The command name (field 2) may hold spaces and parentheses; it ends at
	# the last ')'.
	[[ $_stat == *')'* ]] || return 2
	_rest=${_stat##*)}
	IFS=$FIELD_IFS read -r -a _f <<<"$_rest"
	((${#_f[@]} >= 20)) && [[ ${_f[19]} =~ ^[0-9]+$ ]] || return 2
	printf -v "$2" '%s' "${_f[0]}"
	printf -v "$3" '%s' "${_f[19]}"
}

# owner_gone PID [STARTTIME]: 0 when the owner of a line is gone, so that
# its GPU is free: no such process, a dead or zombie one, or (for a line
# with a start time) a process that reused the PID. A process whose stat
# cannot be read counts as alive: keeping a GPU is the safe mistake.
owner_gone() {
	local state start want r=0

	proc_stat "$1" state start || r=$?
	((r != 1)) || return 0
	((r == 0)) || return 1
	[[ $state != Z && $state != X ]] || return 0
	[[ -n ${2:-} ]] || return 1
	strip_zeros "$2" want
	[[ $start != "$want" ]]
}

# check_path PATH: refuse anything at PATH but a regular file with one link;
# 1 when nothing is there. Checked before opening: opening a FIFO may block.
check_path() {
	local path=$1 kind links

	if [[ -L $path ]]; then
		die "$path is a symbolic link$REFUSE"
	fi
	[[ -e $path ]] || return 1
	if [[ ! -f $path ]]; then
		kind=$(stat -c %F -- "$path") || die "cannot stat coordination file $path"
		[[ $kind != fifo ]] || kind=FIFO
		die "$path is a $kind$REFUSE"
	fi
	links=$(stat -c %h -- "$path") || die "cannot stat coordination file $path"
	((links == 1)) || die "$path has $links hard links$REFUSE"
}

# file_id PATH VAR [-L]: "DEVICE INODE LINKS TYPE" of PATH, not following a
# final symbolic link unless -L is given.
file_id() {
	local _fid
	_fid=$(stat ${3:+"$3"} -c '%d %i %h %F' -- "$1" 2>/dev/null) || return 1
	printf -v "$2" '%s' "$_fid"
}

# create_file PATH: create PATH as an empty file, mode 0660 whatever the
# caller's umask: its group shares it, and nobody else may open it (whoever
# can open it can hold its lock forever). noclobber opens with
# O_EXCL, which never follows a symbolic link; losing the race to another
# creator is fine.
create_file() {
	local msg

	msg=$( (umask 007 && set -C && : >"$1") 2>&1) && return 0
	[[ -e $1 || -L $1 ]] && return 0
	die "cannot create coordination file $1: ${msg##*: }"
}

# open_locked PATH FD_VAR SIZE_VAR: open PATH (created when missing) and
# take an exclusive flock on it; open it again when the path was replaced
# while we waited. Sets FD_VAR to the locked fd, SIZE_VAR to the file size.
#
# Opened read-only, without O_CREAT: with fs.protected_regular, an O_CREAT
# open of another user's file in a sticky directory such as /var/tmp fails
# even for root, and no O_CREAT means a symbolic link swapped in after the
# checks cannot make us create a file elsewhere. The content is written
# through /proc/$$/fd/FD, which reaches the very inode we locked. A FIFO
# swapped in after the checks would block the open: only the file's owner
# can do that in a sticky directory, and that owner can as well hold the
# lock forever; the caller's timeout (Flink's and extres' 10 s) ends both.
open_locked() {
	local _attempt _fd _id _now _size

	for ((_attempt = 0; _attempt < MAX_REOPEN; _attempt++)); do
		if ! check_path "$1"; then
			create_file "$1"
			continue
		fi
		exec {_fd}<"$1" || die "cannot open coordination file $1"
		# What we opened must be what we checked: a swap in between is
		# caught here, before anything is read or written.
		if ! file_id "/proc/$$/fd/$_fd" _id -L ||
			[[ $_id != *' regular file' && $_id != *' regular empty file' ]] ||
			[[ ${_id#* * } != '1 '* ]]; then
			exec {_fd}<&-
			check_path "$1" || true
			die "$1 changed while it was being opened$REFUSE"
		fi
		_id=${_id%% [a-z]*}
		flock -x "$_fd" || die "cannot lock coordination file $1"
		if file_id "$1" _now && [[ ${_now%% [a-z]*} == "$_id" ]] &&
			file_id "/proc/$$/fd/$_fd" _now -L &&
			[[ ${_now%% [a-z]*} == "$_id" ]]; then
			_size=$(stat -L -c %s -- "/proc/$$/fd/$_fd") ||
				die "cannot stat coordination file $1"
			printf -v "$2" '%s' "$_fd"
			printf -v "$3" '%s' "$_size"
			return 0
		fi
		exec {_fd}<&-
	done
	die "coordination file $1 kept being replaced while we waited for its lock"
}

# rewrite FD OLD_SIZE CONTENT: replace the file's content in place. The new
# content, padded with newlines (blank lines, which readers skip) to the old
# size, goes out in one write before the file is cut to length: a reader
# never sees a missing or a half line, even if we are killed in between.
rewrite() {
	local fd=$1 old_size=$2 content=$3 pad=

	if ((old_size > ${#content})); then
		printf -v pad '%*s' "$((old_size - ${#content}))" ''
		pad=${pad// /$'\n'}
	fi
	printf '%s' "$content$pad" 2>/dev/null 1<>"/proc/$$/fd/$fd" || return 1
	[[ -z $pad ]] || truncate -c -s "${#content}" -- "/proc/$$/fd/$fd"
}

# coordinate PATH AMOUNT INDEXES...: take AMOUNT of INDEXES through the
# coordination file at PATH; prints them split by ",".
coordinate() {
	local path=$1 amount=$2
	shift 2
	local owner=$PPID state owner_start fd size line key pid start rest i
	local taken=' ' content='' out='' consumed=0 eof=0
	local -a chosen=()

	proc_stat "$owner" state owner_start ||
		die "cannot read the start time of process $owner, the owner to record"
	[[ $state != Z && $state != X ]] ||
		die "process $owner, the owner to record, has exited"

	open_locked "$path" fd size
	while ((!eof)); do
		if IFS= read -r line; then
			consumed=$((consumed + ${#line} + 1))
		else
			eof=1
			consumed=$((consumed + ${#line}))
			[[ -n $line ]] || break
		fi
		key="" pid="" start=""
		IFS=$FIELD_IFS read -r key pid start rest <<<"$line" || true
		[[ -n $key ]] || continue
		# A line extres' allocator cannot parse either: kept as it is,
		# holding nothing.
		if ! dec_le "$pid" "$INT_MAX" || [[ $pid =~ ^0+$ ]]; then
			content+="$line"$'\n'
			continue
		fi
		strip_zeros "$pid" pid
		dec_le "$start" "$UINT64_MAX" || start=
		if owner_gone "$pid" "$start"; then
			continue
		fi
		content+="$line"$'\n'
		taken+="$key "
	done <&"$fd"
	# bash drops NUL bytes as it reads: such a line could not be kept as
	# it is.
	((consumed >= size)) ||
		die "coordination file $path contains NUL bytes, which this script cannot keep; refusing to rewrite it"

	for i in "$@"; do
		((${#chosen[@]} < amount)) || break
		[[ $taken == *" $i "* ]] || chosen+=("$i")
	done
	# Nothing is written on failure, not even the reclaimed lines: the file
	# stays as we found it.
	((${#chosen[@]} == amount)) ||
		die "wanted $(gpus "$amount"), found ${#chosen[@]} free of $# (coordination file $path)"

	for i in "${chosen[@]}"; do
		content+="$i $owner"$'\t'"$owner_start"$'\n'
		out+=${out:+,}$i
	done
	# extres reads at most 16 MiB: a file it cannot read back is useless
	# to every allocator on the host.
	((${#content} <= 16777216)) ||
		die "coordination file $path would grow to ${#content} bytes, past the 16777216-byte limit; nothing was written"
	rewrite "$fd" "$size" "$content" || die "cannot write coordination file $path"
	exec {fd}<&-
	printf '%s\n' "$out"
}

main() {
	local amount coordination=0 path=$DEFAULT_COORDINATION_FILE indexes out
	local -a all

	(($# > 0)) || usage_error "missing AMOUNT"
	[[ $1 != -h && $1 != --help ]] || { usage; exit 0; }
	parse_amount "$1" amount
	shift
	# Flink's GPUDriver without discovery-script.args.
	(($# != 1)) || [[ $1 != null ]] || shift
	while (($# > 0)); do
		case $1 in
		--enable-coordination-mode | --enable-coordination)
			coordination=1
			;;
		--coordination-file)
			(($# >= 2)) || usage_error "--coordination-file needs a PATH"
			[[ -n $2 ]] || usage_error "--coordination-file needs a non-empty PATH"
			path=$2
			shift
			;;
		-h | --help)
			usage
			exit 0
			;;
		*)
			usage_error "unknown argument '$1'"
			;;
		esac
		shift
	done
	# Flink's script answers 0 GPUs before it looks for any; so do we, so
	# that a host without nvidia-smi can still be asked for none.
	((amount > 0)) || exit 0

	indexes=$(query_indexes)
	mapfile -t all <<<"$indexes"
	[[ -n $indexes ]] || all=()

	if ((coordination)); then
		coordinate "$path" "$amount" "${all[@]}"
		return
	fi
	((${#all[@]} >= amount)) ||
		die "wanted $(gpus "$amount"), found ${#all[@]}$(
			((${#all[@]} == 0)) || printf ' (%s)' "${indexes//$'\n'/,}")"
	out=$(
		IFS=,
		printf '%s' "${all[*]:0:amount}"
	)
	printf '%s\n' "$out"
}

main "$@"
