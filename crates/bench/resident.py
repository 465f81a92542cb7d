#!/usr/bin/env python3
"""Which code of a running server is resident: the pages of its executable that are mapped,
summed per section and per crate.

    crates/bench/resident.py PID [--top N]

Reads /proc/PID/maps and /proc/PID/pagemap (root, or the same user with CAP_SYS_ADMIN, sees
the present bits) and attributes every resident page of the executable to the symbols it holds
(`nm --defined-only -S -C`), by bytes. A page holds code of several crates; each gets its
share. Pages that hold no symbol (unwind tables, strings) are summed per section
(`readelf -S`).
"""

import argparse
import bisect
import collections
import os
import re
import struct
import subprocess
import sys

PAGE = os.sysconf("SC_PAGE_SIZE")
CRATE = re.compile(r"^[<&\s*]*(?:dyn\s+|impl\s+|mut\s+)*([A-Za-z_][A-Za-z0-9_]*)")


def mappings(pid, exe):
    """The executable's mappings: (start, end, file offset)."""
    found = []
    with open(f"/proc/{pid}/maps") as maps:
        for line in maps:
            parts = line.split()
            if len(parts) >= 6 and os.path.realpath(parts[5]) == exe:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                found.append((start, end, int(parts[2], 16)))
    return found


def resident_pages(pid, start, end):
    """Addresses of the present pages in [start, end)."""
    present = []
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        pagemap.seek(start // PAGE * 8)
        data = pagemap.read((end - start) // PAGE * 8)
    for i in range(len(data) // 8):
        (entry,) = struct.unpack_from("<Q", data, i * 8)
        if entry >> 63:
            present.append(start + i * PAGE)
    return present


def sections(exe):
    """(file offset, size, virtual address, name) of the sections that occupy memory."""
    out = subprocess.run(["readelf", "-SW", exe], check=True, capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)\s+\S+\s+(\S*A\S*)", line)
        if m:
            name, addr, off, size = m.group(1), int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)
            found.append((addr, size, name))
    return found


def symbols(exe):
    """Sorted (virtual address, size, crate) of the executable's sized symbols."""
    out = subprocess.run(["nm", "--defined-only", "-S", "-C", exe], check=True, capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4:
            continue
        try:
            addr, size = int(parts[0], 16), int(parts[1], 16)
        except ValueError:
            continue
        m = CRATE.match(parts[3])
        found.append((addr, size, m.group(1) if m else "?"))
    found.sort()
    # Aliases share an address; keep one of each.
    return [s for i, s in enumerate(found) if i == 0 or s[0] != found[i - 1][0]]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pid", type=int)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    exe = os.path.realpath(f"/proc/{args.pid}/exe")
    maps = mappings(args.pid, exe)
    if not maps:
        sys.exit(f"resident: no mapping of {exe} in process {args.pid}")
    # The load bias: a PIE's first mapping (file offset 0) sits at its link address 0.
    bias = min(start - offset for start, _, offset in maps)
    pages = sorted({p for start, end, _ in maps for p in resident_pages(args.pid, start, end)})
    if not pages:
        sys.exit("resident: no present bits (pagemap needs root)")

    secs = sections(exe)
    per_section = collections.Counter()
    for page in pages:
        link = page - bias
        for addr, size, name in secs:
            overlap = min(link + PAGE, addr + size) - max(link, addr)
            if overlap > 0:
                per_section[name] += overlap

    syms = symbols(exe)
    starts = [s[0] for s in syms]
    per_crate = collections.Counter()
    text = next(((a, s) for a, s, n in secs if n == ".text"), None)
    for page in pages:
        link = page - bias
        if text is None or not (text[0] <= link < text[0] + text[1]):
            continue
        i = max(bisect.bisect_right(starts, link) - 1, 0)
        # Symbols may start before the page and run into it; step back over a few.
        while i > 0 and syms[i - 1][0] + syms[i - 1][1] > link:
            i -= 1
        covered = 0
        while i < len(syms) and syms[i][0] < link + PAGE:
            addr, size, crate = syms[i]
            overlap = min(link + PAGE, addr + size) - max(link, addr)
            if overlap > 0:
                per_crate[crate] += overlap
                covered += overlap
            i += 1
        if covered < PAGE:
            per_crate["(between symbols)"] += PAGE - covered

    total = len(pages) * PAGE
    print(f"{exe}: {total / 1e6:.1f} MB of the executable resident ({len(pages)} pages)")
    print("per section:")
    for name, size in per_section.most_common():
        print(f"  {size / 1e6:6.2f} MB  {name}")
    print(f"code (.text) per crate, top {args.top}:")
    for crate, size in per_crate.most_common(args.top):
        print(f"  {size / 1e6:6.2f} MB  {crate}")


if __name__ == "__main__":
    main()
