#!/usr/bin/env python3
"""The official Python MCP SDK (`mcp`) through the void confirmation of ../confirmation.json on
MCP 2026-07-28 over Streamable HTTP. Exits 1 on any mismatch, printing what it saw.

    python confirm.py [--out RESULT.json] [--label TRANSPORT] --url http://127.0.0.1:PORT/mcp

The high-level `Client` negotiates in its default mode "auto" (server/discover, falling back to
initialize on a 2025 server); given an `elicitation_callback` it declares elicitation, and the
callback records each question and answers accept with {"confirm": true}. The SDK's own multi
round-trip driver (mcp/client/_input_required.py) turns the input_required answer into a call of
that callback and a retry: nothing here speaks MRTR. The requests it POSTs are recorded through an
httpx event hook, to show the retry. The checks are those of ../lib/confirmation.mjs, written
again here (with helpers of client.py) so that this client shares no code with the others.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from client import failed_check, finish, same, show, subset_problems, wire
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

PACKAGE = "mcp"
VERSION = version(PACKAGE)
CONFIRMATION = json.loads(
    (Path(__file__).resolve().parent.parent / "confirmation.json").read_text(encoding="utf-8")
)
CALL = CONFIRMATION["call"]
AFTER = CONFIRMATION["after"]


def outcome(name: str, problems: list[str], saw: Any) -> dict[str, Any]:
    if not problems:
        return {"name": name, "passed": True}
    return {"name": name, "passed": False, "problems": problems, "saw": saw}


def check_protocol(negotiated: str | None) -> dict[str, Any]:
    want = CONFIRMATION["protocol_version"]
    problems = [] if negotiated == want else [f"negotiated protocol: expected {want}, got {show(negotiated)}"]
    return outcome("protocol_" + want.replace("-", "_"), problems, {"protocol_version": negotiated})


def check_elicitation(asked: list[dict[str, Any]]) -> dict[str, Any]:
    problems = []
    if len(asked) != 1:
        problems.append(f"elicitation handler: expected to be asked once, was asked {len(asked)} time(s)")
    if asked:
        params = asked[0]
        if params.get("message") != CALL["message"]:
            problems.append(f"message: expected {show(CALL['message'])}, got {show(params.get('message'))}")
        if params.get("mode", "form") != "form":
            problems.append(f"mode: expected \"form\", got {show(params.get('mode'))}")
        field = (params.get("requestedSchema") or {}).get("properties", {}).get(CALL["field"])
        if not isinstance(field, dict) or field.get("type") != "boolean":
            problems.append(f"requestedSchema.properties.{CALL['field']}: expected a boolean, got {show(field)}")
    return outcome("elicitation", problems, {"asked": asked})


def check_rounds(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """On 2026-07-28 the SDK must have sent the void twice: bare, then with the answer and the requestState."""
    problems = []
    if len(calls) != 2:
        problems.append(
            f"tools/call of the void: expected 2 (the call, then its retry with the answer), sent {len(calls)}"
        )
    if calls and ("inputResponses" in calls[0] or "requestState" in calls[0]):
        problems.append(f"first tools/call: expected neither inputResponses nor requestState, got {show(calls[0])}")
    if len(calls) > 1:
        second = calls[1]
        want = {CALL["key"]: CALL["answer"]}
        if not same(second.get("inputResponses"), want):
            problems.append(f"second tools/call: expected inputResponses {show(want)}, got {show(second.get('inputResponses'))}")
        if not isinstance(second.get("requestState"), str) or not second["requestState"]:
            problems.append(f"second tools/call: expected the requestState of the first answer, got {show(second.get('requestState'))}")
        if not same(second.get("arguments"), CALL["arguments"]):
            problems.append(f"second tools/call: expected the same arguments, got {show(second.get('arguments'))}")
    saw = [
        {**c, **({"requestState": f"({len(c['requestState'])} chars)"} if isinstance(c.get("requestState"), str) else {})}
        for c in calls
    ]
    return outcome("multi_round_trip", problems, {"calls": saw})


def check_unknown_tool(thrown: BaseException | None, result: Any) -> dict[str, Any]:
    """A tool the server does not have: on 2026-07-28 the SDK raises the server's -32602, whose message a model is shown."""
    spec = CONFIRMATION["unknown_tool"]
    problems = []
    if thrown is None:
        problems.append(f"expected a raised JSON-RPC error {spec['code']}, got a result {show(result)}")
        return outcome(spec["name"], problems, {"result": result})
    error = getattr(thrown, "error", None)
    code = getattr(error, "code", getattr(thrown, "code", None))
    data = getattr(error, "data", getattr(thrown, "data", None))
    if code != spec["code"]:
        problems.append(f"code: expected {spec['code']}, got {show(code)}")
    if spec["message_contains"] not in str(thrown):
        problems.append(f"message: expected it to contain {show(spec['message_contains'])}, got {show(str(thrown))}")
    if not isinstance(data, dict) or data.get("code") != spec["data_code"]:
        problems.append(f"data.code: expected {show(spec['data_code'])}, got {show(data)}")
    return outcome(spec["name"], problems, {"code": code, "message": str(thrown), "data": data})


