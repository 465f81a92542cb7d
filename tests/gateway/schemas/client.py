#!/usr/bin/env python3
"""fusion-gateway's argument validation on the schemas other people's SDKs write: a FastMCP
server (pydantic models, fastmcp_server.py) and a TypeScript SDK server (Zod, ts_server.mjs)
mounted together as `py` and `ts`, and the corpus of cases.py called through the gateway with
the official Python MCP SDK.

    client.py [--gateway FUSION_GATEWAY] [--only SUBSTRING] [--json OUT] [--formats report]

First every case is called on each upstream directly, to prove the corpus right (a correct
call the upstream refuses is a corpus bug) and to note which bad calls the upstream silently
accepts: those only the gateway can catch. Then through the gateway: a correct call must be
forwarded and get the echo the upstream gave directly; a bad call must be refused by the
gateway itself (the upstream's CALL_LOG shows no call) with a <validation_error> line for the
case's path. The inputSchemas each server publishes go to target/gateway-schemas/tools.json.

Prints one PASS or FAIL line per case and exits 1 if any failed (format cases count unless
`--formats report`); nothing waits without a limit.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import sys
import time
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

from cases import SERVERS, STRICT, Case, selected

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
RUN_LIMIT_S = 150
REQUEST_LIMIT_S = 20
LISTED_LIMIT_S = 40


@dataclass
class Answer:
    """What one tools/call came back with."""

    outcome: str  # "ok", "error" (isError) or "exception" (a JSON-RPC error, a time-out)
    text: str
    echo: Any = None  # a success's JSON
    lines: list[str] | None = None  # a <validation_error>'s "path: Sentence." lines
    reached: bool | None = None  # through the gateway: whether the upstream logged the call

    @property
    def paths(self) -> list[str]:
        return [line.split(": ", 1)[0] for line in self.lines or []]


def validation_lines(text: str) -> list[str] | None:
    """The `path: Sentence.` lines of a <validation_error> envelope (its `<field name="path">`
    elements, or plain `path: Sentence.` lines), or None when the text is not one."""
    if not text.lstrip().startswith("<validation_error"):
        return None
    lines = []
    for line in text.splitlines()[1:]:
        if field_line := re.fullmatch(r'<field name="([^"]*)">(.*)</field>', line.strip()):
            lines.append(f"{html.unescape(field_line[1])}: {html.unescape(field_line[2])}")
        elif not line.startswith("<") and ": " in line:
            lines.append(line.strip())
    return lines


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> Answer:
    try:
        with anyio.fail_after(REQUEST_LIMIT_S):
            result = await session.call_tool(name, args)
    except Exception as error:  # noqa: BLE001 (a JSON-RPC error or a time-out is an answer here)
        return Answer("exception", f"{type(error).__name__}: {error}")
    blocks = [b.text for b in result.content or [] if isinstance(b, types.TextContent)]
    text = "\n".join(blocks)
    if result.is_error:
        return Answer("error", text, lines=validation_lines(text))
    echo = result.structured_content
    if echo is None:
        # The upstream's echo is the first block; a warning may ride after it.
        try:
            echo = json.loads(blocks[0] if blocks else "")
        except json.JSONDecodeError:
            echo = text
    return Answer("ok", text, echo=echo)


def same(a: Any, b: Any) -> bool:
    """JSON equality that, unlike ==, tells 1 from 1.0 from True."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


DROPPED = object()


def at(value: Any, path: str) -> Any:
    """The value at a dot-joined field path, or DROPPED when there is none."""
    for step in [] if path == "(root)" else path.split("."):
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return DROPPED
    return value


def same_at(read: Any, sent: Any, path: str) -> bool:
    """Whether the upstream read the value at `path` as it was sent (a bad call it did not mind)."""
    a, b = at(read, path), at(sent, path)
    return a is b if DROPPED in (a, b) else same(a, b)


def read_as(answer: Answer, case: Case) -> str:
    """How the upstream called directly took a bad call: refused, or what it made of the path."""
    if answer.outcome != "ok":
        return "refused"
    value = at(answer.echo, case.path or "(root)")
    return f"SILENTLY ACCEPTED, {case.path} read as " + (
        "nothing (dropped)" if value is DROPPED else clip(json.dumps(value), 80)
    )


