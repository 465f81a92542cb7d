#!/usr/bin/env python3
"""The official Python MCP SDK (`mcp`) driving billing-server through the interop scenario
(../scenario.json). Exits 1 on any mismatch, printing what it saw.

    python client.py [--out RESULT.json] [--label TRANSPORT] --url http://127.0.0.1:PORT/mcp
    python client.py [--out RESULT.json] [--label TRANSPORT] --stdio COMMAND [ARG...]

`--stdio` takes the rest of the command line as the server's command and arguments; a single
word holding spaces is split on whitespace ("billing-server --db x.db"). The checks are those of
../lib/scenario.mjs, written again here so that this client shares no code with the others.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation, PromptReference

PACKAGE = "mcp"
VERSION = version(PACKAGE)
SCENARIO = json.loads((Path(__file__).resolve().parent.parent / "scenario.json").read_text(encoding="utf-8"))


def show(value: Any) -> str:
    return "(absent)" if value is _ABSENT else json.dumps(value, ensure_ascii=False)


_ABSENT = object()


def subset_problems(what: str, actual: Any, expected: dict[str, Any]) -> list[str]:
    if not isinstance(actual, dict):
        return [f"{what}: expected an object with {show(expected)}, got {show(actual)}"]
    return [
        f"{what}.{key}: expected {show(value)}, got {show(actual.get(key, _ABSENT))}"
        for key, value in expected.items()
        if key not in actual or not same(actual[key], value)
    ]


def same(a: Any, b: Any) -> bool:
    """JSON equality that, unlike ==, tells 1 from 1.0 from True."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def outcome(name: str, problems: list[str], saw: Any) -> dict[str, Any]:
    if not problems:
        return {"name": name, "passed": True}
    return {"name": name, "passed": False, "problems": problems, "saw": saw}


def check_tools_list(result: dict[str, Any]) -> dict[str, Any]:
    spec = SCENARIO["tools_list"]
    problems = []
    tools = result.get("tools") or []
    names = [tool.get("name") for tool in tools]
    if names != spec["tool_names"]:
        problems.append(f"tool names: expected {show(spec['tool_names'])}, got {show(names)}")
    billing = next((tool for tool in tools if tool.get("name") == spec["tool_names"][0]), {})
    action_enum = billing.get("inputSchema", {}).get("properties", {}).get("action", {}).get("enum", _ABSENT)
    if action_enum is _ABSENT or not same(action_enum, spec["action_enum"]):
        problems.append(
            f"inputSchema.properties.action.enum: expected {show(spec['action_enum'])}, got {show(action_enum)}"
        )
    return outcome(
        spec["name"], problems, {"tools": names, "action_enum": None if action_enum is _ABSENT else action_enum}
    )


