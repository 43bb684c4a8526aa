/* SPDX-License-Identifier: MIT */
/*
 * Permission errors that say what would work: which user may open a file,
 * and which owner and mode the trust rule (os/trust.h) accepts, so that an
 * operator fixes the file rather than guess.
 */
#ifndef EXTRES_ACCESS_H
#define EXTRES_ACCESS_H

#include "base/err.h"

/*
 * `path`, a `what` ("coordination file"), could not be opened for reading
 * and writing (EACCES): sets `err` to "cannot open WHAT PATH: Permission
 * denied: user U (uid N) may not write it (owner O, group G, mode M); it
 * works as user O or root, or for members of group G with mode M|g+rw
 * (chmod g+rw PATH)". When `path` does not exist, the same about creating
 * it in its directory. Returns -EACCES.
 */
int extres_err_access(struct extres_err *err, const char *what,
		      const char *path);

/*
 * After the trust rule refused `path` (err holds why), append the owner and
 * mode it accepts: "; it is accepted owned by root or user U, mode M
 * (chmod go-w PATH)". Nothing is added when `path` cannot be looked at, or
 * when the file itself is not at fault (a directory on its way is).
 */
void extres_trust_hint(struct extres_err *err, const char *path);

#endif
