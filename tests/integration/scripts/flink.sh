#!/bin/sh
# A discovery script under Flink's contract: $1 is the amount, the
# configured args follow. Prints the first AMOUNT of --indexes, split by
# ",", plus a whitespace-only item that the driver must ignore.
# --record FILE writes every argument received, one per line, so that the
# case can check what the driver passed.
amount=$1
record=
prev=
indexes=
for arg in "$@"; do
	case $prev in
	--record) record=$arg ;;
	--indexes) indexes=$arg ;;
	esac
	prev=$arg
done
if [ -n "$record" ]; then
	printf '%s\n' "$@" >"$record"
fi
out=
n=0
IFS=,
for i in $indexes; do
	[ "$n" -lt "$amount" ] || break
	out=${out:+$out,}$i
	n=$((n + 1))
done
if [ "$n" -lt "$amount" ]; then
	echo "flink.sh: wanted $amount, have only $n" >&2
	exit 1
fi
printf '%s, \n' "$out"
