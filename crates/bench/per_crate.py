#!/usr/bin/env python3
"""A server's CPU per call, by crate: the samples of a `perf record` of the server, summed by
the crate of each symbol (its leading path; the kernel and libc apart), scaled to the CPU per
call `bench-drive` measured in the same window.

    perf record -F 4999 -g -p PID -o server.data -- sleep 3   # while bench-drive drives PID
    crates/bench/per_crate.py server.data --cpu-per-call 41.1 [--top 12]

`--cpu-per-call` is bench-drive's `cpu_us_per_call` of that run; without it, shares are printed.
"""

import argparse
import collections
import re
import subprocess
import sys

CRATE = re.compile(r"^[<&\s*]*(?:dyn\s+|impl\s+|mut\s+)*([A-Za-z_][A-Za-z0-9_]*)")
GROUPS = {
    "core": "core, alloc, std",
    "alloc": "core, alloc, std",
    "std": "core, alloc, std",
    "hashbrown": "core, alloc, std",
    "hyper": "hyper, http, httparse",
    "http": "hyper, http, httparse",
    "httparse": "hyper, http, httparse",
    "hyper_util": "hyper, http, httparse",
    "serde": "serde, serde_json",
    "serde_core": "serde, serde_json",
    "serde_json": "serde, serde_json",
    "mcp_fusion": "mcp_fusion (all its crates)",
    "mcp_fusion_wire": "mcp_fusion (all its crates)",
    "tokio": "tokio, tokio_util",
    "tokio_util": "tokio, tokio_util",
}


def crate_of(dso, symbol):
    if dso.startswith("[kernel"):
        return "kernel"
    if dso.startswith("libc") or dso.startswith("ld-linux"):
        return "libc (malloc, memmove, syscalls' wrappers)"
    if dso.startswith("[vdso]"):
        return "kernel"
    match = CRATE.match(symbol)
    name = match.group(1) if match else "(unknown)"
    return GROUPS.get(name, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data")
    parser.add_argument("--cpu-per-call", type=float)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    report = subprocess.run(
        ["perf", "report", "-i", args.data, "--no-children", "--sort", "dso,sym", "-g", "none",
         "-F", "overhead,dso,sym", "--stdio"],
        capture_output=True, text=True, check=True,
    ).stdout
    shares = collections.Counter()
    for line in report.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.match(r"([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(.*)$", line)
        if not match:
            continue
        shares[crate_of(match.group(2), match.group(3))] += float(match.group(1))
    total = sum(shares.values())
    if total == 0:
        sys.exit("no samples")
    for crate, share in shares.most_common(args.top):
        share /= total
        if args.cpu_per_call:
            print(f"{share * args.cpu_per_call:7.1f} µs  {crate}")
        else:
            print(f"{share * 100:6.1f} %   {crate}")


if __name__ == "__main__":
    main()
