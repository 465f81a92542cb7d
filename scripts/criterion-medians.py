#!/usr/bin/env python3
"""Prints the median of every criterion benchmark under target/criterion as a Markdown table.

Usage: scripts/criterion-medians.py [FILTER]   (run after `cargo bench`; FILTER keeps ids containing it)
"""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent / "target" / "criterion"
wanted = sys.argv[1] if len(sys.argv) > 1 else ""


def human(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


rows = []
for estimates in sorted(root.glob("**/new/estimates.json")):
    bench = json.loads((estimates.parent / "benchmark.json").read_text())
    if wanted not in bench["full_id"]:
        continue
    median = json.loads(estimates.read_text())["median"]
    ci = median["confidence_interval"]
    row = f"| `{bench['full_id']}` | {human(median['point_estimate'])} | {human(ci['lower_bound'])} – {human(ci['upper_bound'])} |"
    throughput = bench.get("throughput") or {}
    if "Bytes" in throughput:
        mib_s = throughput["Bytes"] / (median["point_estimate"] / 1e9) / (1 << 20)
        row = row[:-1] + f"({mib_s:.0f} MiB/s) |"
    rows.append(row)

print("| benchmark | median | 95% CI of the median |")
print("|---|---|---|")
print("\n".join(rows))