def clip(text: str, limit: int = 240) -> str:
    text = text.replace("\n", " | ")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def said(answer: Answer) -> str:
    """An answer in one line."""
    if answer.lines is not None:
        return " / ".join(answer.lines)
    if answer.outcome == "ok":
        return "answered " + clip(json.dumps(answer.echo), 160)
    return f"{answer.outcome}: {clip(answer.text)}"


@dataclass
class Verdict:
    server: str
    case: Case
    passed: bool
    kind: str  # what happened: "forwarded", "refused", "bad call forwarded", "corpus bug", ...
    detail: str
    direct: Answer
    gateway: Answer


def names_field(text: str, path: str) -> bool:
    """Whether an upstream's refusal names the field at `path` (pydantic writes `cc.1` on a line
    of its own, Zod a path of keys and indices). The envelope quotes the upstream's words with
    their line breaks written as `\\n`."""
    text = text.replace("\\n", "\n")
    return re.search(rf"(?<![\w.]){re.escape(path)}(?![\w])", text) is not None


def judge(server: str, case: Case, direct: Answer, gateway: Answer) -> tuple[bool, str, str]:
    """Whether the gateway did right by `case` (and the corpus is right): passed, kind, detail."""
    if case.correct:
        if direct.outcome != "ok":
            return False, "corpus bug", f"the upstream itself refuses it: {said(direct)}"
        if gateway.outcome != "ok":
            return False, "correct call refused", said(gateway)
        if not gateway.reached:
            return False, "answered without the upstream", said(gateway)
        if not same(gateway.echo, direct.echo):
            return False, "forwarded changed", f"the upstream read {said(gateway)}; direct, {said(direct)}"
        return True, "forwarded", "echo as direct"
    if case.group == "read":
        if gateway.outcome != "ok" or not gateway.reached:
            return False, "spelled number not read", said(gateway)
        if not same(at(gateway.echo, case.path), json.loads(at(case.args, case.path))):
            return False, "read as something else", said(gateway)
        if 'code="ARGUMENTS_CONVERTED"' not in gateway.text or case.path not in gateway.text:
            return False, "read without its warning", said(gateway)
        return True, "read, with a warning", clip(gateway.text)
    if direct.outcome == "ok" and same_at(direct.echo, case.args, case.path):
        return False, "corpus bug", f"the upstream accepts it and reads {case.path} as sent"
    # A mount leaves formats to its upstream unless it asserts them.
    if case.group == "format" and server != STRICT and gateway.reached:
        if gateway.outcome != "ok" and names_field(gateway.text, case.path or ""):
            return True, "refused by the upstream", clip(gateway.text)
        return False, "bad call not refused at its field", said(gateway)
    if gateway.reached or gateway.lines is None:
        return False, "bad call forwarded", said(gateway)
    if case.path not in gateway.paths:
        return False, "refused at the wrong path", said(gateway)
    return True, "refused", said(gateway)


# ---- the servers -----------------------------------------------------------------------------


def upstream_command(server: str, node: str) -> list[str]:
    if server in ("py", STRICT):
        return [sys.executable, str(HERE / "fastmcp_server.py")]
    return [node, str(HERE / "ts_server.mjs")]


async def open_session(stack: AsyncExitStack, command: list[str], env: dict[str, str], log: Path) -> ClientSession:
    errlog = stack.enter_context(open(log, "a", encoding="utf-8"))  # noqa: SIM115
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=str(HERE))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=REQUEST_LIMIT_S))
    with anyio.fail_after(LISTED_LIMIT_S):
        await session.initialize()
    return session


