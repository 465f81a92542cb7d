#!/usr/bin/env python3
"""Runs the benchmark servers round-robin under bench-drive and writes the side-by-side table.

    crates/bench/compare.py [--rounds 3] [--seconds 3] [--label NAME] [--docs docs/benchmarks.md]
                            [--check RATIO] [--only stdio|http-stateless|http-stateful] [--concurrency 1|16] [--call valid|invalid]
                            [--sdks] [--servers DIR] [--extra-cpu-us N] [--blocking-stdio]
    crates/bench/compare.py --guard crates/bench/guard.json [--update-guard] [--no-build]

Each row (transport, call, concurrency) runs every server once per round, the servers in turn
(in reverse order every other round), so that a slow minute of the machine falls on all of them;
the table shows each server's median over the rounds and its ratio to raw rmcp: the median of
the ratios of each round's pair. With --docs, the table and a chart
(docs/bench-LABEL.svg) replace the text between `<!-- bench:LABEL -->` and `<!-- /bench:LABEL -->`
in that file. With --check, the script fails when the framework's calls/s fall below RATIO
times raw rmcp's on any row, in this run and again when that row is measured a second time:
ratios measured in one run are stable where absolute numbers are not, and a row that falls once
by a noisy minute does not fall twice.

With --guard FILE, the rows, rounds and floors are those of FILE, which also holds the figures of
the last landed run: the script fails when, on any row, the framework's CPU per call relative to
raw rmcp's in the same round (the median over the rounds) is more than 10 % above the landed
figure, or its calls/s ratio is below the row's floor, naming the row; a row that fails is
measured again and fails the run only when it fails twice. --update-guard measures three times
and writes the medians into FILE, for the change that lands them.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RELEASE = os.path.join(ROOT, "target", "release")
TRANSPORTS = ["stdio", "http-stateless", "http-stateful"]
ROWS = [(t, call, c) for t in TRANSPORTS for (call, c) in [("valid", 1), ("valid", 16), ("invalid", 1), ("invalid", 16)]]
METRICS = ["calls_per_s", "p50_us", "p99_us", "cpu_us_per_call", "peak_rss_kib", "private_kib"]
# How much more CPU per call, relative to raw rmcp's, the guard lets pass against the landed figure.
REGRESSION = 0.10
# The runs whose medians --update-guard lands.
LANDING_RUNS = 3
# Where the servers are taken from: --servers DIR measures another build (an older commit's).
SERVERS = RELEASE


SDK = os.path.join(ROOT, "crates", "bench", "sdk")
# Extra flags for each of the two servers (--extra-cpu-us).
FLAGS: dict[str, list[str]] = {"raw rmcp": [], "framework": []}
# Raw rmcp's stdio rows on its blocking stdio() rather than stdio_pipes().
BLOCKING_STDIO = False
# Other SDKs' servers for the same tool, stdio only, set up by `sdk_servers` when asked.
OTHERS: dict[str, list[str]] = {}


def servers() -> dict[str, list[str]]:
    return {
        "raw rmcp": [os.path.join(SERVERS, "bench-raw"), *FLAGS["raw rmcp"]],
        "framework": [os.path.join(SERVERS, "bench-fusion"), *FLAGS["framework"]],
    }


def sdk_servers() -> dict[str, list[str]]:
    """The TypeScript SDK's server when node and npm are here, FastMCP's when python3 can make a
    venv: each installed from its pinned dependencies on first use."""
    found = {}
    ts = os.path.join(SDK, "ts")
    if shutil.which("node") and shutil.which("npm"):
        if not os.path.isdir(os.path.join(ts, "node_modules")):
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=ts, check=True)
        found["TypeScript SDK"] = ["node", os.path.join(ts, "server.mjs")]
    else:
        print("compare.py: no node and npm: the TypeScript SDK's server is left out", file=sys.stderr)
    python = os.path.join(SDK, "python")
    venv = os.path.join(python, ".venv", "bin", "python")
    if shutil.which("python3"):
        if not os.path.exists(venv):
            subprocess.run(["python3", "-m", "venv", os.path.join(python, ".venv")], check=True)
            subprocess.run([venv, "-m", "pip", "install", "-q", "-r", os.path.join(python, "requirements.txt")], check=True)
        found["FastMCP"] = [venv, os.path.join(python, "server.py")]
    return found


def command(server: list[str], transport: str) -> list[str]:
    if transport == "stdio":
        blocking = BLOCKING_STDIO and os.path.basename(server[0]) == "bench-raw"
        return server + (["--blocking-stdio"] if blocking else [])
    extra = ["--stateful"] if transport == "http-stateful" else []
    return server + ["--http", "127.0.0.1:{port}"] + extra


def drive(server: list[str], transport: str, call: str, c: int, seconds: float, warmup: float) -> dict:
    args = [os.path.join(RELEASE, "bench-drive"), "--transport", transport, "--call", call, "-c", str(c)]
    args += ["--seconds", str(seconds), "--warmup", str(warmup), "--"] + command(server, transport)
    out = subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def measure(rows, rounds: int, seconds: float, warmup: float) -> dict:
    """Medians over the rounds of each (row, server), with `ratio`: the median over the rounds
    of the server's calls/s against raw rmcp's in the same round. Paired by round, and the
    servers' order reversed every other round, a drift of the machine's speed during the run
    (another process, the CPU's clock) falls on both sides of a ratio instead of into it."""
    runs: dict = {}
    for round_ in range(1, rounds + 1):
        for row in rows:
            others = OTHERS if row[0] == "stdio" else {}
            order = list({**servers(), **others}.items())
            if round_ % 2 == 0:
                order.reverse()
            for name, server in order:
                report = drive(server, *row, seconds, warmup)
                runs.setdefault((row, name), []).append(report)
                print(f"round {round_}: {row[0]} {row[1]} c={row[2]} {name}: {report['calls_per_s']:.0f} calls/s, "
                      f"{report['cpu_us_per_call']:.0f} µs CPU/call, {report['peak_rss_kib'] / 1024:.1f} MB", file=sys.stderr)
    medians = {key: {m: statistics.median(r[m] for r in reports) for m in METRICS} for key, reports in runs.items()}
    for (row, name), reports in runs.items():
        raw = runs[(row, "raw rmcp")]
        medians[(row, name)]["ratio"] = statistics.median(r["calls_per_s"] / b["calls_per_s"] for r, b in zip(reports, raw))
        medians[(row, name)]["cpu_ratio"] = statistics.median(
            r["cpu_us_per_call"] / max(b["cpu_us_per_call"], 1e-9) for r, b in zip(reports, raw)
        )
    return medians


def table(rows, medians: dict) -> str:
    lines = [
        "| transport | call | c | calls/s: raw → framework | ratio | p50 / p99 µs: raw → framework | server CPU per call | peak RSS | private memory |",
        "|---|---|---:|---|---:|---|---|---|---|",
    ]
    for row in rows:
        raw, fw = medians[(row, "raw rmcp")], medians[(row, "framework")]
        lines.append(
            f"| {row[0]} | {row[1]} | {row[2]} | {raw['calls_per_s']:,.0f} → {fw['calls_per_s']:,.0f} "
            f"| {fw['ratio']:.2f} "
            f"| {raw['p50_us']:.0f} / {raw['p99_us']:.0f} → {fw['p50_us']:.0f} / {fw['p99_us']:.0f} "
            f"| {raw['cpu_us_per_call']:.0f} → {fw['cpu_us_per_call']:.0f} µs "
            f"| {raw['peak_rss_kib'] / 1024:.1f} → {fw['peak_rss_kib'] / 1024:.1f} MB "
            f"| {raw['private_kib'] / 1024:.1f} → {fw['private_kib'] / 1024:.1f} MB |"
        )
    return "\n".join(lines)


def others_table(rows, medians: dict) -> str:
    """Every server of the stdio rows, raw rmcp's figures the reference of the ratio."""
    lines = [
        "| server | call | c | calls/s | ratio to raw rmcp | p50 / p99 µs | server CPU per call | peak RSS | private memory |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for row in rows:
        if row[0] != "stdio":
            continue
        for name in [*servers(), *OTHERS]:
            m = medians[(row, name)]
            lines.append(
                f"| {name} | {row[1]} | {row[2]} | {m['calls_per_s']:,.0f} | {m['ratio']:.2f} "
                f"| {m['p50_us']:.0f} / {m['p99_us']:.0f} | {m['cpu_us_per_call']:.0f} µs "
                f"| {m['peak_rss_kib'] / 1024:.1f} MB | {m['private_kib'] / 1024:.1f} MB |"
            )
    return "\n".join(lines)


def chart(rows, medians: dict, title: str, path: str) -> None:
    """Calls/s of each row, raw rmcp and the framework side by side, the ratio at the right."""
    width, left, bar, gap = 760, 190, 11, 12
    top = 40
    height = top + len(rows) * (2 * bar + gap) + 30
    high = max(m["calls_per_s"] for m in medians.values()) * 1.05
    plot = width - left - 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="18" font-size="14">{title}</text>',
           f'<rect x="{left}" y="24" width="10" height="10" fill="#999"/><text x="{left + 14}" y="33">raw rmcp</text>',
           f'<rect x="{left + 90}" y="24" width="10" height="10" fill="#1f77b4"/><text x="{left + 104}" y="33">framework</text>',
           f'<text x="{width - 10}" y="33" text-anchor="end">ratio</text>']
    for index, row in enumerate(rows):
        y = top + index * (2 * bar + gap)
        out.append(f'<text x="{left - 8}" y="{y + bar + 4}" text-anchor="end">{row[0]} {row[1]} c={row[2]}</text>')
        for offset, (name, color) in enumerate([("raw rmcp", "#999"), ("framework", "#1f77b4")]):
            value = medians[(row, name)]["calls_per_s"]
            out.append(f'<rect x="{left}" y="{y + offset * bar}" width="{value / high * plot:.1f}" height="{bar - 1}" fill="{color}"/>')
        ratio = medians[(row, "framework")]["ratio"]
        out.append(f'<text x="{width - 10}" y="{y + bar + 4}" text-anchor="end">{ratio:.2f}</text>')
    out.append(f'<text x="{left}" y="{height - 8}">calls/s, 0 to {high:,.0f}</text>')
    out.append("</svg>")
    with open(path, "w") as file:
        file.write("\n".join(out) + "\n")


def write_docs(path: str, label: str, text: str) -> None:
    start, end = f"<!-- bench:{label} -->", f"<!-- /bench:{label} -->"
    with open(path) as file:
        doc = file.read()
    if start not in doc or end not in doc:
        sys.exit(f"compare.py: {path} has no {start} … {end} markers")
    head, rest = doc.split(start, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as file:
        file.write(f"{head}{start}\n{text}\n{end}{tail}")


def below(rows, medians: dict, check: float) -> list:
    """The rows where the framework's ratio to raw rmcp is under `check`, each said."""
    low = [row for row in rows if medians[(row, "framework")]["ratio"] < check]
    for row in low:
        ratio = medians[(row, "framework")]["ratio"]
        print(f"compare.py: {row[0]} {row[1]} c={row[2]}: the framework makes {ratio:.2f}× raw rmcp's calls/s, below {check}", file=sys.stderr)
    return low


def row_name(row) -> str:
    return f"{row[0]} {row[1]} c={row[2]}"


class GuardError(Exception):
    """A guard file that cannot be read, said with where in it."""


def load_guard(path: str) -> dict:
    """The guard file, checked: its settings, and rows each with a floor and, once a run has
    landed them, the figures of that run."""
    try:
        with open(path) as file:
            guard = json.load(file)
    except OSError as error:
        raise GuardError(f"{path}: cannot be read: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise GuardError(f"{path}: not JSON: {error.msg} at line {error.lineno}, column {error.colno}") from error

    def number(value, where: str, low: float, integer: bool = False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low or (integer and value != int(value)):
            kind = "an integer" if integer else "a number"
            raise GuardError(f"{path}: {where}: expected {kind} of at least {low}, found {json.dumps(value)}")
        return value

    if not isinstance(guard, dict):
        raise GuardError(f"{path}: expected an object with \"settings\" and \"rows\", found {type(guard).__name__}")
    settings = guard.get("settings")
    if not isinstance(settings, dict):
        raise GuardError(f"{path}: settings: expected an object with rounds, seconds and warmup")
    number(settings.get("rounds"), "settings.rounds", 1, integer=True)
    number(settings.get("seconds"), "settings.seconds", 0.1)
    number(settings.get("warmup"), "settings.warmup", 0)
    if not isinstance(settings.get("profile"), str) or not re.fullmatch(r"[a-z][a-z0-9_-]*", settings["profile"]):
        raise GuardError(f"{path}: settings.profile: expected the name of a cargo profile, found {json.dumps(settings.get('profile'))}")
    rows = guard.get("rows")
    if not isinstance(rows, list) or not rows:
        raise GuardError(f"{path}: rows: expected a list of rows, each with transport, call, c and floor")
    seen = set()
    for index, entry in enumerate(rows):
        where = f"rows[{index}]"
        if not isinstance(entry, dict):
            raise GuardError(f"{path}: {where}: expected an object, found {json.dumps(entry)}")
        row = (entry.get("transport"), entry.get("call"), entry.get("c"))
        if row not in ROWS:
            known = ", ".join(sorted({t for t, _, _ in ROWS}))
            raise GuardError(f"{path}: {where}: no such row {json.dumps(list(row))}: transport is one of {known}, "
                             "call valid or invalid, c 1 or 16")
        if row in seen:
            raise GuardError(f"{path}: {where}: {row_name(row)} is listed twice")
        seen.add(row)
        number(entry.get("floor"), f"{where}.floor", 0)
        landed = entry.get("landed")
        if landed is not None:
            if not isinstance(landed, dict):
                raise GuardError(f"{path}: {where}.landed: expected an object, found {json.dumps(landed)}")
            number(landed.get("cpu_ratio"), f"{where}.landed.cpu_ratio", 0.001)
    return guard


def guard_rows(guard: dict) -> list:
    return [(e["transport"], e["call"], e["c"]) for e in guard["rows"]]


def guard_failures(guard: dict, rows, medians: dict) -> list:
    """The rows that fail the guard, each said: below its floor, or more CPU per call than the
    landed figure allows. A row the guard has no landed figure for is held to its floor only."""
    entries = {(e["transport"], e["call"], e["c"]): e for e in guard["rows"]}
    failed = []
    for row in rows:
        entry, fw = entries[row], medians[(row, "framework")]
        problems = []
        if fw["ratio"] < entry["floor"]:
            problems.append(f"makes {fw['ratio']:.2f}× raw rmcp's calls/s, below the floor of {entry['floor']}×")
        landed = entry.get("landed")
        if landed is not None:
            change = fw["cpu_ratio"] / landed["cpu_ratio"] - 1
            said = (f"spends {fw['cpu_ratio']:.2f}× raw rmcp's CPU per call ({fw['cpu_us_per_call']:.1f} µs), "
                    f"{100 * change:+.0f} % against the landed {landed['cpu_ratio']:.2f}×")
            if change > REGRESSION:
                problems.append(f"{said}: a regression over {100 * REGRESSION:.0f} %")
            else:
                print(f"compare.py: {row_name(row)}: the framework {said}", file=sys.stderr)
        for problem in problems:
            print(f"compare.py: {row_name(row)}: the framework {problem}", file=sys.stderr)
        if problems:
            failed.append(row)
    return failed


def update_guard(path: str, guard: dict, rows, medians: dict) -> None:
    """Writes this run's figures as the landed ones of each measured row."""
    for entry in guard["rows"]:
        row = (entry["transport"], entry["call"], entry["c"])
        if row not in rows:
            continue
        raw, fw = medians[(row, "raw rmcp")], medians[(row, "framework")]
        entry["landed"] = {
            "cpu_ratio": round(fw["cpu_ratio"], 3),
            "ratio": round(fw["ratio"], 3),
            "raw_cpu_us_per_call": round(raw["cpu_us_per_call"], 1),
            "framework_cpu_us_per_call": round(fw["cpu_us_per_call"], 1),
            "raw_calls_per_s": round(raw["calls_per_s"]),
            "framework_calls_per_s": round(fw["calls_per_s"]),
        }
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip()
    guard["measured"] = {"on": commit or "unknown", "cpu": cpu_model(), "cores": os.cpu_count()}
    with open(path, "w") as file:
        file.write(json.dumps(guard, indent=2, ensure_ascii=False) + "\n")
    print(f"compare.py: {path}: the landed figures are this run's", file=sys.stderr)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as file:
            for line in file:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, help="rounds of every row (default 3, or the guard file's)")
    parser.add_argument("--seconds", type=float, help="measured seconds per run (default 3, or the guard file's)")
    parser.add_argument("--warmup", type=float,
                        help="unmeasured seconds before each run's window (default 1, or the guard file's)")
    parser.add_argument("--only", choices=TRANSPORTS, action="append", help="rows of these transports only")
    parser.add_argument("--concurrency", type=int, choices=[1, 16], action="append", help="rows of these concurrencies only")
    parser.add_argument("--call", choices=["valid", "invalid"], action="append", help="rows of these calls only")
    parser.add_argument("--label", default="now", help="names the chart and the docs markers")
    parser.add_argument("--docs", help="the markdown file whose bench:LABEL section to replace")
    parser.add_argument("--check", type=float, help="fail when the framework's calls/s ratio to raw rmcp is below this")
    parser.add_argument("--profile",
                        help="the cargo profile the binaries are built with: release (the default), server (fat LTO, one "
                             "codegen unit), or ci (the guard file's: CI's shared build, release where the benchmark runs)")
    parser.add_argument("--no-build", action="store_true", help="use the binaries already built with --profile")
    parser.add_argument("--sdks", action="store_true", help="also the TypeScript SDK's and FastMCP's servers (stdio rows)")
    parser.add_argument("--servers", metavar="DIR", help="take bench-raw and bench-fusion from DIR (another build); bench-drive stays this one")
    parser.add_argument("--guard", metavar="FILE", help="the rows, rounds, floors and landed figures to hold the framework to")
    parser.add_argument("--update-guard", action="store_true", help="with --guard: write this run's figures into FILE")
    parser.add_argument("--extra-cpu-us", type=int, default=0, metavar="N",
                        help="the framework spends N µs more CPU in every call: a regression made on purpose")
    parser.add_argument("--blocking-stdio", action="store_true",
                        help="raw rmcp on its blocking stdio() instead of stdio_pipes() (the comparison before rmcp 3.6)")
    args = parser.parse_args()
    guard = None
    if args.guard:
        try:
            guard = load_guard(args.guard)
        except GuardError as error:
            print(f"compare.py: {error}", file=sys.stderr)
            return 2
    elif args.update_guard:
        parser.error("--update-guard needs --guard FILE")
    settings = guard["settings"] if guard else {"rounds": 3, "seconds": 3.0, "warmup": 1.0, "profile": "release"}
    for name in ("rounds", "seconds", "warmup", "profile"):
        if getattr(args, name) is None:
            setattr(args, name, settings[name])
    if args.update_guard and any(getattr(args, n) != settings[n] for n in ("rounds", "seconds", "warmup", "profile")):
        parser.error("--update-guard measures with the guard file's settings: leave out --rounds, --seconds, --warmup and --profile")
    if args.rounds < 1 or args.seconds <= 0 or args.warmup < 0:
        parser.error("--rounds must be at least 1, --seconds positive and --warmup not negative")
    if args.extra_cpu_us < 0:
        parser.error("--extra-cpu-us must not be negative")
    if args.extra_cpu_us:
        FLAGS["framework"] += ["--extra-cpu-us", str(args.extra_cpu_us)]
    if args.update_guard and args.extra_cpu_us:
        parser.error("--update-guard with --extra-cpu-us would land a slowdown made on purpose")

    global RELEASE, SERVERS
    RELEASE = SERVERS = os.path.join(ROOT, "target", args.profile)
    if args.servers:
        SERVERS = os.path.abspath(args.servers)
    if not args.no_build:
        subprocess.run(["cargo", "build", "--profile", args.profile, "-q", "-p", "fusion-bench"], cwd=ROOT, check=True)
    print(f"compare.py: the servers of target/{args.profile} (--profile {args.profile})", file=sys.stderr)
    rows = [
        row
        for row in (guard_rows(guard) if guard else ROWS)
        if (not args.only or row[0] in args.only)
        and (not args.concurrency or row[2] in args.concurrency)
        and (not args.call or row[1] in args.call)
    ]
    if args.sdks:
        OTHERS.update(sdk_servers())
    if not rows:
        parser.error("no row is left by --only, --concurrency and --call")
    global BLOCKING_STDIO
    BLOCKING_STDIO = args.blocking_stdio
    medians = measure(rows, args.rounds, args.seconds, args.warmup)
    text = table(rows, medians)
    if OTHERS and any(row[0] == "stdio" for row in rows):
        text += "\n\nThe same stdio rows with the other SDKs' servers:\n\n" + others_table(rows, medians)
    print(text)
    if args.docs:
        svg = f"bench-{args.label}.svg"
        chart(rows, medians, f"calls/s, medians of {args.rounds} rounds ({args.label})", os.path.join(os.path.dirname(args.docs), svg))
        write_docs(args.docs, args.label, f"{text}\n\n![calls/s, raw rmcp and the framework]({svg})")
    if args.check is not None:
        low = below(rows, medians, args.check)
        if low:
            # A second run of the rows that fell: a regression stays below, a noisy minute
            # of the machine does not come back.
            print("compare.py: measuring those rows again", file=sys.stderr)
            low = below(low, measure(low, args.rounds, args.seconds, args.warmup), args.check)
        if low:
            return 1
        print(f"compare.py: every row at or above {args.check}× raw rmcp's calls/s", file=sys.stderr)
    if guard:
        failed = guard_failures(guard, rows, medians)
        if failed:
            print(f"compare.py: measuring again: {', '.join(map(row_name, failed))}", file=sys.stderr)
            again = measure(failed, args.rounds, args.seconds, args.warmup)
            failed = guard_failures(guard, failed, again)
            medians.update(again)
        if args.update_guard:
            # The landed figures are what later runs are held to: the median of three runs, so
            # that one slow or quick run does not make the guard lax or strict.
            runs = [medians] + [measure(rows, args.rounds, args.seconds, args.warmup) for _ in range(LANDING_RUNS - 1)]
            landed = {key: {m: statistics.median(run[key][m] for run in runs) for m in runs[0][key]} for key in medians}
            update_guard(args.guard, guard, rows, landed)
        elif failed:
            print(f"compare.py: the guard fails on {', '.join(map(row_name, failed))} ({args.guard})", file=sys.stderr)
            return 1
        else:
            print(f"compare.py: every row of {args.guard} holds: within {100 * REGRESSION:.0f} % of the landed CPU "
                  "per call and above its floor", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
