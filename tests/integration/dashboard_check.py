#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check a Grafana dashboard against the series a running extresd writes.

usage: dashboard_check.py DASHBOARD.json METRICS.prom

Every PromQL expression of the dashboard (panel targets and template
queries) is read; each extres_* name it uses must be a series name of
METRICS.prom (a .meta/metrics.prom), so a renamed or dropped metric fails.
Each panel must query at least one such series. Exit 0, or 1 with one line
per fault on stderr.
"""
import json
import re
import sys

NAME = re.compile(r"\bextres_[A-Za-z0-9_:]*")
SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{| )")


def exprs(node, where):
    """(where, text) of every query string under node."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = where
            if isinstance(node.get("title"), str):
                here = "panel '%s'" % node["title"]
            elif isinstance(node.get("name"), str):
                here = "variable '%s'" % node["name"]
            if key in ("expr", "definition") and isinstance(value, str):
                yield here, value
            elif key == "query" and isinstance(value, str) and "(" in value:
                yield here, value
            else:
                yield from exprs(value, here)
    elif isinstance(node, list):
        for item in node:
            yield from exprs(item, where)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        dashboard = json.load(f)
    with open(argv[2], encoding="utf-8") as f:
        written = set()
        for line in f:
            m = SAMPLE.match(line)
            if m:
                written.add(m.group(1))
    faults = []
    used = set()
    for where, text in exprs(dashboard, "dashboard"):
        names = set(NAME.findall(text))
        if not names:
            faults.append("%s: no extres series in '%s'" % (where, text))
        for name in sorted(names - written):
            faults.append("%s: %s is not written by extresd (in '%s')"
                          % (where, name, text))
        used |= names
    for panel in dashboard.get("panels", []):
        if not panel.get("targets"):
            faults.append("panel '%s' has no queries" % panel.get("title"))
    ids = [p.get("id") for p in dashboard.get("panels", [])]
    if len(ids) != len(set(ids)):
        faults.append("panel ids repeat: %s" % ids)
    for fault in faults:
        sys.stderr.write("dashboard: %s\n" % fault)
    if not faults:
        print("%d series checked: %s" % (len(used), " ".join(sorted(used))))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
