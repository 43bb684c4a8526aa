/* SPDX-License-Identifier: MIT */
#include "os/access.h"

#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A user's name, or its number when the user database has none. */
static const char *user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw && pw->pw_name)
		snprintf(buf, size, "%s", pw->pw_name);
	else
		snprintf(buf, size, "%u", (unsigned)uid);
	return buf;
}

static const char *group_name(gid_t gid, char *buf, size_t size)
{
	struct group *gr = getgrgid(gid);

	if (gr && gr->gr_name)
		snprintf(buf, size, "%s", gr->gr_name);
	else
		snprintf(buf, size, "%u", (unsigned)gid);
	return buf;
}

int extres_err_access(struct extres_err *err, const char *what,
		      const char *path)
{
	char me[64], owner[64], group[64], dir_buf[PATH_MAX], who[80];
	const char *target = path, *doing = "write it";
	unsigned mode, need;
	struct stat st;

	if (stat(path, &st) < 0) {
		/* Not there: creating it is what was refused. */
		snprintf(dir_buf, sizeof(dir_buf), "%s", path);
		target = dirname(dir_buf);
		doing = "create files in";
		if (stat(target, &st) < 0)
			return extres_err_set(err, EACCES,
					      "cannot open %s %s: %s", what,
					      path, strerror(EACCES));
	}
	mode = st.st_mode & 07777;
	/* A directory needs search and write, a file read and write; a file
	 * others may read lets any of them stall every allocation with a
	 * lock, so the mode that works shuts them out. */
	need = S_ISDIR(st.st_mode) ? 0030 : 0060;
	user_name(getuid(), me, sizeof(me));
	user_name(st.st_uid, owner, sizeof(owner));
	group_name(st.st_gid, group, sizeof(group));
	if (st.st_uid == 0)
		snprintf(who, sizeof(who), "root");
	else
		snprintf(who, sizeof(who), "user %s or root", owner);
	if (strcmp(doing, "write it") == 0)
		return extres_err_set(
			err, EACCES,
			"cannot open %s %s: %s: user %s (uid %u) may not write it (owner %s, group %s, mode %04o); it works as %s, or for members of group %s with mode %04o (chmod g+%s %s)",
			what, path, strerror(EACCES), me, (unsigned)getuid(),
			owner, group, mode, who, group,
			S_ISDIR(st.st_mode) ?
				mode | need :
				(mode | need) & ~(unsigned)S_IRWXO,
			S_ISDIR(st.st_mode) ? "wx" : "rw,o-rwx", target);
	return extres_err_set(
		err, EACCES,
		"cannot create %s %s: %s: user %s (uid %u) may not create files in %s (owner %s, group %s, mode %04o); it works as %s, or for members of group %s with mode %04o (chmod g+wx %s)",
		what, path, strerror(EACCES), me, (unsigned)getuid(), target,
		owner, group, mode, who, group, mode | need, target);
}

void extres_trust_hint(struct extres_err *err, const char *path)
{
	char me[80], chown_cmd[PATH_MAX + 80] = "";
	unsigned mode, want;
	struct stat st;

	if (stat(path, &st) < 0)
		return;
	mode = st.st_mode & 07777;
	/* Others get nothing (any reader can hold a lock on the file and
	 * stall every allocation), the group keeps reading only: a group that
	 * may write is the trust rule's own hint (extres.coordination-group). */
	want = mode & ~(unsigned)(S_IWGRP | S_IRWXO);
	if (!(mode & S_IWOTH) && (st.st_uid == 0 || st.st_uid == geteuid()))
		return;
	if (geteuid() == 0)
		snprintf(me, sizeof(me), "root");
	else
		user_name(geteuid(), me, sizeof(me));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		snprintf(chown_cmd, sizeof(chown_cmd), "chown %s %s; ", me,
			 path);
	extres_err_append(
		err,
		"; it is accepted owned by %s%s, mode %04o (%schmod %04o %s)",
		geteuid() == 0 ? "" : "root or user ", me, want, chown_cmd,
		want, path);
}
