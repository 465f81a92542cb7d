"""billing-server over HTTP under steady load for a long time, guards on, sessions opened and
closed all along: samples RSS, open descriptors, threads and live tasks every minute, checks
they are flat after the warm-up and that every call was answered, and writes the samples as
CSV and an SVG plot.

Usage: soak.py BILLING_SERVER FUSION_LOAD [--minutes 30] [--out DIR]
Standard library only; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile"))
import hostile  # noqa: E402  (the server wrapper and the request helpers)

WARMUP_MINUTES = 5


def sample(server: hostile.Server) -> dict[str, float]:
    pid = server.process.pid
    status = open(f"/proc/{pid}/status").read()
    rss = int(re.search(r"VmRSS:\s+(\d+)", status).group(1)) / 1024
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    stats = re.findall(r"tasks=(\d+) calls_in_flight=(\d+)", open(server.log_path, errors="replace").read())
    tasks = int(stats[-1][0]) if stats else -1
    return {"rss_mb": rss, "fds": fds, "threads": threads, "tasks": tasks}


def churn(server: hostile.Server, stop: threading.Event, opened: list[int]) -> None:
    """Opens a session and deletes it, twice a second."""
    conn = server.connection()
    while not stop.wait(0.5):
        try:
            status, headers, _ = hostile.post(conn, hostile.INITIALIZE, {})
            session = headers.get("mcp-session-id")
            if status == 200 and session:
                conn.request("DELETE", "/mcp", headers={"mcp-session-id": session})
                conn.getresponse().read()
                opened[0] += 1
        except (OSError, hostile.http.client.HTTPException):
            conn.close()
            conn = server.connection()
    conn.close()


def load(binary: str, url: str, seconds: int, clients: int, arguments: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [binary, "--url", url, "--clients", str(clients), "--duration", str(seconds), "--json", "--args", json.dumps(arguments)],
        stdout=subprocess.PIPE,
        text=True,
    )


def svg(samples: list[dict[str, float]], path: str) -> None:
    """Three panels over the minutes: RSS, descriptors and threads, live tasks."""
    series = [("RSS (MB)", ["rss_mb"]), ("open descriptors / threads", ["fds", "threads"]), ("live tasks", ["tasks"])]
    width, panel, left, top = 720, 170, 60, 30
    height = top + len(series) * (panel + 40)
    minutes = [s["minute"] for s in samples]
    span = max(minutes[-1], 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">']
    out.append(f'<rect width="{width}" height="{height}" fill="white"/>')
    out.append(f'<text x="{left}" y="18" font-size="14">billing-server soak: {int(span)} minutes, sampled every minute</text>')
    colors = ["#1f77b4", "#d62728"]
    for index, (title, keys) in enumerate(series):
        y0 = top + index * (panel + 40) + 20
        values = [s[key] for key in keys for s in samples]
        high = max(values) * 1.15 or 1
        out.append(f'<text x="{left}" y="{y0 - 6}">{title}</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{width - left - 20}" height="{panel}" fill="none" stroke="#999"/>')
        for tick in (0, 0.5, 1):
            y = y0 + panel - tick * panel
            out.append(f'<text x="{left - 6}" y="{y + 4:.0f}" text-anchor="end">{high * tick:.0f}</text>')
        for color, key in zip(colors, keys):
            points = " ".join(
                f"{left + (s['minute'] / span) * (width - left - 20):.1f},{y0 + panel - (s[key] / high) * panel:.1f}" for s in samples
            )
            out.append(f'<polyline points="{points}" fill="none" stroke="{color}" stroke-width="2"/>')
            if len(keys) > 1:
                out.append(f'<text x="{width - 150}" y="{y0 + 16 + 14 * keys.index(key)}" fill="{color}">{key}</text>')
        out.append(f'<text x="{width - 20}" y="{y0 + panel + 14}" text-anchor="end">minute {int(span)}</text>')
    out.append("</svg>")
    with open(path, "w") as file:
        file.write("\n".join(out) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("billing_server")
    parser.add_argument("fusion_load")
    parser.add_argument("--minutes", type=int, default=30)
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    seconds = args.minutes * 60
    failures = []
    # The stats line is logged at `info`.
    os.environ["RUST_LOG"] = "info,rmcp=warn"
    with tempfile.TemporaryDirectory() as workdir:
        # Guards on: a rate limit per caller, a concurrency cap with a queue, a timeout.
        flags = ["--rate-limit", "1000000/60", "--max-active", "16", "--max-queue", "64", "--timeout-ms", "5000"]
        flags += ["--session-idle-secs", "60", "--stats-secs", "60"]
        server = hostile.Server(args.billing_server, flags, workdir, "soak")
        url = f"http://{server.host}:{server.port}/mcp"
        try:
            # The load runs past the last sample, so every sample is taken under load.
            reads = load(args.fusion_load, url, seconds + 30, 6, {"action": "get_invoice", "id": "inv_2026_0001"})
            writes = load(
                args.fusion_load,
                url,
                seconds + 30,
                2,
                {"action": "pay_invoice", "id": "inv_2026_0003", "amount_cents": 1, "idempotency_key": "soak-payment"},
            )
            stop = threading.Event()
            opened = [0]
            churner = threading.Thread(target=churn, args=(server, stop, opened))
            churner.start()
            samples = []
            began = time.monotonic()
            for minute in range(args.minutes + 1):
                time.sleep(max(0.0, began + minute * 60 + 1 - time.monotonic()))
                row = {"minute": minute, **sample(server), "sessions_closed": opened[0]}
                samples.append(row)
                print("  " + "  ".join(f"{k} {v:g}" for k, v in row.items()), flush=True)
            stop.set()
            churner.join()
            reports = [json.loads(process.communicate()[0]) for process in (reads, writes)]
        finally:
            server.stop()
    with open(os.path.join(args.out, "soak.csv"), "w") as csv:
        keys = list(samples[0])
        csv.write(",".join(keys) + "\n")
        for row in samples:
            csv.write(",".join(f"{row[k]:g}" for k in keys) + "\n")
    svg(samples, os.path.join(args.out, "soak.svg"))

    calls = sum(report["calls"] for report in reports)
    answered = all(report["all_answered"] for report in reports)
    outcomes = {}
    for report in reports:
        for outcome, figures in report["by_outcome"].items():
            outcomes[outcome] = outcomes.get(outcome, 0) + figures["count"]
    print(f"\n{calls} calls ({calls / (seconds + 30):.0f}/s), outcomes {outcomes}, every one answered: {answered}")
    print(f"{opened[0]} sessions opened and closed")
    if not answered:
        failures.append("some calls got no answer")
    if opened[0] < args.minutes * 60:
        failures.append(f"only {opened[0]} sessions churned")
    # Flat after the warm-up: the last samples' mean against the first settled samples' mean.
    # Connections come and go with the clients, so descriptors and tasks move by a few either
    # way; a leak shows as growth that does not come back.
    settled = [row for row in samples if row["minute"] >= min(WARMUP_MINUTES, args.minutes // 2)]
    window = max(1, min(5, len(settled) // 3))
    first, last = settled[:window], settled[-window:]
    for key, slack in (("rss_mb", lambda v: v * 0.10 + 4), ("fds", lambda v: 8), ("threads", lambda v: 8), ("tasks", lambda v: 40)):
        before = sum(row[key] for row in first) / window
        after = sum(row[key] for row in last) / window
        ok = after <= before + slack(before)
        print(
            f"{'ok  ' if ok else 'FAIL'} {key}: {before:.1f} over minutes {first[0]['minute']}-{first[-1]['minute']}, "
            f"{after:.1f} over minutes {last[0]['minute']}-{last[-1]['minute']} (max {max(row[key] for row in settled):g})"
        )
        if not ok:
            failures.append(f"{key} grew from {before:.1f} to {after:.1f}")
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
