/* SPDX-License-Identifier: MIT */
/* CPU sets in the kernel's cpulist format, as sysfs writes them
 * (/sys/bus/pci/devices/X/local_cpulist: "0-3,8-11"). */
#ifndef EXTRES_CPUS_H
#define EXTRES_CPUS_H

#include <sched.h>

/*
 * Add the CPUs of cpulist `s` to *set (which is not cleared first):
 * comma-separated decimal numbers and ranges "A-B" (A <= B), with
 * whitespace allowed around the whole (sysfs ends it with '\n'). An
 * empty list adds nothing. 0, or -EINVAL for anything else or a CPU at
 * or past CPU_SETSIZE (*set may be partly filled then).
 */
int extres_cpulist_parse(const char *s, cpu_set_t *set);

#endif
