#!/usr/bin/env python3
"""fusion-gateway end to end: the official Python MCP SDK (`mcp`) as the client of a gateway that
mounts real upstreams, each checked against what that upstream answers when called directly.

The gateway file (written by run.sh) mounts:
  demo        billing-server over stdio, behind `sh -c 'echo $$ > PIDFILE; exec billing-server ...'`
  web         billing-server over Streamable HTTP (started by run.sh; bearer token via token_env)
  everything  @modelcontextprotocol/server-everything over stdio (node)
  slow        billing-server behind `sh -c 'sleep 3; exec billing-server ...'`

    e2e.py --label stdio OPTIONS --gateway-stdio COMMAND [ARG...]   # spawns the gateway itself
    e2e.py --label http OPTIONS --gateway-url http://127.0.0.1:PORT/mcp

Environment: DEMO_TOKEN, the web upstream's bearer token (passed on to a gateway spawned here and
used to call and to restart the web upstream directly); FUSION_GATEWAY_TOKEN, if set, is sent as
the bearer token to a gateway over HTTP.

Prints a PASS or FAIL line (with the reason) per scenario and exits 1 if any failed. Each
scenario has a hard time limit, and so has the whole run: nothing waits forever.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

# The whole run, and any one request, may take at most this long.
RUN_LIMIT_S = 100
REQUEST_LIMIT_S = 20

LIST = {"action": "list_invoices"}
MISSING = {"action": "get_invoice", "id": "inv_nope"}


class Failed(Exception):
    """A scenario's expectation that did not hold; the message says what was expected and seen."""


def check(condition: bool, reason: str) -> None:
    if not condition:
        raise Failed(reason)


def wire(result: Any) -> dict[str, Any]:
    """A result as it was on the wire (camelCase keys)."""
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def same(a: Any, b: Any) -> bool:
    """JSON equality that, unlike ==, tells 1 from 1.0 from True."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def only_text(result: types.CallToolResult) -> str:
    """The text of a result made of exactly one text block."""
    content = result.content or []
    check(
        len(content) == 1 and isinstance(content[0], types.TextContent),
        f"expected one text block, got {clip(json.dumps(wire(result)))}",
    )
    return content[0].text


@dataclass
class Envelope:
    code: str
    severity: str
    message: str
    recovery: str | None
    retry_after: int | None
    actions: list[str]


def tool_error(result: types.CallToolResult) -> Envelope:
    """The `<tool_error>` envelope a result carries (fails the scenario if it carries none)."""
    text = only_text(result)
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise Failed(f"expected a <tool_error> envelope, got {clip(text)!r} ({error})") from None
    check(root.tag == "tool_error", f"expected a <tool_error> envelope, got <{root.tag}>: {clip(text)!r}")
    retry_after = None
    if (retry := root.findtext("retry_after")) is not None:
        match = re.fullmatch(r"(\d+) seconds", retry)
        check(match is not None, f'<retry_after> is {retry!r}; expected "N seconds"')
        retry_after = int(match.group(1)) if match else None
    return Envelope(
        code=root.get("code", ""),
        severity=root.get("severity", ""),
        message=root.findtext("message") or "",
        recovery=root.findtext("recovery"),
        retry_after=retry_after,
        actions=[action.text or "" for action in root.iterfind("available_actions/action")],
    )


def envelope_code(result: types.CallToolResult) -> str | None:
    """The code of a result's `<tool_error>`, or None when it is not one."""
    text = (
        result.content[0].text
        if len(result.content or []) == 1 and isinstance(result.content[0], types.TextContent)
        else ""
    )
    match = re.match(r'<tool_error code="([A-Z_]+)"', text)
    return match.group(1) if match else None


def invoices(result: types.CallToolResult) -> list[dict[str, Any]]:
    """The invoices of a successful list_invoices."""
    check(not result.is_error, f"expected a success, got {clip(json.dumps(wire(result)))}")
    structured = result.structured_content or {}
    found = structured.get("invoices")
    check(
        isinstance(found, list) and len(found) > 0 and all(str(i.get("id", "")).startswith("inv_") for i in found),
        f"expected structuredContent.invoices with inv_ ids, got {clip(json.dumps(wire(result)))}",
    )
    return found


