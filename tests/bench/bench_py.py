# SPDX-License-Identifier: MIT
"""extres-bench-py: how Python readers read a property file, for scripts/bench.

    python3 bench_py.py -n ITERATIONS -r RUNS -x EXPECTED FILE...

For each way of reading (open: open(p).read(); pathlib: Path(p).read_text();
os: os.open + os.read + os.close), ITERATIONS reads per run after a warm-up,
RUNS runs, interleaved over the FILEs as extres-bench-read does so that load
drift hits every file alike. Every read must return EXPECTED. Prints, values
in ns per read:

    python VERSION
    result WAY FILE_INDEX MEDIAN MIN MAX

Exit 1 on a failed read, 2 on bad usage.
"""

import argparse
import os
import pathlib
import sys
import time


def read_open(p):
    with open(p) as f:
        return f.read()


def read_pathlib(p):
    return pathlib.Path(p).read_text()


def read_os(p):
    fd = os.open(p, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096).decode()
    finally:
        os.close(fd)


WAYS = (("open", read_open), ("pathlib", read_pathlib), ("os", read_os))


def time_reads(fn, path, n):
    t0 = time.perf_counter_ns()
    for _ in range(n):
        fn(path)
    return (time.perf_counter_ns() - t0) / n


def main():
    ap = argparse.ArgumentParser(prog="extres-bench-py")
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("-r", type=int, required=True)
    ap.add_argument("-x", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.n < 1 or a.r < 1:
        ap.error("-n and -r must be positive")
    print("python", sys.version.split()[0])
    for way, fn in WAYS:
        values = [[] for _ in a.files]
        for i, p in enumerate(a.files):
            got = fn(p)
            if got != a.x:
                print(f"extres-bench-py: {way}: {p} holds {got!r}, wanted {a.x!r}",
                      file=sys.stderr)
                return 1
            time_reads(fn, p, min(a.n, 100))
        for _ in range(a.r):
            for i, p in enumerate(a.files):
                values[i].append(time_reads(fn, p, a.n))
        for i, v in enumerate(values):
            v.sort()
            m = len(v)
            med = v[m // 2] if m % 2 else (v[m // 2 - 1] + v[m // 2]) / 2
            print(f"result {way} {i} {med:.1f} {v[0]:.1f} {v[-1]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
