/* SPDX-License-Identifier: MIT */
/*
 * extresctl top's parts: a snapshot of one mount (top_model.c), its
 * rendering into lines of a given width (top_view.c), and the terminal
 * (term.c). top.c holds the loop that ties them.
 */
#ifndef EXTRES_CTL_TOP_H
#define EXTRES_CTL_TOP_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <termios.h>

/* One device: served by the mount (info set), or only recorded in a
 * coordination file (a lease's, another process's: info NULL). */
struct top_dev {
	char *res, *info, *key, *name, *health, *mem;
	/* The holder from .meta/holders, or NULL fields when none. */
	char *command, *user, *since, *kind, *lease, *state;
};

/* A process waiting in a queue (extresctl run --wait). */
struct top_waiter {
	char *res, *ticket, *user, *command;
	pid_t pid;
};

struct top_snap {
	char *generation, *reloads, *last_reload, *config;
	char *conflicts, *unhealthy;
	char **conflict; /* the "conflict ..." lines of .meta/status */
	size_t n_conflict;
	struct top_dev *devs;
	size_t n_devs;
	struct top_waiter *waiters;
	size_t n_waiters;
	/* The queue files looked at: for the caller to watch. */
	char **queues;
	size_t n_queues;
	char *error; /* why the mount could not be read, or NULL */
};

/*
 * Read the mount `mnt` (its tree, .meta/status, .meta/holders) and the
 * queue files beside the coordination files of the config it serves, into
 * *ret. Failures to read the mount land in ret->error; 0 or -ENOMEM.
 */
int top_snap_read(const char *mnt, struct top_snap *ret);
void top_snap_clear(struct top_snap *s);

/* How the rows are ordered. */
#define TOP_SORT_RESOURCE 0
#define TOP_SORT_HEALTH 1
#define TOP_SORT_HOLDER 2
#define TOP_N_SORTS 3

struct top_view {
	int sort; /* TOP_SORT_* */
	const char *filter; /* show only this resource; NULL: all */
	int width, height; /* height 0: no limit (plain output) */
	int interactive; /* the key line at the bottom */
};

const char *top_sort_name(int sort);

/* The snapshot as lines of at most view->width columns, each ended with
 * "\n", at most view->height of them; into `out`. */
void top_render(const struct top_snap *s, const char *mnt,
		const struct top_view *view, FILE *out);

/* The resource after `cur` in the snapshot (NULL: the first), NULL after
 * the last: how the filter key cycles. */
const char *top_next_resource(const struct top_snap *s, const char *cur);

/* The terminal: raw keys, alternate screen; restored by term_leave(). */
struct term {
	int fd;
	int saved_ok;
	struct termios saved;
};

int term_enter(struct term *t, int fd);
void term_leave(struct term *t);
/* The window's size; 80x24 when it cannot be told. */
void term_size(int fd, int *ret_cols, int *ret_rows);
/* Escape sequences: cursor home and clear to the end of the screen. */
#define TERM_HOME "\033[H"
#define TERM_CLEAR_EOL "\033[K"
#define TERM_CLEAR_EOS "\033[J"

#endif
