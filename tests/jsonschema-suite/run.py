#!/usr/bin/env python3
"""The official JSON-Schema-Test-Suite (draft 2020-12) through fusion-gateway: every test
instance is one tool call, and the gateway must forward the valid ones and refuse the invalid
ones, with sentences that name the right field, echo what was sent, and say something specific.

    run.py --gateway FUSION_GATEWAY [--only STEM[,STEM...]] [--no-doc] [--report-only]

The official Python MCP SDK spawns the gateway over stdio with one mount, upstream.py (a tool per
test group that echoes whatever it is sent), and calls `suite.g{N}` with `{"value": data}` for
each test. Before that, upstream.py is checked directly: its tools' schemas arrive as built,
and it answers instances their schemas refuse (so any refusal is the gateway's).

A valid instance may be refused only by a documented policy: a key the schema names nowhere
(the gateway closes open objects) or a string format (the gateway asserts formats). Exits 1
when a valid instance is refused otherwise, an invalid one is forwarded, more than 2% of the
refusals have a line that says nothing specific, a line names a path or echoes a value that
was not sent, or a call got another answer than these (or none). Every refusal goes to
target/jsonschema-suite/refusals.jsonl for review; a whole run writes its figures into
docs/validation.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import textwrap
import time
from collections import Counter
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

from rules import Line, field_lines, is_generic, policy, shape, wrong
from upstream import Group, groups

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "target" / "jsonschema-suite"
DOC = ROOT / "docs" / "validation.md"
BEGIN = "<!-- jsonschema suite figures: generated -->"
END = "<!-- end of jsonschema suite figures -->"

SUITE_COMMIT = "44401e0c046704b476ec9d2e2fccdaee618f259d"
SUITE_DATE = "2026-08-22"
EXCLUDED = ("refRemote.json", "vocabulary.json")  # their schemas are served from localhost:1234

GENERIC_LIMIT = 0.02  # the share of refusals that may have a line saying nothing specific
PARALLEL = 8  # calls in flight at once
RUN_LIMIT_S = 100
LIST_LIMIT_S = 30
REQUEST_LIMIT_S = 20


@dataclass
class Case:
    """One test of the suite, the call made for it, and what came back."""

    group: Group
    test: dict[str, Any]
    outcome: str = "harness"  # forwarded, refused, or harness (another answer, or none)
    detail: str = "not called"
    lines: list[Line] = field(default_factory=list)
    verdict: str = ""  # ok, unknown-key, format, wrong-refusal, accepted, harness
    generic: bool = False
    wrong_lines: list[tuple[Line, str]] = field(default_factory=list)

    @property
    def arguments(self) -> dict[str, Any]:
        return {"value": self.test["data"]}

    def describe(self) -> str:
        said = [f"    data: {json.dumps(self.test['data'])}"]
        said += [f"    {line}" for line in self.lines] or [f"    ({self.detail})"]
        head = f"  {self.group.file} / {self.group.description} / {self.test['description']}"
        return "\n".join([head, *said])


def same(a: Any, b: Any) -> bool:
    """JSON equality that, unlike ==, tells 1 from 1.0 from True."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content or [] if isinstance(block, types.TextContent))


def echoed(result: types.CallToolResult) -> Any:
    """What a success of upstream.py says it was sent (None for anything else)."""
    try:
        return None if result.is_error else json.loads(text_of(result))
    except json.JSONDecodeError:
        return None


async def open_session(stack: AsyncExitStack, command: str, args: list[str], log: Path) -> ClientSession:
    errlog = stack.enter_context(open(log, "w", encoding="utf-8"))  # noqa: SIM115
    env = {"PATH": os.environ["PATH"], "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
    read, write = await stack.enter_async_context(
        stdio_client(StdioServerParameters(command=command, args=args, env=env), errlog=errlog)
    )
    session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=REQUEST_LIMIT_S))
    await session.initialize()
    return session


async def list_all(session: ClientSession) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor = None
    while True:
        page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools += page.tools
        if not (cursor := page.next_cursor):
            return tools


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """A call whose answer is taken as it came: the SDK's call_tool also checks each success
    against the tool's output schema, listing the tools again for one it has not seen."""
    request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
    with anyio.fail_after(REQUEST_LIMIT_S):
        return await session.send_request(request, types.CallToolResult)