def gateway_config(work: Path, node: str) -> Path:
    """The gateway's TOML file: the two servers as stdio mounts, each logging its calls, and the
    FastMCP one again with formats asserted."""
    mounts = []
    for server in (*SERVERS, STRICT):
        command = upstream_command(server, node)
        mounts.append(
            f"""[[mount]]
namespace = "{server}"
command = {json.dumps(command[0])}
args = {json.dumps(command[1:])}
env = {{ CALL_LOG = {json.dumps(str(work / f"calls-{server}.log"))} }}
{"assert_formats = true" if server == STRICT else ""}
"""
        )
    config = work / "gateway.toml"
    # FastMCP takes seconds to import on a busy machine: more than the default 10 s to connect.
    config.write_text("connect_timeout_ms = 60000\n\n" + "\n".join(mounts), encoding="utf-8")
    return config


def logged_calls(work: Path, server: str) -> int:
    log = work / f"calls-{server}.log"
    return log.read_text(encoding="utf-8").count("\n") if log.exists() else 0


# ---- the run ---------------------------------------------------------------------------------


async def direct_phase(
    stack: AsyncExitStack, options: argparse.Namespace, pairs: list[tuple[str, Case]], schemas: dict
) -> dict:
    """The cases on each upstream directly; the schemas each publishes (all, whatever --only
    says) into `schemas`."""
    answers: dict[tuple[str, str, str], Answer] = {}
    work = Path(options.work)
    for server in SERVERS:
        cases = [case for s, case in pairs if s == server or (server == "py" and s == STRICT)]
        session = await open_session(stack, upstream_command(server, options.node), {}, work / f"direct-{server}.log")
        tools = (await session.list_tools()).tools
        schemas[server] = {tool.name: tool.input_schema for tool in tools}
        for case in cases:
            answers[server, case.tool, case.name] = await call(session, case.tool, case.args)
    schemas[STRICT] = schemas.get("py", {})
    for (server, tool, name), answer in list(answers.items()):
        if server == "py":
            answers[STRICT, tool, name] = answer
    return answers


async def gateway_phase(session: ClientSession, work: Path, pairs: list[tuple[str, Case]], schemas: dict) -> dict:
    """Every case through the gateway, once the tools of both mounts are listed."""
    wanted = {f"{server}.{case.tool}" for server, case in pairs}
    deadline = time.monotonic() + LISTED_LIMIT_S
    while True:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        if wanted <= listed.keys():
            break
        if time.monotonic() > deadline:
            missing = ", ".join(sorted(wanted - listed.keys()))
            raise RuntimeError(f"not listed by the gateway within {LISTED_LIMIT_S} s: {missing} (see gateway.log)")
        await anyio.sleep(0.2)
    # The gateway is meant to list each upstream's inputSchemas as they are: any it changed are kept.
    changed = {}
    for server, case in pairs:
        name = f"{server}.{case.tool}"
        if listed[name].input_schema != schemas[server][case.tool]:
            changed[name] = listed[name].input_schema
    if changed:
        schemas["listed differently by the gateway"] = changed
    print(
        f"the gateway lists {len(wanted)} tools, {len(changed)} with an inputSchema other than the upstream's",
        flush=True,
    )
    answers: dict[tuple[str, str, str], Answer] = {}
    for server, case in pairs:
        before = logged_calls(work, server)
        answer = await call(session, f"{server}.{case.tool}", case.args)
        answer.reached = logged_calls(work, server) > before
        answers[server, case.tool, case.name] = answer
    return answers


async def run(options: argparse.Namespace) -> list[Verdict]:
    work = Path(options.work)
    work.mkdir(parents=True, exist_ok=True)
    for old in work.glob("*.log"):
        old.unlink()
    pairs = selected(options.only)
    if not pairs:
        raise RuntimeError(f"no case matches --only {options.only!r}")
    schemas: dict[str, Any] = {}
    with anyio.fail_after(RUN_LIMIT_S):
        async with AsyncExitStack() as stack:
            # The gateway starts its upstreams while the direct phase runs.
            env = {"RUST_LOG": os.environ.get("RUST_LOG", "warn")}
            command = [options.gateway, "--config", str(gateway_config(work, options.node))]
            gateway = await open_session(stack, command, env, work / "gateway.log")
            direct = await direct_phase(stack, options, pairs, schemas)
            through = await gateway_phase(gateway, work, pairs, schemas)
    (work / "tools.json").write_text(json.dumps(schemas, indent=2) + "\n", encoding="utf-8")
    verdicts = []
    for server, case in pairs:
        answers = direct[server, case.tool, case.name], through[server, case.tool, case.name]
        verdicts.append(Verdict(server, case, *judge(server, case, *answers), *answers))
    return verdicts


