/* SPDX-License-Identifier: MIT */
/*
 * Work that may wait forever on another process, given a deadline.
 *
 * A request to a FUSE mount whose daemon hangs (a deadlock; SIGSTOP) blocks
 * the calling thread in the kernel, and no timeout or ordinary signal ends
 * it: only a fatal signal does. So such work runs in a child process, which
 * the caller kills when it falls silent for too long. The child reports each
 * step it completes through a pipe; the caller waits on that pipe, never on
 * the mount.
 *
 * One limit remains: a request the hung daemon has already taken (read off
 * /dev/fuse; over io_uring, every request once its queues are registered)
 * cannot be aborted even by SIGKILL. The caller does not wait for such a
 * child: it returns at the deadline all the same, and the child,
 * reparented to init, goes when the daemon answers or dies.
 */
#ifndef EXTRES_DEADLINE_H
#define EXTRES_DEADLINE_H

/* The child's end: where it reports its steps. */
struct extres_deadline_child {
	int fd;
};

struct extres_deadline {
	/* The longest the child may go without a step (> 0). */
	unsigned step_ms;
	/* The longest it may take until extres_deadline_done() (0: no
	 * limit beyond step_ms). */
	unsigned total_ms;
	/* Asked every few tens of milliseconds while waiting (may be NULL):
	 * non-zero ends the wait and kills the child. */
	int (*stop_requested)(void);
	/* Non-zero: the child keeps descriptors 0, 1 and 2 of the caller's,
	 * to print after extres_deadline_done(); else they are /dev/null, so
	 * that a child the caller gave up on holds no pipe of the caller's
	 * open (`$(cmd)` would wait for it). */
	int keep_stdio;
};

/*
 * Run `fn(arg, child)` in a child process and wait for it.
 *
 * The child starts with only descriptors 0, 1 and 2 (see keep_stdio), and
 * dies with the calling thread (PR_SET_PDEATHSIG). It ends with
 * _exit(fn's return value & 0xff): whatever fn buffered (stdio) it must
 * flush itself. In a multithreaded caller fn may only use
 * async-signal-safe functions. Flush the caller's stdio buffers before,
 * or the child writes them a second time.
 *
 * Returns the child's exit status (0..255; 128 + N when signal N killed
 * it); -ETIMEDOUT when it missed a deadline, -EINTR when stop_requested()
 * said so (either way it was sent SIGKILL); another negative errno when it
 * could not be started.
 */
int extres_deadline_run(const struct extres_deadline *dl,
			int (*fn)(void *arg, struct extres_deadline_child *c),
			void *arg);

/* From the child: a step is done; the step deadline starts again. */
void extres_deadline_step(struct extres_deadline_child *c);

/* From the child: nothing left that may hang (what follows, printing say,
 * has no deadline). */
void extres_deadline_done(struct extres_deadline_child *c);

#endif