async def check_upstream(every: list[Group], selected: list[Group]) -> list[str]:
    """What is wrong with upstream.py asked directly: a tool's listing that is not what it built,
    or an instance its schema refuses (each group's first invalid one) not answered as sent."""
    problems = []
    async with AsyncExitStack() as stack:
        session = await open_session(stack, sys.executable, [str(HERE / "upstream.py")], OUT / "upstream.log")
        listed = {tool.name: tool for tool in await list_all(session)}
        for group in every:
            tool = listed.get(group.tool)
            if tool is None or json.dumps(tool.input_schema) != json.dumps(group.input_schema()):
                problems.append(f"{group.tool} ({group.file}: {group.description}) is not listed as built")
        for group in selected:
            invalid = next((test for test in group.tests if not test["valid"]), None)
            if invalid is None:
                continue
            arguments = {"value": invalid["data"]}
            result = await call(session, group.tool, arguments)
            if not same(echoed(result), arguments):
                said = text_of(result)[:200]
                problems.append(f"{group.tool} answered {said!r} to the invalid {json.dumps(arguments)}")
    return problems


def gateway_file(directory: Path) -> Path:
    config = directory / "gateway.toml"
    config.write_text(
        "[[mount]]\n"
        'namespace = "suite"\n'
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(HERE / 'upstream.py'))}]\n"
        "max_tools = 1000\n"
        # The suite asks for JSON Schema's verdicts: "1" is not an integer. Reading such a string
        # as what it spells (the gateway's default, with a warning) is the framework's choice
        # beside validation, measured by the tests of its own.
        "forgiving_scalars = false\n",
        encoding="utf-8",
    )
    return config


async def through_gateway(gateway: str, every: list[Group], cases: list[Case]) -> None:
    """Makes every case's call through a gateway spawned here, once it lists every tool."""
    async with AsyncExitStack() as stack:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="jsonschema-suite-")))
        session = await open_session(stack, gateway, ["--config", str(gateway_file(directory))], OUT / "gateway.log")
        wanted = {f"suite.{group.tool}" for group in every}
        deadline = time.monotonic() + LIST_LIMIT_S
        while not wanted <= {tool.name for tool in await list_all(session)}:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the gateway did not list the suite's {len(wanted)} tools within {LIST_LIMIT_S} s")
            await anyio.sleep(0.1)

        limiter = anyio.CapacityLimiter(PARALLEL)

        async def one(case: Case) -> None:
            async with limiter:
                try:
                    result = await call(session, f"suite.{case.group.tool}", case.arguments)
                except TimeoutError:
                    case.detail = f"no answer within {REQUEST_LIMIT_S} s"
                    return
                except Exception as error:  # noqa: BLE001 - a JSON-RPC error is a finding, reported
                    case.detail = f"{type(error).__name__}: {error}"
                    return
            answer(case, result)

        async with anyio.create_task_group() as group:
            for case in cases:
                group.start_soon(one, case)


def answer(case: Case, result: types.CallToolResult) -> None:
    """Reads an answer as forwarded (the upstream's echo of the arguments), refused (a
    `<validation_error>`), or anything else."""
    text = text_of(result)
    if not result.is_error:
        if same(echoed(result), case.arguments):
            case.outcome, case.detail = "forwarded", "forwarded: the upstream's echo came back"
        else:
            case.detail = f"a success that is not the echo of the arguments: {text[:300]!r}"
        return
    lines = field_lines(text)
    if lines is None:
        case.detail = f"an error that is no <validation_error>: {text[:300]!r}"
        return
    case.outcome, case.lines = "refused", lines


def judge(case: Case) -> None:
    valid = case.test["valid"]
    if case.outcome == "forwarded":
        case.verdict = "ok" if valid else "accepted"
    elif case.outcome == "refused":
        case.verdict = "ok" if not valid else policy(case.lines, case.group.schema) or "wrong-refusal"
        case.generic = any(is_generic(line.text) for line in case.lines)
        case.wrong_lines = [(line, why) for line in case.lines if (why := wrong(line, case.arguments))]
    else:
        case.verdict = "harness"