def tally(verdicts: list[Verdict]) -> str:
    passed = sum(v.passed for v in verdicts)
    return f"{passed} passed, {len(verdicts) - passed} failed"


def report(verdicts: list[Verdict], options: argparse.Namespace) -> bool:
    """One line per case, then the bad calls the upstreams accept, the failures by kind and the
    tallies; whether the run passed."""
    for v in verdicts:
        name = f"{v.server}.{v.case.tool}{' [format]' if v.case.group == 'format' else ''}"
        want = f"want {v.case.path}" if v.case.path else "correct"
        note = "" if v.case.correct else f" | direct: {read_as(v.direct, v.case)}"
        print(f"{'PASS' if v.passed else 'FAIL'} {name} | {v.case.name} | {want} | {v.kind}: {v.detail}{note}")

    accepted = [v for v in verdicts if not v.case.correct and v.direct.outcome == "ok"]
    if accepted:
        print("\nBad calls the upstream silently accepts when called directly (only the gateway catches them):")
        for v in accepted:
            print(f"  {v.server}.{v.case.tool} | {v.case.name} | {read_as(v.direct, v.case)}")
    failed = Counter(f"{v.kind}{' [format]' if v.case.group == 'format' else ''}" for v in verdicts if not v.passed)
    if failed:
        print("\nFailures by kind:")
        for kind, count in failed.most_common():
            print(f"  {count} {kind}")
    for group in ("shape", "format", "read"):
        if in_group := [v for v in verdicts if v.case.group == group]:
            print(f"{group} cases: {tally(in_group)}")
    counted = [v for v in verdicts if options.formats == "enforce" or v.case.group != "format"]
    print(tally(counted))
    return all(v.passed for v in counted)


def write_json(path: str, verdicts: list[Verdict]) -> None:
    def answer(a: Answer) -> dict[str, Any]:
        return {**asdict(a), "paths": a.paths}

    rows = [
        {
            "server": v.server,
            "tool": v.case.tool,
            "case": v.case.name,
            "group": v.case.group,
            "path": v.case.path,
            "arguments": v.case.args,
            "passed": v.passed,
            "kind": v.kind,
            "detail": v.detail,
            "direct": answer(v.direct),
            "gateway": answer(v.gateway),
        }
        for v in verdicts
    ]
    Path(path).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or the exception itself."""
    inner = getattr(error, "exceptions", None)
    return [leaf for e in inner for leaf in leaves(e)] if inner else [error]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--gateway", default=str(ROOT / "target" / "debug" / "fusion-gateway"), help="the fusion-gateway executable"
    )
    parser.add_argument("--node", default=shutil.which("node") or "node", help="node, to run ts_server.mjs")
    parser.add_argument(
        "--work", default=str(ROOT / "target" / "gateway-schemas"), help="logs, the gateway file and tools.json go here"
    )
    parser.add_argument("--only", help="run only the cases whose 'server.tool/case name' contains this")
    parser.add_argument("--json", help="write every case, call and answer to this file")
    parser.add_argument(
        "--formats",
        choices=("enforce", "report"),
        default="enforce",
        help="whether format cases count for the exit code",
    )
    options = parser.parse_args()
    started = time.monotonic()
    try:
        verdicts = anyio.run(run, options)
    except Exception as error:  # noqa: BLE001 (said in one line, the logs have the rest)
        what = "; ".join(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__ for e in leaves(error))
        print(f"FAIL the run: {what} (logs: gateway.log, direct-py.log, direct-ts.log in {options.work})", flush=True)
        return 1
    ok = report(verdicts, options)
    if options.json:
        write_json(options.json, verdicts)
    tools = Path(options.work, "tools.json").resolve()
    shown = tools.relative_to(ROOT) if tools.is_relative_to(ROOT) else tools
    print(f"client.py: {len(verdicts)} cases in {time.monotonic() - started:.1f} s; the inputSchemas: {shown}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
