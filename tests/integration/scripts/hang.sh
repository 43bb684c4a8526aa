#!/bin/sh
# Never answers. --pidfile FILE records the sleeping process so that the
# harness can clean it up; --child keeps the sleeper a child of this shell
# that still holds the script's stdout and stderr, as a hung nvidia-smi
# would, instead of replacing the shell with it.
pidfile=
child=0
prev=
for arg in "$@"; do
	case $prev in
	--pidfile) pidfile=$arg ;;
	esac
	[ "$arg" = --child ] && child=1
	prev=$arg
done
if [ "$child" = 1 ]; then
	sleep 60 &
	[ -z "$pidfile" ] || echo "$!" >"$pidfile"
	wait
	exit 0
fi
[ -z "$pidfile" ] || echo "$$" >"$pidfile"
exec sleep 60
