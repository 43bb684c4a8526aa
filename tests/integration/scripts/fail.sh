#!/bin/sh
# Fails discovery the Flink way: a non-zero exit. Its stdout looks valid,
# so only the exit status can tell the driver that discovery failed.
echo "0,1"
echo "fail.sh: no FPGA found on this host (marker 7f3a)" >&2
exit 1
