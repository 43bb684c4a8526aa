#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a FUSE request's time goes, from a tracefs text trace.

Reads the trace of fuse:fuse_request_send, fuse:fuse_request_end and
sched:sched_switch, taken with a clock whose times from two CPUs compare:
mono (seconds), or x86-tsc (cycles) with two "extres-clock NS" marks that
carry CLOCK_MONOTONIC to turn cycles into seconds. Prints, per opcode, the median and 90th percentile of:

  hand-off  from the reader sending the request to the daemon thread that
            answered it running (the reader going to sleep, the wake-up)
  daemon    from that thread running to its reply ending the request
            (libfuse, extresd's handler, the write or the ring commit)
  back      from the reply to the reader running again (its wake-up)
  total     from send to the reader running again

and how often the answering thread ran on the reader's CPU. Used by
scripts/trace-requests.

usage: trace_requests.py TRACE_FILE READER_PID LABEL
"""
import bisect
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s+(.*)$")
SEND = re.compile(r"connection (\d+) req (\d+) opcode \d+ \((\w+)\)")
END = re.compile(r"connection (\d+) req (\d+) ")
SWITCH = re.compile(r"next_comm=.* next_pid=(\d+) ")
MARK = re.compile(r"extres-clock (\d+)")


def pct(values, p):
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))
    return values[k]


def main():
    path, reader, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sends = {}  # (conn, unique) -> (t, cpu, opcode)
    ends = {}  # (conn, unique) -> (t, cpu, tid)
    switch_in = {}  # pid -> [t, ...] in order
    marks = []  # (t, CLOCK_MONOTONIC ns)
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            pid, cpu, t, event, rest = int(m[2]), int(m[3]), float(m[4]), m[5], m[6]
            if event == "fuse_request_send" and pid == reader:
                s = SEND.search(rest)
                if s:
                    sends[(s[1], s[2])] = (t, cpu, s[3])
            elif event == "fuse_request_end":
                e = END.search(rest)
                if e:
                    ends[(e[1], e[2])] = (t, cpu, pid)
            elif event == "sched_switch":
                s = SWITCH.search(rest)
                if s:
                    switch_in.setdefault(int(s[1]), []).append(t)
            elif event == "tracing_mark_write":
                s = MARK.search(rest)
                if s:
                    marks.append((t, int(s[1])))
    # Ticks per second: 1 for a clock in seconds, else from the marks.
    scale = 1.0
    if len(marks) >= 2 and marks[-1][1] > marks[0][1]:
        ticks = marks[-1][0] - marks[0][0]
        if ticks > 1e6:  # cycles, not seconds
            scale = ticks / ((marks[-1][1] - marks[0][1]) / 1e9)

    # The trace is in time order, so each PID's switch-ins are sorted.
    def last_before(pid, lo, hi):
        times = switch_in.get(pid, [])
        k = bisect.bisect_left(times, hi) - 1
        return times[k] if k >= 0 and times[k] > lo else None

    def first_after(pid, lo):
        times = switch_in.get(pid, [])
        k = bisect.bisect_right(times, lo)
        return times[k] if k < len(times) else None

    rows = {}
    for key, (ts, cpu_s, op) in sends.items():
        if key not in ends:
            continue
        te, cpu_e, tid = ends[key]
        back = first_after(reader, te)
        if back is None:
            continue
        r = rows.setdefault(op, {"hand": [], "daemon": [], "back": [], "total": [],
                                 "same": 0, "running": 0, "n": 0})
        r["n"] += 1
        r["same"] += cpu_e == cpu_s
        r["total"].append(back - ts)
        r["back"].append(back - te)
        served = last_before(tid, ts, te)
        if served is None:
            # The thread was running already (it never slept between).
            r["running"] += 1
        else:
            r["hand"].append(served - ts)
            r["daemon"].append(te - served)
    if not rows:
        print(f"{label}: no request of PID {reader} traced")
        return 1
    for op, r in sorted(rows.items()):
        us = lambda v, p: pct(v, p) * 1e6 / scale
        print(f"{label} {op}: {r['n']} requests, answered on the reader's CPU "
              f"{100 * r['same'] / r['n']:.0f}%, by a thread already running "
              f"{100 * r['running'] / r['n']:.0f}%")
        print(f"  {'us':<9}{'median':>8}{'p90':>8}")
        for part in ("hand", "daemon", "back", "total"):
            name = {"hand": "hand-off"}.get(part, part)
            print(f"  {name:<9}{us(r[part], 50):8.1f}{us(r[part], 90):8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