def check_call(spec: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    expect = spec["expect"]
    problems = []
    is_error = result.get("isError") or False
    if is_error is not expect["isError"]:
        problems.append(f"isError: expected {show(expect['isError'])}, got {show(result.get('isError', _ABSENT))}")
    content = result.get("content") or []
    if "blockCount" in expect and len(content) != expect["blockCount"]:
        problems.append(f"content: expected {expect['blockCount']} block(s), got {len(content)}")
    if expect.get("noStructuredContent") and result.get("structuredContent") is not None:
        problems.append(f"structuredContent: expected none on a failed call, got {show(result['structuredContent'])}")
    if "structuredContent" in expect:
        problems += subset_problems(
            "structuredContent", result.get("structuredContent", _ABSENT), expect["structuredContent"]
        )
    for index, want in enumerate(expect.get("blocks", [])):
        where = f"content[{index}]"
        block = content[index] if index < len(content) else _ABSENT
        if not isinstance(block, dict) or block.get("type") != "text" or not isinstance(block.get("text"), str):
            problems.append(f"{where}: expected a text block, got {show(block)}")
            continue
        text = block["text"]
        if "startsWith" in want and not text.startswith(want["startsWith"]):
            problems.append(f"{where}.text: expected it to start with {show(want['startsWith'])}, got {show(text)}")
        for part in want.get("contains", []):
            if part not in text:
                problems.append(f"{where}.text: expected it to contain {show(part)}, got {show(text)}")
        if "text" in want and text != want["text"]:
            problems.append(f"{where}.text: expected exactly\n{want['text']}\n--- got ---\n{text}")
        if "json" in want:
            try:
                parsed = json.loads(text)
            except ValueError as error:
                problems.append(f"{where}.text: expected JSON, got {show(text)} ({error})")
                continue
            problems += subset_problems(f"{where}.text", parsed, want["json"])
    return outcome(spec["name"], problems, result)


def failed_check(name: str, error: BaseException) -> dict[str, Any]:
    return {"name": name, "passed": False, "problems": ["".join(traceback.format_exception(error)).rstrip()]}


def report(check: dict[str, Any]) -> None:
    print(f"  {'ok  ' if check['passed'] else 'FAIL'} {check['name']}")
    if not check["passed"]:
        for problem in check["problems"]:
            print("       - " + problem.replace("\n", "\n         "))
        if "saw" in check:
            print("       saw: " + json.dumps(check["saw"], indent=2, ensure_ascii=False).replace("\n", "\n       "))


def wire(model: Any) -> dict[str, Any]:
    """A result as it was on the wire (camelCase keys), for the same checks as the other clients."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def scenario(session: ClientSession, run: dict[str, Any]) -> None:
    initialized = await session.initialize()
    run["protocol_version"] = session.protocol_version
    run["server"] = {"name": initialized.server_info.name, "version": initialized.server_info.version}
    print(f"  negotiated protocol {run['protocol_version']} with {run['server']['name']} {run['server']['version']}")
    try:
        run["checks"].append(check_tools_list(wire(await session.list_tools())))
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        run["checks"].append(failed_check(SCENARIO["tools_list"]["name"], error))
    for spec in SCENARIO["calls"]:
        try:
            run["checks"].append(check_call(spec, wire(await session.call_tool("billing", spec["arguments"]))))
        except Exception as error:  # noqa: BLE001 - reported as a failed check
            run["checks"].append(failed_check(spec["name"], error))
    await surface(session, run)


def check_resource(result: dict[str, Any]) -> dict[str, Any]:
    spec = SCENARIO["surface"]["resource"]
    contents = result.get("contents") or []
    first = contents[0] if contents else {}
    problems = []
    if len(contents) != 1:
        problems.append(f"contents: expected 1, got {len(contents)}")
    for key in ("uri", "mimeType"):
        if first.get(key) != spec[key]:
            problems.append(f"contents[0].{key}: expected {show(spec[key])}, got {show(first.get(key))}")
    try:
        problems += subset_problems("contents[0].text", json.loads(first.get("text", "")), spec["json"])
    except ValueError as error:
        problems.append(f"contents[0].text: expected JSON, got {show(first.get('text'))} ({error})")
    return outcome(spec["name"], problems, result)


def check_prompt(result: dict[str, Any]) -> dict[str, Any]:
    spec = SCENARIO["surface"]["prompt"]
    messages = result.get("messages") or []
    problems = []
    if len(messages) != 2:
        problems.append(f"messages: expected 2, got {len(messages)}")
    text = messages[0] if messages else {}
    content = text.get("content", {})
    if text.get("role") != "user" or content.get("type") != "text" or not str(content.get("text", "")).startswith(spec["firstTextStartsWith"]):
        problems.append(f"messages[0]: expected a user text starting with {show(spec['firstTextStartsWith'])}, got {show(text)}")
    embedded = messages[1].get("content", {}) if len(messages) > 1 else {}
    if embedded.get("type") != "resource" or embedded.get("resource", {}).get("uri") != spec["embeddedUri"]:
        problems.append(f"messages[1]: expected the embedded resource {show(spec['embeddedUri'])}, got {show(embedded)}")
    return outcome(spec["name"], problems, result)


def check_completion(result: dict[str, Any]) -> dict[str, Any]:
    spec = SCENARIO["surface"]["completion"]
    values = (result.get("completion") or {}).get("values")
    problems = [] if values == spec["values"] else [f"completion.values: expected {show(spec['values'])}, got {show(values)}"]
    return outcome(spec["name"], problems, result)


async def surface(session: ClientSession, run: dict[str, Any]) -> None:
    """The resource, the prompt and the completion of the scenario's `surface`."""
    resource, prompt, completion = (SCENARIO["surface"][key] for key in ("resource", "prompt", "completion"))
    reference = PromptReference(type="ref/prompt", name=completion["prompt"])
    steps = [
        (resource["name"], lambda: session.read_resource(resource["uri"]), check_resource),
        (prompt["name"], lambda: session.get_prompt(prompt["prompt"], prompt["arguments"]), check_prompt),
        (
            completion["name"],
            lambda: session.complete(reference, {"name": completion["argument"], "value": completion["value"]}),
            check_completion,
        ),
    ]
    for name, request, check in steps:
        try:
            run["checks"].append(check(wire(await request())))
        except Exception as error:  # noqa: BLE001 - reported as a failed check
            run["checks"].append(failed_check(name, error))


async def main(options: argparse.Namespace) -> dict[str, Any]:
    run: dict[str, Any] = {
        "client": "python-sdk",
        "client_package": PACKAGE,
        "client_version": VERSION,
        "transport": options.label or ("streamable-http" if options.url else "stdio"),
        "protocol_version": None,
        "server": None,
        "checks": [],
    }
    print(f"{PACKAGE} {VERSION} over {run['transport']}", flush=True)
    info = Implementation(name="mcp-fusion-interop-python", version=VERSION)
    try:
        if options.url:
            async with (
                streamable_http_client(options.url) as (read, write),
                ClientSession(read, write, client_info=info) as session,
            ):
                await scenario(session, run)
        else:
            command = options.stdio if len(options.stdio) != 1 else options.stdio[0].split()
            env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
            server = StdioServerParameters(command=command[0], args=command[1:], env=env)
            async with (
                stdio_client(server) as (read, write),
                ClientSession(read, write, client_info=info) as session,
            ):
                await scenario(session, run)
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        name = "initialize" if run["protocol_version"] is None else "session"
        run["checks"].append(failed_check(name, error))
    return run


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the run's result JSON here")
    parser.add_argument("--label", help="the transport as recorded in the result")
    parser.add_argument("--url", help="a Streamable HTTP endpoint")
    parser.add_argument("--stdio", nargs=argparse.REMAINDER, help="the server's command and arguments")
    options = parser.parse_args(argv)
    if bool(options.url) == bool(options.stdio):
        parser.error("give exactly one of --url and --stdio (with a command)")
    return options


def finish(run: dict[str, Any], out: str | None) -> None:
    """Ends a client's run: each check reported, the result written to `out`, the verdict as exit status."""
    for check in run["checks"]:
        report(check)
    run["passed"] = bool(run["checks"]) and all(check["passed"] for check in run["checks"])
    if out:
        Path(out).write_text(json.dumps(run, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    passed = sum(check["passed"] for check in run["checks"])
    print(f"  {'PASSED' if run['passed'] else 'FAILED'}: {passed}/{len(run['checks'])} checks")
    sys.exit(0 if run["passed"] else 1)


if __name__ == "__main__":
    options = parse_args(sys.argv[1:])
    run = anyio.run(main, options)
    finish(run, options.out)