@dataclass
class Figures:
    tests: int
    valid: Counter[str]
    invalid: Counter[str]
    refusals: int
    generic: int
    wrong_lines: int
    harness: int

    @staticmethod
    def of(cases: list[Case]) -> Figures:
        refusals = [case for case in cases if case.outcome == "refused"]
        return Figures(
            tests=len(cases),
            valid=Counter(case.verdict for case in cases if case.test["valid"]),
            invalid=Counter(case.verdict for case in cases if not case.test["valid"]),
            refusals=len(refusals),
            generic=sum(case.generic for case in refusals),
            wrong_lines=sum(len(case.wrong_lines) for case in refusals),
            harness=sum(case.verdict == "harness" for case in cases),
        )

    def generic_share(self) -> float:
        return self.generic / self.refusals if self.refusals else 0.0

    def failures(self) -> list[str]:
        failed = [
            (self.valid["wrong-refusal"], "valid instances refused wrongly"),
            (self.invalid["accepted"], "invalid instances accepted"),
            (self.wrong_lines, "wrong lines"),
            (self.harness, "calls without a forward or a refusal"),
        ]
        said = [f"{count} {what}" for count, what in failed if count]
        if self.generic_share() > GENERIC_LIMIT:
            said.append(f"{self.generic_share():.1%} of the refusals generic (at most {GENERIC_LIMIT:.0%})")
        return said

    def table(self) -> str:
        valid, invalid = sum(self.valid.values()), sum(self.invalid.values())
        return "\n".join(
            [
                "| instances | outcome | tests |",
                "|---|---|---|",
                f"| valid ({valid}) | forwarded | {self.valid['ok']} |",
                f"| | refused by the unknown-key policy | {self.valid['unknown-key']} |",
                f"| | refused by the format policy | {self.valid['format']} |",
                f"| | refused wrongly | {self.valid['wrong-refusal']} |",
                f"| invalid ({invalid}) | refused | {self.invalid['ok']} |",
                f"| | accepted | {self.invalid['accepted']} |",
            ]
        )


def report(cases: list[Case], figures: Figures, everything: bool) -> str:
    """The failing cases, each with its data and lines; with `everything`, also the generic
    and the policy refusals."""
    out: list[str] = []

    def section(title: str, chosen: list[Case]) -> None:
        out.append(f"\n== {title} ({len(chosen)})")
        out.extend(case.describe() for case in chosen)

    section("valid instances refused wrongly", [c for c in cases if c.verdict == "wrong-refusal"])
    section("invalid instances accepted", [c for c in cases if c.verdict == "accepted"])
    section("calls without a forward or a refusal", [c for c in cases if c.verdict == "harness"])
    out.append(f"\n== wrong lines ({figures.wrong_lines})")
    for case in cases:
        for line, why in case.wrong_lines:
            out.append(f"  {case.group.file} / {case.group.description} / {case.test['description']}")
            out.append(f"    data: {json.dumps(case.test['data'])}\n    {line}\n    -> {why}")
    generic = [c for c in cases if c.generic]
    share = f"{figures.generic_share():.1%} of {figures.refusals} refusals, at most {GENERIC_LIMIT:.0%}"
    if everything or figures.generic_share() > GENERIC_LIMIT:
        section(f"refusals with a generic line: {share}", generic)
    shapes = Counter(shape(line.text) for case in generic for line in case.lines if is_generic(line.text))
    out.append(f"\n== generic lines by shape ({sum(shapes.values())} lines in {len(generic)} refusals: {share})")
    out.extend(f"  {count:4d}x {text}" for text, count in sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0])))
    if everything:
        section("valid instances refused by the unknown-key policy", [c for c in cases if c.verdict == "unknown-key"])
        section("valid instances refused by the format policy", [c for c in cases if c.verdict == "format"])
    return "\n".join(out)


