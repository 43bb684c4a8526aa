/* SPDX-License-Identifier: MIT */
#include "os/stop.h"

#include <signal.h>

int extres_stop_pending(void)
{
	sigset_t set;

	if (sigpending(&set) < 0)
		return 0;
	return sigismember(&set, SIGTERM) == 1 ||
	       sigismember(&set, SIGINT) == 1;
}
