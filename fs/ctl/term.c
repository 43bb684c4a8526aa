/* SPDX-License-Identifier: MIT */
/*
 * The few escape sequences extresctl top needs, written by hand rather than
 * through ncurses: an alternate screen, cursor home, clear to the end of a
 * line and of the screen (xterm's, which every terminal in use today and
 * tmux understand), and termios for single keys without echo. That keeps
 * extresctl free of a library that root's tools would then load, and of
 * terminfo lookups, for four sequences.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "base/fileio.h"
#include "ctl/top.h"

/* Alternate screen on, cursor hidden / cursor shown, alternate screen off. */
#define ENTER "\033[?1049h\033[?25l"
#define LEAVE "\033[?25h\033[?1049l"

int term_enter(struct term *t, int fd)
{
	struct termios raw;

	t->fd = fd;
	t->saved_ok = 0;
	if (tcgetattr(fd, &t->saved) < 0)
		return -errno;
	raw = t->saved;
	/* Keys one by one, unechoed; ISIG stays, so ^C is SIGINT, which the
	 * loop takes as a request to stop (and restores this). */
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSANOW, &raw) < 0)
		return -errno;
	t->saved_ok = 1;
	return extres_write_all(fd, ENTER, strlen(ENTER));
}

void term_leave(struct term *t)
{
	if (!t->saved_ok)
		return;
	extres_write_all(t->fd, LEAVE, strlen(LEAVE));
	tcsetattr(t->fd, TCSANOW, &t->saved);
	t->saved_ok = 0;
}

void term_size(int fd, int *ret_cols, int *ret_rows)
{
	struct winsize ws;

	*ret_cols = 80;
	*ret_rows = 24;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		*ret_cols = ws.ws_col;
		*ret_rows = ws.ws_row;
	}
}