def summary(figures: Figures, files: list[str], whole: bool) -> str:
    """The figures as docs/validation.md shows them: nothing that differs between runs."""
    excluded = " and ".join(f"`{name}`" for name in EXCLUDED)
    remote = groups(remote=True)
    left_out = ", ".join(sorted({group.file for group in remote}))
    which = (
        f"the {len(files)} files of `tests/draft2020-12/` but {excluded}, and {len(remote)} groups"
        f" ({sum(len(group.tests) for group in remote)} tests) of {left_out}, whose schemas"
        " reference schemas the suite serves from `http://localhost:1234` (a mount's validator"
        " fetches nothing)"
        if whole
        else f"only {', '.join(files)}"
    )
    head = f"Suite commit `{SUITE_COMMIT}` ({SUITE_DATE}): {which}; {figures.tests} tests, one call each."
    tail = (
        f"Refusals with a generic line (one that says nothing specific): {figures.generic} of"
        f" {figures.refusals} ({figures.generic_share():.1%}). Wrong lines (a path not in the"
        f" arguments, or an echo that is not the value sent there): {figures.wrong_lines}."
    )
    return "\n\n".join([textwrap.fill(head, 100), figures.table(), textwrap.fill(tail, 100)])


def write_doc(figures: Figures, files: list[str]) -> None:
    text = DOC.read_text(encoding="utf-8")
    head, begin, rest = text.partition(BEGIN + "\n")
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise RuntimeError(f"docs/validation.md has no {BEGIN} ... {END} block")
    DOC.write_text(f"{head}{begin}{summary(figures, files, whole=True)}\n{end}{tail}", encoding="utf-8")


def write_refusals(cases: list[Case]) -> None:
    with open(OUT / "refusals.jsonl", "w", encoding="utf-8") as out:
        for case in cases:
            if case.outcome == "refused":
                record = {
                    "file": case.group.file,
                    "group": case.group.description,
                    "test": case.test["description"],
                    "valid": case.test["valid"],
                    "data": case.test["data"],
                    "lines": [str(line) for line in case.lines],
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


async def main(options: argparse.Namespace) -> int:
    # SIGTERM ends the run as Ctrl-C does: the sessions close, stopping the gateway and upstream.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    every = groups()
    stems = {Path(group.file).stem for group in every}
    only = set(options.only.split(",")) if options.only else stems
    if unknown := only - stems:
        print(f"--only: no such file: {', '.join(sorted(unknown))} (known: {', '.join(sorted(stems))})")
        return 2
    selected = [group for group in every if Path(group.file).stem in only]
    cases = [Case(group, test) for group in selected for test in group.tests]
    OUT.mkdir(parents=True, exist_ok=True)

    started = time.monotonic()
    with anyio.fail_after(RUN_LIMIT_S):
        if problems := await check_upstream(every, selected):
            print("upstream.py, asked directly, is not the plain echo the run needs:")
            print("\n".join(f"  {problem}" for problem in problems))
            return 1
        await through_gateway(options.gateway, every, cases)
    for case in cases:
        judge(case)
    figures = Figures.of(cases)
    write_refusals(cases)
    print(report(cases, figures, options.report_only))
    files = sorted({group.file for group in selected})
    print(f"\n== figures ({len(selected)} groups; {len(cases)} calls in {time.monotonic() - started:.1f} s)\n")
    print(summary(figures, files, whole=not options.only))
    if options.only or options.no_doc:
        print("\n(docs/validation.md left as it is)")
    elif figures.harness:
        print("\n(docs/validation.md left as it is: some calls got no verdict)")
    else:
        write_doc(figures, files)
        print("\n(figures written to docs/validation.md)")
    failures = figures.failures()
    print(f"\n{'FAILED: ' + '; '.join(failures) if failures else 'PASSED'}")
    return 0 if options.report_only or not failures else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--gateway", default=os.environ.get("FUSION_GATEWAY"), help="the fusion-gateway executable")
    parser.add_argument("--only", help="a subset: file stems, comma-separated (type,ref); the doc is left as it is")
    parser.add_argument("--no-doc", action="store_true", help="leave docs/validation.md as it is")
    parser.add_argument("--report-only", action="store_true", help="print everything, and exit 0 whatever is found")
    options = parser.parse_args(sys.argv[1:])
    if not options.gateway:
        parser.error("give --gateway PATH or set FUSION_GATEWAY")
    try:
        code = anyio.run(main, options)
    except TimeoutError:
        print(f"FAIL the run did not end within {RUN_LIMIT_S} s")
        code = 1
    except (asyncio.CancelledError, KeyboardInterrupt):
        print("stopped before the end")
        code = 130
    sys.exit(code)