@dataclass
class Seen:
    """What the gateway sent the client unasked."""

    tools_changed: int = 0
    other: list[str] = field(default_factory=list)

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.tools_changed += 1
        elif isinstance(message, Exception):
            self.other.append(f"{type(message).__name__}: {message}")


async def eventually(what: str, limit_s: float, probe: Callable[[], Awaitable[Any]], every_s: float = 0.1) -> Any:
    """probe()'s first answer that is not None, asked every `every_s` for up to `limit_s`."""
    deadline = time.monotonic() + limit_s
    while True:
        answer = await probe()
        if answer is not None:
            return answer
        if time.monotonic() > deadline:
            raise Failed(f"{what}: not within {limit_s:g} s")
        await anyio.sleep(every_s)


class Run:
    def __init__(self, options: argparse.Namespace, stack: AsyncExitStack) -> None:
        self.options = options
        self.label = options.label
        self.stack = stack
        self.seen = Seen()
        self.session: ClientSession
        self.passed: list[bool] = []
        self.restarted: list[subprocess.Popen[bytes]] = []
        self.web_token = os.environ.get("DEMO_TOKEN", "")
        self.demo_pid = 0

    # ---- sessions -------------------------------------------------------------------------

    async def open_gateway(self) -> None:
        o = self.options
        if o.gateway_url:
            headers = {}
            if token := os.environ.get("FUSION_GATEWAY_TOKEN"):
                headers["Authorization"] = f"Bearer {token}"
            http = await self.stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
            )
            read, write = await self.stack.enter_async_context(streamable_http_client(o.gateway_url, http_client=http))
        else:
            errlog = self.stack.enter_context(open(o.gateway_log, "a", encoding="utf-8"))  # noqa: SIM115
            env = {"DEMO_TOKEN": self.web_token, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
            server = StdioServerParameters(command=o.gateway_stdio[0], args=o.gateway_stdio[1:], env=env)
            read, write = await self.stack.enter_async_context(stdio_client(server, errlog=errlog))
        self.session = await self.stack.enter_async_context(
            ClientSession(read, write, read_timeout_seconds=REQUEST_LIMIT_S, message_handler=self.seen)
        )
        initialized = await self.session.initialize()
        check(initialized.server_info.name == "fusion-gateway", f"server is {initialized.server_info.name!r}")

    async def direct_stdio(self, stack: AsyncExitStack, command: str, args: list[str], log: str) -> ClientSession:
        errlog = stack.enter_context(open(log, "a", encoding="utf-8"))  # noqa: SIM115
        server = StdioServerParameters(command=command, args=args, env={"RUST_LOG": "warn"})
        read, write = await stack.enter_async_context(stdio_client(server, errlog=errlog))
        session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=REQUEST_LIMIT_S))
        await session.initialize()
        return session

    async def direct_billing(self, stack: AsyncExitStack) -> ClientSession:
        """billing-server over stdio on a fresh database of its own, seeded as the mounted one."""
        work = self.options.work
        db = os.path.join(work, f"direct-{self.label}-{time.monotonic_ns()}.db")
        return await self.direct_stdio(stack, self.options.billing, ["--db", db], os.path.join(work, "direct.log"))

    async def direct_everything(self, stack: AsyncExitStack) -> ClientSession:
        log = os.path.join(self.options.work, "direct.log")
        return await self.direct_stdio(stack, "node", [self.options.everything, "stdio"], log)

    async def direct_web(self, stack: AsyncExitStack) -> ClientSession:
        """The web upstream itself, with its token."""
        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.web_token}"}, timeout=httpx2.Timeout(30))
        )
        read, write = await stack.enter_async_context(streamable_http_client(self.options.web_url, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write, read_timeout_seconds=REQUEST_LIMIT_S))
        await session.initialize()
        return session

    # ---- calls ----------------------------------------------------------------------------

    async def call(self, name: str, arguments: dict[str, Any], **kwargs: Any) -> types.CallToolResult:
        """A call as an application makes it, through the SDK's call_tool."""
        return await self.session.call_tool(name, arguments, **kwargs)

    async def call_raw(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """A call whose answer is taken as the gateway sent it, for polling an upstream that is
        coming back. call_tool checks every answer with isError false against the output schema
        last listed for the tool, and HANDOFF_CONNECTING is such an answer, with no structured
        content: for a tool listed with an outputSchema (billing is) call_tool raises "Tool ... has
        an output schema but did not return structured content" instead of returning it."""
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        return await self.session.send_request(request, types.CallToolResult)

    async def tool_names(self) -> list[str]:
        return [tool.name for tool in (await self.session.list_tools()).tools]

    async def listed(self, name: str, limit_s: float = 15) -> None:
        async def probe() -> bool | None:
            return True if name in await self.tool_names() else None

        await eventually(f"{name} in tools/list", limit_s, probe, every_s=0.2)

    # ---- the scenarios --------------------------------------------------------------------

    async def scenario(self, name: str, limit_s: float, body: Callable[[], Awaitable[str]]) -> None:
        start = time.monotonic()
        try:
            with anyio.fail_after(limit_s):
                detail = await body()
        except Failed as error:
            ok, detail = False, str(error)
        except TimeoutError:
            ok, detail = False, f"no end within its limit of {limit_s:g} s"
        except Exception as error:  # noqa: BLE001 - any other failure is the scenario's
            ok, detail = False, f"{type(error).__name__}: {error}"
        else:
            ok = True
        self.passed.append(ok)
        took = time.monotonic() - start
        print(f"{'PASS' if ok else 'FAIL'} [{self.label}] {name} ({took:.1f} s): {detail}", flush=True)

    async def slow_start(self) -> str:
        """The first call, made at once, finds `slow` still starting; following the retry_after
        of each answer gets through once it is up, and the other mounts never wait for it."""
        started = time.monotonic()
        first = await self.call("slow.billing", LIST)
        check(first.is_error is False, f"isError: expected false (a warning), got {first.is_error}")
        envelope = tool_error(first)
        check(
            (envelope.code, envelope.severity, envelope.retry_after) == ("HANDOFF_CONNECTING", "warning", 2),
            f"expected HANDOFF_CONNECTING, severity warning, retry_after 2; got {envelope}",
        )
        check(first.structured_content is None, "a warning carries no structuredContent")
        check('Upstream "slow"' in envelope.message, f"the message does not name the mount: {envelope.message!r}")
        # Meanwhile, another mount answers.
        await self.listed("demo.billing", 10)
        invoices(await self.call("demo.billing", LIST))
        # The retries are taken as sent (see call_raw): one that finds `slow` just ready could
        # otherwise be judged by a schema call_tool lists after the answer.
        tries, wait = 1, envelope.retry_after or 2
        while True:
            await anyio.sleep(wait)
            tries += 1
            answer = await self.call_raw("slow.billing", LIST)
            if envelope_code(answer) is None:
                invoices(answer)
                break
            envelope = tool_error(answer)
            check(
                answer.is_error is False and envelope.code == "HANDOFF_CONNECTING" and envelope.severity == "warning",
                f"try {tries}: expected a success or a HANDOFF_CONNECTING warning, "
                f"got {envelope} isError={answer.is_error}",
            )
            check(tries < 6, f"still HANDOFF_CONNECTING after {tries} tries")
            wait = envelope.retry_after or 2
        found = invoices(await self.call("slow.billing", LIST))
        return (
            f"HANDOFF_CONNECTING (severity warning, isError false, retry_after 2) on tries 1-{tries - 1}, "
            f"demo.billing answered meanwhile; through on try {tries}, {time.monotonic() - started:.1f} s "
            f"after the first call ({len(found)} invoices)"
        )

    async def tools_listed(self) -> str:
        """Each upstream's tools listed under its namespace with the schemas it lists them with."""
        for name in ("demo.billing", "web.billing", "everything.echo", "slow.billing"):
            await self.listed(name)
        mounted = {tool.name: tool for tool in (await self.session.list_tools()).tools}
        counts = []
        async with AsyncExitStack() as stack:
            for namespace, session in (
                ("demo", await self.direct_billing(stack)),
                ("web", await self.direct_web(stack)),
                ("everything", await self.direct_everything(stack)),
            ):
                upstream = (await session.list_tools()).tools
                expected = sorted(f"{namespace}.{tool.name}" for tool in upstream)
                got = sorted(name for name in mounted if name.startswith(namespace + "."))
                check(got == expected, f"{namespace}: expected tools {expected}, got {got}")
                for tool in upstream:
                    through = mounted[f"{namespace}.{tool.name}"]
                    check(
                        same(through.input_schema, tool.input_schema),
                        f"{namespace}.{tool.name}: inputSchema differs from the upstream's",
                    )
                    check(
                        same(through.output_schema, tool.output_schema),
                        f"{namespace}.{tool.name}: outputSchema differs from the upstream's",
                    )
                    check(through.description == tool.description, f"{namespace}.{tool.name}: description differs")
                counts.append(f"{namespace} {len(upstream)}")
        return f"tools per namespace ({', '.join(counts)}, slow 1) with the upstreams' own schemas and descriptions"

    async def forwarded(
        self, tool: str, direct: str, arguments: dict[str, Any], opener: str, namespace: str | None = None
    ) -> tuple[types.CallToolResult, str]:
        """The gateway's answer to `tool`, compared whole with the upstream's own to `direct`;
        with its text. With `namespace`, the upstream's envelope names its actions
        (`billing.list_invoices`) as the gateway serves them (`{namespace}.billing.list_invoices`)."""
        through = await self.call(tool, arguments)
        async with AsyncExitStack() as stack:
            upstream = await getattr(self, opener)(stack)
            straight = await upstream.call_tool(direct, arguments)
        served = (lambda text: re.sub(r"(?<![\w.-])billing\.(\w+)", rf"{namespace}.billing.\1", text)) if namespace else str
        a, b = json.dumps(wire(through), sort_keys=True), served(json.dumps(wire(straight), sort_keys=True))
        check(a == b, f"{tool} through the gateway:\n{clip(a, 1500)}\n--- {direct} called directly:\n{clip(b, 1500)}")
        check(only_text(through) == served(only_text(straight)), "the texts differ")
        return through, only_text(through)

    async def success_stdio(self) -> str:
        _, text = await self.forwarded("demo.billing", "billing", LIST, "direct_billing")
        count = len(json.loads(text)["invoices"])
        return (
            f"demo.billing list_invoices: {count} invoices, "
            f"the whole result identical to billing-server's own ({len(text)}-byte text)"
        )

    async def success_http(self) -> str:
        _, text = await self.forwarded("web.billing", "billing", LIST, "direct_web")
        count = len(json.loads(text)["invoices"])
        return (
            f"web.billing list_invoices: {count} invoices, the whole result identical to billing-server's own over HTTP"
        )

    async def success_everything(self) -> str:
        arguments = {"message": "hello through the gateway"}
        _, text = await self.forwarded("everything.echo", "echo", arguments, "direct_everything")
        check(text == "Echo: hello through the gateway", f"echo said {text!r}")
        return f"everything.echo answered {text!r}, identical to server-everything's own"

    async def tool_error_of(self, tool: str, opener: str) -> str:
        namespace = tool.split(".")[0]
        result, text = await self.forwarded(tool, "billing", MISSING, opener, namespace)
        envelope = tool_error(result)
        check(result.is_error is True, f"isError: expected true, got {result.is_error}")
        check(envelope.code == "NOT_FOUND", f"expected code NOT_FOUND, got {envelope.code}")
        actions = [f"{namespace}.billing.list_invoices"]
        check(envelope.actions == actions, f"expected available_actions {actions}, got {envelope.actions}")
        return (
            f"{tool} get_invoice inv_nope: NOT_FOUND, isError true, "
            f"its {len(text.encode())} bytes billing-server's own but for the actions, named as the gateway serves them ({actions[0]})"
        )

    async def tool_error_stdio(self) -> str:
        return await self.tool_error_of("demo.billing", "direct_billing")

    async def tool_error_http(self) -> str:
        return await self.tool_error_of("web.billing", "direct_web")

    async def validation(self) -> str:
        """A bad argument to the third-party tool is answered by the gateway, from its schema."""
        result = await self.call("everything.echo", {"message": 5})
        text = only_text(result)
        check(result.is_error is True, f"isError: expected true, got {result.is_error}")
        lines = text.split("\n")
        check(
            lines[0] == '<validation_error action="everything.echo">',
            f'expected it to open with <validation_error action="everything.echo">, got {clip(text)!r}',
        )
        field_line = '<field name="message">Invalid type. You sent: 5. Expected \'5\' (a string, in quotes).</field>'
        check(field_line in lines, f"expected the line {field_line!r}, got {clip(text)!r}")
        check(lines[-1] == "</validation_error>", f"expected it to close with </validation_error>, got {clip(text)!r}")
        # What server-everything itself says, to show the words above are the gateway's.
        async with AsyncExitStack() as stack:
            own = await (await self.direct_everything(stack)).call_tool("echo", {"message": 5})
        own_text = only_text(own)
        check(not own_text.startswith("<validation_error"), f"server-everything itself said {own_text!r}")
        return (
            f'<validation_error action="everything.echo"> with {field_line} '
            f"(server-everything alone says {clip(own_text, 80)!r})"
        )

    async def unknown_namespace(self) -> str:
        names = await self.tool_names()
        result = await self.call("nope.x", {})
        envelope = tool_error(result)
        check(result.is_error is True, f"isError: expected true, got {result.is_error}")
        check(
            (envelope.code, envelope.severity) == ("HANDOFF_NAMESPACE_MISMATCH", "error"),
            f"expected HANDOFF_NAMESPACE_MISMATCH, severity error; got {envelope}",
        )
        check("'nope'" in envelope.message, f"the message does not name the namespace: {envelope.message!r}")
        check(sorted(envelope.actions) == sorted(names), f"available_actions {envelope.actions}; tools/list {names}")
        return f"nope.x: HANDOFF_NAMESPACE_MISMATCH, isError true, available_actions = the {len(names)} tools listed"

    async def unknown_tool(self) -> str:
        listed = [name for name in await self.tool_names() if name.startswith("everything.")]
        result = await self.call("everything.ecko", {})
        envelope = tool_error(result)
        check(result.is_error is True, f"isError: expected true, got {result.is_error}")
        check(
            (envelope.code, envelope.severity) == ("HANDOFF_NAMESPACE_MISMATCH", "error"),
            f"expected HANDOFF_NAMESPACE_MISMATCH, severity error; got {envelope}",
        )
        check(
            'Did you mean "everything.echo"?' in (envelope.recovery or ""),
            f"expected a did-you-mean in <recovery>, got {envelope.recovery!r}",
        )
        check(sorted(envelope.actions) == sorted(listed), f"available_actions {envelope.actions}; listed {listed}")
        return (
            f'everything.ecko: HANDOFF_NAMESPACE_MISMATCH, recovery "{envelope.recovery}", '
            f"{len(listed)} available_actions"
        )

    async def gateway_token(self) -> str:
        """The gateway's own --token: every scenario here sent it; without it, or with another,
        no session is opened: 401 with the challenge, before any MCP."""
        said = []
        initialize = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "e2e", "version": "0"}},
        }
        for header, expected in ((None, 'Bearer realm="mcp"'), ("Bearer not-the-token", 'error="invalid_token"')):
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            if header:
                headers["Authorization"] = header
            async with httpx2.AsyncClient(timeout=httpx2.Timeout(30)) as http:
                response = await http.post(self.options.gateway_url, json=initialize, headers=headers)
            challenge = response.headers.get("www-authenticate", "")
            check(response.status_code == 401, f"expected 401, got {response.status_code}: {response.text}")
            check("mcp-session-id" not in response.headers, "a session was opened without the token")
            check(expected in challenge, f"WWW-Authenticate: expected {expected}, got {challenge!r}")
            said.append(f"401 {challenge}")
        return f"no token: {said[0]}; a wrong one: {said[1]}"

    async def progress(self) -> str:
        """server-everything's progress, reported on the token the client put in the request's
        _meta (call_tool puts one there when given a progress callback), reaches the client: every
        step, in order, the last one too though the upstream's result follows it at once."""
        reports: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append((progress, total, message))

        result = await self.call(
            "everything.trigger-long-running-operation", {"duration": 1, "steps": 3}, progress_callback=on_progress
        )
        text = only_text(result)
        check(not result.is_error, f"expected a success, got {text!r}")
        check(text == "Long running operation completed. Duration: 1 seconds, Steps: 3.", f"result text {text!r}")
        seen = [(p, t) for p, t, _ in reports]
        check(seen == [(1, 3), (2, 3), (3, 3)], f"expected progress 1/3, 2/3, 3/3 before the result; got {reports}")
        return f"3 progress notifications (1/3, 2/3, 3/3) before the result {text!r}"

    async def gone_and_back(
        self, namespace: str, kill: Callable[[], Awaitable[str]], restart: Callable[[], Awaitable[None]] | None
    ) -> str:
        """Kills an upstream's process; its calls answer HANDOFF_UPSTREAM_UNAVAILABLE with the
        seconds to the next attempt and its tools leave tools/list; after the restart, following
        retry_after, calls get through again and the client was told both changes."""
        tool = f"{namespace}.billing"
        await self.listed(tool)
        invoices(await self.call(tool, LIST))
        announced = self.seen.tools_changed
        killed = await kill()
        first: list[tuple[types.CallToolResult, Envelope]] = []

        # Down, as the supervisor sees it (the very first call after the kill may instead be
        # the in-flight variant, "failed the call", which is UNAVAILABLE too).
        async def unavailable() -> tuple[types.CallToolResult, Envelope] | None:
            result = await self.call_raw(tool, LIST)
            code = envelope_code(result)
            check(code in ("HANDOFF_UPSTREAM_UNAVAILABLE", None), f"after the kill: {clip(only_text(result))}")
            if code is None:
                return None  # not noticed yet
            envelope = tool_error(result)
            if not first:
                first.append((result, envelope))
            return (result, envelope) if "is unavailable" in envelope.message else None

        result, envelope = await eventually("HANDOFF_UPSTREAM_UNAVAILABLE", 8, unavailable, every_s=0.05)
        check(result.is_error is True, f"isError: expected true, got {result.is_error}")
        check(envelope.severity == "error", f"severity: expected error, got {envelope.severity}")
        # reconnect initial_ms is 1000 (jitter ±20 %): the first attempt is at most 2 s away.
        check(
            envelope.retry_after is not None and 1 <= envelope.retry_after <= 2,
            f"retry_after: expected 1 or 2 seconds, got {envelope.retry_after}",
        )
        check(
            f"Call again in {envelope.retry_after} second{'' if envelope.retry_after == 1 else 's'}"
            in (envelope.recovery or ""),
            f"the recovery does not say the retry_after: {envelope.recovery!r}",
        )
        check(tool not in await self.tool_names(), f"{tool} is still in tools/list while its upstream is down")
        said = f"HANDOFF_UPSTREAM_UNAVAILABLE (isError true, retry_after {envelope.retry_after})"
        if first and first[0][1].message != envelope.message:
            said += f" [first: {first[0][1].code} retry_after {first[0][1].retry_after}]"

        if restart is not None:
            await restart()
        tries, wait, codes = 0, envelope.retry_after, []
        while True:
            await anyio.sleep(wait)
            tries += 1
            answer = await self.call_raw(tool, LIST)
            code = envelope_code(answer)
            if code is None:
                break
            check(
                code in ("HANDOFF_UPSTREAM_UNAVAILABLE", "HANDOFF_CONNECTING"),
                f"while coming back: {clip(only_text(answer))}",
            )
            later = tool_error(answer)
            check(later.retry_after is not None and 1 <= later.retry_after <= 30, f"retry_after {later.retry_after}")
            check(tries < 10, f"not back after {tries} tries: {later}")
            codes.append(f"{code} {later.retry_after}")
            wait = later.retry_after or 1
        invoices(answer)
        # And through the SDK's call_tool, as an application calls.
        invoices(await self.call(tool, LIST))
        await self.listed(tool, 5)

        async def told() -> bool | None:
            return True if self.seen.tools_changed >= announced + 2 else None

        await eventually("tools/list_changed for the tools gone and back", 5, told)
        changed = self.seen.tools_changed - announced
        waited = f" (then {', '.join(codes)})" if codes else ""
        return (
            f"{killed}; {said}, {tool} left tools/list; back on try {tries} after following retry_after{waited}; "
            f"{changed} tools/list_changed seen"
        )

    async def kill_stdio(self) -> str:
        pid_file = self.options.demo_pidfile

        async def kill() -> str:
            pid = read_pid(pid_file)
            os.remove(pid_file)
            os.kill(pid, signal.SIGKILL)
            self.demo_pid = pid
            return f"SIGKILL to billing-server (pid {pid})"

        detail = await self.gone_and_back("demo", kill, None)

        async def new_pid() -> int | None:
            return maybe_pid(pid_file)

        again = await eventually("a new pid file", 5, new_pid)
        check(again != self.demo_pid, f"the pid file names the killed process {again}")
        return f"{detail}; the gateway restarted it as pid {again}"

    async def kill_http(self) -> str:
        o = self.options
        pid_file = o.web_pidfile

        async def kill() -> str:
            pid = read_pid(pid_file)
            os.kill(pid, signal.SIGKILL)

            # Found out by the keepalive ping, with no call made: its tools are withdrawn.
            async def withdrawn() -> bool | None:
                return True if "web.billing" not in await self.tool_names() else None

            await eventually("web.billing withdrawn after the kill (keepalive)", 20, withdrawn)
            return f"SIGKILL to billing-server --http (pid {pid}), seen by the keepalive without a call"

        async def restart() -> None:
            address = urlsplit(o.web_url).netloc
            start = os.path.getsize(o.web_log) if os.path.exists(o.web_log) else 0
            log = open(o.web_log, "a", encoding="utf-8")  # noqa: SIM115 - closed once the child has it
            env = {**os.environ, "BILLING_TOKEN": self.web_token, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
            process = subprocess.Popen(
                [o.billing, "--db", o.web_db, "--http", address],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            log.close()
            self.restarted.append(process)
            with open(pid_file, "w", encoding="utf-8") as file:
                file.write(f"{process.pid}\n")

            async def listening() -> bool | None:
                check(process.poll() is None, f"billing-server --http {address} exited with {process.returncode}")
                with open(o.web_log, encoding="utf-8") as file:
                    file.seek(start)
                    return True if f"billing-server: listening on {o.web_url}" in file.read() else None

            await eventually(f"billing-server listening again on {address}", 10, listening)

        detail = await self.gone_and_back("web", kill, restart)
        return f"{detail}; restarted on the same port, {urlsplit(o.web_url).netloc}"

    def stop_restarted(self) -> None:
        for process in self.restarted:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def read_pid(path: str) -> int:
    with open(path, encoding="utf-8") as file:
        return int(file.read().strip())


def maybe_pid(path: str) -> int | None:
    try:
        return read_pid(path)
    except (OSError, ValueError):
        return None


async def main(options: argparse.Namespace) -> bool:
    # The time limit encloses the sessions, so that their task groups end inside it.
    with anyio.fail_after(RUN_LIMIT_S):
        async with AsyncExitStack() as stack:
            run = Run(options, stack)
            stack.callback(run.stop_restarted)
            try:
                await run.open_gateway()
            except Exception as error:  # noqa: BLE001 - reported as a failed scenario
                print(f"FAIL [{run.label}] connect to the gateway: {type(error).__name__}: {error}", flush=True)
                return False
            # First, while `slow` is still asleep.
            await run.scenario(
                "slow upstream: HANDOFF_CONNECTING warning, through after retry_after", 30, run.slow_start
            )
            await run.scenario("tools/list: each upstream under its namespace", 30, run.tools_listed)
            await run.scenario("forwarded success: billing-server over stdio", 15, run.success_stdio)
            await run.scenario("forwarded success: billing-server over HTTP", 15, run.success_http)
            await run.scenario("forwarded success: server-everything", 15, run.success_everything)
            await run.scenario("upstream tool error byte for byte, its actions in the gateway's names: billing-server over stdio", 15, run.tool_error_stdio)
            await run.scenario("upstream tool error byte for byte, its actions in the gateway's names: billing-server over HTTP", 15, run.tool_error_http)
            await run.scenario("bad argument to server-everything: <validation_error>", 15, run.validation)
            await run.scenario("unknown namespace: HANDOFF_NAMESPACE_MISMATCH", 10, run.unknown_namespace)
            await run.scenario("unknown tool: HANDOFF_NAMESPACE_MISMATCH with did-you-mean", 10, run.unknown_tool)
            if options.gateway_url and os.environ.get("FUSION_GATEWAY_TOKEN"):
                await run.scenario("gateway --token: calls without it refused", 15, run.gateway_token)
            await run.scenario("progress passed through from server-everything", 15, run.progress)
            await run.scenario("stdio upstream killed mid-run: UNAVAILABLE, then back", 30, run.kill_stdio)
            await run.scenario("HTTP upstream killed mid-run: UNAVAILABLE, then back", 30, run.kill_http)
            if run.seen.other:
                print(f"note [{run.label}] the session reported: {'; '.join(run.seen.other)}", flush=True)
        # The sessions are closed: a stdio gateway has been asked to end.
        passed = sum(run.passed)
        print(
            f"{'PASSED' if all(run.passed) else 'FAILED'} [{run.label}] {passed}/{len(run.passed)} scenarios",
            flush=True,
        )
        return all(run.passed)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--label", required=True, help="the gateway's transport, as printed")
    parser.add_argument("--billing", required=True, help="the billing-server executable")
    parser.add_argument("--everything", required=True, help="server-everything's dist/index.js")
    parser.add_argument("--work", required=True, help="a directory for direct databases and logs")
    parser.add_argument("--demo-pidfile", required=True, help="where the demo mount's wrapper writes its pid")
    parser.add_argument("--web-url", required=True, help="the web upstream's URL")
    parser.add_argument("--web-pidfile", required=True, help="the web upstream's pid, rewritten on restart")
    parser.add_argument("--web-db", required=True, help="the web upstream's database")
    parser.add_argument("--web-log", required=True, help="the web upstream's stderr")
    parser.add_argument("--gateway-log", help="the stderr of a gateway spawned here")
    parser.add_argument("--gateway-url", help="a gateway over Streamable HTTP")
    parser.add_argument("--gateway-stdio", nargs=argparse.REMAINDER, help="the gateway's command and arguments")
    options = parser.parse_args(argv)
    if bool(options.gateway_url) == bool(options.gateway_stdio):
        parser.error("give exactly one of --gateway-url and --gateway-stdio (with a command)")
    if options.gateway_stdio and not options.gateway_log:
        parser.error("--gateway-stdio needs --gateway-log")
    return options


if __name__ == "__main__":
    try:
        ok = anyio.run(main, parse_args(sys.argv[1:]))
    except TimeoutError:
        print(f"FAIL the run did not end within {RUN_LIMIT_S} s", flush=True)
        ok = False
    sys.exit(0 if ok else 1)