def check_result(spec: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    problems = []
    if (result.get("isError") or False) is not False:
        problems.append(f"isError: expected false, got {show(result.get('isError'))}")
    problems += subset_problems("structuredContent", result.get("structuredContent"), spec["structuredContent"])
    return outcome(spec["name"], problems, result)


async def main(options: argparse.Namespace) -> dict[str, Any]:
    run: dict[str, Any] = {
        "client": "python-sdk",
        "client_package": PACKAGE,
        "client_version": VERSION,
        "transport": options.label or "streamable-http",
        "protocol_version": None,
        "server": None,
        "supported": True,
        "elicitation": {"asked": 0, "answered": 0, "messages": []},
        "tools_call_rounds": 0,
        "checks": [],
    }
    print(f"{PACKAGE} {VERSION} over {run['transport']}: the void confirmation", flush=True)
    asked: list[dict[str, Any]] = []
    void_calls: list[dict[str, Any]] = []

    async def elicit(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(wire(params))
        run["elicitation"]["asked"] += 1
        run["elicitation"]["messages"].append(params.message)
        print(f"  elicitation asked: {json.dumps(params.message, ensure_ascii=False)}; answering {json.dumps(CALL['answer'])}")
        run["elicitation"]["answered"] += 1
        return types.ElicitResult.model_validate(CALL["answer"])

    async def record(request: Any) -> None:
        if request.method != "POST":
            return
        try:
            message = json.loads(request.content)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return
        params = message.get("params") or {}
        if (params.get("arguments") or {}).get("action") == CALL["arguments"]["action"]:
            void_calls.append({k: params[k] for k in ("name", "arguments", "inputResponses", "requestState") if k in params})

    info = types.Implementation(name="mcp-fusion-interop-python", version=VERSION)
    try:
        http = create_mcp_http_client()
        http.event_hooks = {"request": [record], "response": []}
        async with (
            http,
            Client(streamable_http_client(options.url, http_client=http), client_info=info, elicitation_callback=elicit) as client,
        ):
            run["protocol_version"] = client.protocol_version
            server = client.server_info
            run["server"] = {"name": server.name, "version": server.version} if server else None
            print(f"  negotiated protocol {run['protocol_version']} with {server.name if server else '?'} {server.version if server else '?'}")
            run["checks"].append(check_protocol(run["protocol_version"]))
            try:
                run["checks"].append(check_result(CALL, wire(await client.call_tool("billing", CALL["arguments"]))))
            except Exception as error:  # noqa: BLE001 - reported as a failed check
                run["checks"].append(failed_check(CALL["name"], error))
            run["tools_call_rounds"] = len(void_calls)
            run["checks"].append(check_elicitation(asked))
            run["checks"].append(check_rounds(void_calls))
            try:
                run["checks"].append(check_result(AFTER, wire(await client.call_tool("billing", AFTER["arguments"]))))
            except Exception as error:  # noqa: BLE001 - reported as a failed check
                run["checks"].append(failed_check(AFTER["name"], error))
            # A tool the server does not have: the SDK raises the server's -32602.
            try:
                unknown = wire(await client.call_tool(CONFIRMATION["unknown_tool"]["tool"], {}))
                run["checks"].append(check_unknown_tool(None, unknown))
            except Exception as error:  # noqa: BLE001 - the error is what is checked
                print(f"  unknown tool: raised {type(error).__name__}: {error}")
                run["checks"].append(check_unknown_tool(error, None))
    except Exception as error:  # noqa: BLE001 - reported as a failed check
        run["checks"].append(failed_check("connect" if run["protocol_version"] is None else "session", error))
    return run


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the run's result JSON here")
    parser.add_argument("--label", help="the transport as recorded in the result")
    parser.add_argument("--url", required=True, help="a Streamable HTTP endpoint")
    return parser.parse_args(argv)


if __name__ == "__main__":
    options = parse_args(sys.argv[1:])
    run = anyio.run(main, options)
    finish(run, options.out)
