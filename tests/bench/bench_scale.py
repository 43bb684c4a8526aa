# SPDX-License-Identifier: MIT
"""extres-bench-scale: the Python half of `scripts/bench --scale`.

    bench_scale.py config INFOS PROPS GEN OUT
        writes a static-driver config of INFOS infos with PROPS properties
        each (index and p1..p{PROPS-1}) to OUT (through a rename); GEN > 0
        changes one value, info INFOS/2's p1, to "gen-GEN"
    bench_scale.py tree INFOS PROPS DIR
        lays out the bytes that config serves under DIR/gpu, read-only
    bench_scale.py reloads PID CONFIG INFOS PROPS MNT N
        N times: write generation r's config, SIGHUP PID, read the changed
        file (os.open/os.read: no isatty) until it holds the new value;
        prints "result reload MEDIAN MIN MAX" in ns from the signal to that
        read. Each wait has a 10 s deadline (exit 1).
"""

import os
import signal
import statistics
import sys
import time


def value(i, p):
    return str(i) if p == 0 else f"value-{i}-{p}"


def name(p):
    return "index" if p == 0 else f"p{p}"


def changed_info(infos):
    return infos // 2


def write_config(infos, props, gen, out):
    lines = [
        "external-resources: gpu",
        f"external-resource.gpu.amount: {infos}",
        "external-resource.gpu.driver: static",
        "external-resource.gpu.param.devices:",
    ]
    for i in range(infos):
        vals = [value(i, p) for p in range(props)]
        if gen > 0 and i == changed_info(infos) and props > 1:
            vals[1] = f"gen-{gen}"
        kv = ", ".join(f'{name(p)}: "{v}"' for p, v in enumerate(vals))
        lines.append(f"  - {{{kv}}}")
    tmp = out + ".new"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.rename(tmp, out)


def write_tree(infos, props, top):
    os.makedirs(os.path.join(top, "gpu"))
    for i in range(infos):
        d = os.path.join(top, "gpu", str(i))
        os.mkdir(d)
        for p in range(props):
            f = os.path.join(d, name(p))
            with open(f, "w") as fh:
                fh.write(value(i, p) + "\n")
            os.chmod(f, 0o444)
        os.chmod(d, 0o555)
    os.chmod(os.path.join(top, "gpu"), 0o555)


def read_os(path):
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, 4096)
    finally:
        os.close(fd)


def reloads(pid, config, infos, props, mnt, n):
    path = os.path.join(mnt, "gpu", str(changed_info(infos)), name(1))
    times = []
    for r in range(1, n + 1):
        # Alternate between two values, so that each reload changes one.
        gen = 1 + r % 2
        want = f"gen-{gen}\n".encode()
        write_config(infos, props, gen, config)
        t0 = time.perf_counter_ns()
        os.kill(pid, signal.SIGHUP)
        deadline = t0 + 10_000_000_000
        while read_os(path) != want:
            if time.perf_counter_ns() > deadline:
                print(f"extres-bench-scale: reload {r}: {path} does not hold "
                      f"{want!r} 10 s after SIGHUP", file=sys.stderr)
                return 1
        times.append(time.perf_counter_ns() - t0)
    print(f"result reload {statistics.median(times):.0f} {min(times)} {max(times)}")
    return 0


def main(argv):
    try:
        if argv[1] == "config" and len(argv) == 6:
            write_config(int(argv[2]), int(argv[3]), int(argv[4]), argv[5])
            return 0
        if argv[1] == "tree" and len(argv) == 5:
            write_tree(int(argv[2]), int(argv[3]), argv[4])
            return 0
        if argv[1] == "reloads" and len(argv) == 8:
            return reloads(int(argv[2]), argv[3], int(argv[4]), int(argv[5]),
                           argv[6], int(argv[7]))
    except (IndexError, ValueError):
        pass
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
