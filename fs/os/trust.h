/* SPDX-License-Identifier: MIT */
/*
 * The trust rule for files the daemon runs or loads (discovery scripts,
 * driver modules, device libraries): it refuses anything that a user other
 * than root or the daemon's own user could change, because the daemon runs it
 * with its own rights (root, usually).
 */
#ifndef EXTRES_TRUST_H
#define EXTRES_TRUST_H

#include <sys/types.h>

#include "base/err.h"

/*
 * Check `path` (a relative one from the working directory), naming it as
 * `what` ("discovery script") in messages. The path is walked from "/" the
 * way the kernel resolves it, following every symlink, and refused when:
 *
 *   - the file, a directory passed through, or a symlink followed is owned by
 *     a user other than root and geteuid();
 *   - the file is group- or world-writable;
 *   - a directory passed through is group- or world-writable without the
 *     sticky bit (with it, only an entry's owner may rename or remove the
 *     entry, and every entry passed through is owned by root or us).
 *
 * So nothing that decides which bytes get run, now or later, is in another
 * user's hands: not the file, not a directory above it, not a symlink on the
 * way. POSIX ACLs are not looked at.
 *
 * Returns 0; -EPERM with "<what> <path> could be modified by another user:
 * <reason>", where the reason names the entry at fault, its owner or its
 * mode; the lookup's errno (-ENOENT, -ENOTDIR, -ELOOP, -EACCES,
 * -ENAMETOOLONG) with "<what> <path>: <strerror>"; or -EINVAL for a NULL or
 * empty path.
 */
int extres_check_trusted(const char *path, const char *what,
			 struct extres_err *err);

/* No group named by extres.coordination-group. */
#define EXTRES_NO_GROUP ((gid_t)-1)

/*
 * The same rule for a file that the daemon shares with processes it trusts
 * and writes rather than runs (a coordination file), with two differences:
 * an entry that is group-writable is fine when its group is `group` (the
 * config's extres.coordination-group, EXTRES_NO_GROUP when unset), the
 * caller's effective group or one of its supplementary groups (so a file can
 * be shared with the Flink user's group: `SupplementaryGroups=flink`, or
 * root's `extresctl` trusts the group the operator named), and the file
 * itself may be missing (0 then: the directories that decide who may create
 * it were checked). A refusal for a group-writable entry ends with a hint
 * at extres.coordination-group.
 */
int extres_check_trusted_shared(const char *path, const char *what, gid_t group,
				struct extres_err *err);

/*
 * The gid of group `name` (getgrnam_r). 0; -ENOENT when there is no such
 * group; -EINVAL for a NULL or empty name; another negative errno when the
 * group database could not be read. *ret_gid is untouched on failure.
 */
int extres_group_gid(const char *name, gid_t *ret_gid);

#endif
