/* SPDX-License-Identifier: MIT */
/* The programs' default paths, in one place for extresd and extresctl. */
#ifndef EXTRES_PATHS_H
#define EXTRES_PATHS_H

/* The config read without -c. The man pages and README name it too; the
 * build's EXTRES_SYSCONF_CONFIG (extres_build.h) follows the install
 * prefix, so it is not used here: a /usr/local build would read another
 * file than the one documented. */
#define EXTRES_DEFAULT_CONFIG "/etc/extres/extres.yaml"
/* The mount point without one on the command line or in the config. */
#define EXTRES_DEFAULT_MOUNTPOINT "/run/extres"

#endif
