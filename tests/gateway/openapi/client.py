#!/usr/bin/env python3
"""The gateway's OpenAPI mount end to end: the official Python MCP SDK as the client of a
fusion-gateway (over stdio) that mounts a FastAPI app (app.py, under uvicorn) by its OpenAPI
document, three ways:

  shop   the document fetched from the app's /openapi.json, the API key from SHOP_KEY
  files  the same document read from a file, with base_url
  anon   the document fetched, no key (so the API answers 401)

    client.py --gateway FUSION_GATEWAY --work DIR

The gateway starts before the API does, so its first calls find the mount unavailable; the
API is started then, and the mount must come up by itself. Prints a PASS or FAIL line per
scenario and exits 1 if any failed; nothing waits without a limit.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from e2e import Envelope, Failed, Seen, check, clip, eventually, tool_error, wire  # noqa: E402

RUN_LIMIT_S = 120
REQUEST_LIMIT_S = 20


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content or [] if isinstance(block, types.TextContent))


class Run:
    def __init__(self, options: argparse.Namespace, stack: AsyncExitStack) -> None:
        self.options = options
        self.stack = stack
        self.work = Path(options.work)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.key = os.urandom(8).hex()
        self.seen = Seen()
        self.session: ClientSession
        self.api: subprocess.Popen[bytes] | None = None
        self.passed: list[bool] = []

    def write_config(self) -> Path:
        sys.path.insert(0, str(HERE))
        from app import app  # the document as the app makes it, without serving it

        document = self.work / "shop.json"
        document.write_text(json.dumps(app.openapi()), encoding="utf-8")
        config = self.work / "gateway.toml"
        config.write_text(
            f"""connect_timeout_ms = 3000
[reconnect]
initial_ms = 200
max_ms = 1000

[[mount]]
namespace = "shop"
openapi = "{self.base}/openapi.json"
headers_env = {{ "X-API-Key" = "SHOP_KEY" }}
timeout_ms = 2000

[[mount]]
namespace = "files"
openapi = {json.dumps(str(document))}
base_url = "{self.base}"
headers_env = {{ "X-API-Key" = "SHOP_KEY" }}

[[mount]]
namespace = "anon"
openapi = "{self.base}/openapi.json"
""",
            encoding="utf-8",
        )
        return config

    async def open_gateway(self, config: Path) -> None:
        errlog = self.stack.enter_context(open(self.work / "gateway.log", "a", encoding="utf-8"))  # noqa: SIM115
        env = {"SHOP_KEY": self.key, "RUST_LOG": os.environ.get("RUST_LOG", "warn"), "PATH": os.environ["PATH"]}
        server = StdioServerParameters(command=self.options.gateway, args=["--config", str(config)], env=env)
        read, write = await self.stack.enter_async_context(stdio_client(server, errlog=errlog))
        self.session = await self.stack.enter_async_context(
            ClientSession(read, write, read_timeout_seconds=REQUEST_LIMIT_S, message_handler=self.seen)
        )
        await self.session.initialize()

    def start_api(self) -> None:
        log = open(self.work / "api.log", "ab")  # noqa: SIM115
        env = {**os.environ, "SHOP_KEY": self.key}
        self.api = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "app:app", "--host", "127.0.0.1", "--port", str(self.port)],
            cwd=HERE,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )

    def stop_api(self) -> None:
        if self.api is not None and self.api.poll() is None:
            self.api.terminate()
            try:
                self.api.wait(10)
            except subprocess.TimeoutExpired:
                self.api.kill()
                self.api.wait()

    def hits(self) -> int:
        request = urllib.request.Request(f"{self.base}/hits")
        with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310 (the loopback)
            return json.load(answer)["count"]

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        with anyio.fail_after(REQUEST_LIMIT_S):
            return await self.session.call_tool(name, arguments)

    async def failure(self, name: str, arguments: dict[str, Any], code: str) -> Envelope:
        result = await self.call(name, arguments)
        check(result.is_error is True, f"{name}: expected isError, got {clip(json.dumps(wire(result)))}")
        envelope = tool_error(result)
        check(envelope.code == code, f"{name}: expected {code}, got {envelope.code}: {envelope.message!r}")
        return envelope

    async def scenario(self, name: str, limit_s: float, body: Callable[[], Awaitable[str]]) -> None:
        try:
            with anyio.fail_after(limit_s):
                said = await body()
            print(f"PASS {name}: {said}", flush=True)
            self.passed.append(True)
        except Failed as failed:
            print(f"FAIL {name}: {failed}", flush=True)
            self.passed.append(False)
        except TimeoutError:
            print(f"FAIL {name}: did not end within {limit_s:g} s", flush=True)
            self.passed.append(False)

    # ---- scenarios ------------------------------------------------------------------------

    async def before_the_api(self) -> str:
        result = await self.call("shop.list_invoices", {})
        envelope = tool_error(result)
        check(
            envelope.code in ("HANDOFF_CONNECTING", "HANDOFF_UPSTREAM_UNAVAILABLE"),
            f"expected HANDOFF_CONNECTING or HANDOFF_UPSTREAM_UNAVAILABLE, got {envelope.code}",
        )
        check(envelope.retry_after is not None, "expected a retry_after")
        return f"{envelope.code}, retry_after {envelope.retry_after}: {clip(envelope.message, 160)}"

    async def comes_up(self) -> str:
        self.start_api()
        wanted = {f"{m}.{t}" for m in ("shop", "files", "anon") for t in ("list_invoices", "get_invoice", "create_invoice")}

        async def listed() -> list[types.Tool] | None:
            tools = (await self.session.list_tools()).tools
            return tools if wanted <= {tool.name for tool in tools} else None

        tools = await eventually("the three mounts' tools listed", 30, listed, every_s=0.2)
        by_name = {tool.name: tool for tool in tools}
        get = by_name["shop.get_invoice"]
        check(get.description == "Read one invoice.", f"description {get.description!r}")
        check(get.input_schema.get("required") == ["invoice_id"], f"input schema {get.input_schema}")
        check(bool(get.annotations and get.annotations.read_only_hint), "GET is not marked read-only")
        void = by_name["shop.void_invoice"]
        check(bool(void.annotations and void.annotations.destructive_hint), "DELETE is not marked destructive")
        body = by_name["shop.create_invoice"].input_schema["properties"]["body"]
        check(body.get("required") == ["id", "customer", "amount_cents"], f"the body's schema {clip(json.dumps(body))}")
        check(self.seen.tools_changed > 0, "no notifications/tools/list_changed")
        return f"{len(tools)} tools, descriptions and schemas from the document; list_changed told"

    async def success(self) -> str:
        result = await self.call("shop.get_invoice", {"invoice_id": "inv_1"})
        check(not result.is_error, f"expected a success, got {clip(json.dumps(wire(result)))}")
        check((result.structured_content or {}).get("customer") == "acme", f"got {clip(json.dumps(wire(result)))}")
        listed = await self.call("files.list_invoices", {"customer": "globex"})
        invoices = (listed.structured_content or {}).get("invoices", [])
        check([i["id"] for i in invoices] == ["inv_2"], f"files.list_invoices(globex): {clip(text_of(listed))}")
        return "shop.get_invoice inv_1 and files.list_invoices?customer=globex answered with structured content"

    async def validated_here(self) -> str:
        before = self.hits()
        bad = {"body": {"id": "inv_9", "customer": "acme", "amount_cents": "ten"}}
        result = await self.call("shop.create_invoice", bad)
        text = text_of(result)
        check(result.is_error is True and text.startswith("<validation_error"), f"got {clip(text)}")
        check('name="body.amount_cents"' in text, f"no field line for body.amount_cents: {clip(text)}")
        unknown = await self.call("shop.get_invoice", {"invoice_id": "inv_1", "invoiceId": "x"})
        check(text_of(unknown).startswith("<validation_error"), f"an unknown key passed: {clip(text_of(unknown))}")
        check(self.hits() == before, "a call refused by the gateway reached the API")
        return "wrong type and unknown key refused with field lines; the API saw neither"

    async def not_found(self) -> str:
        envelope = await self.failure("shop.get_invoice", {"invoice_id": "inv_404"}, "NOT_FOUND")
        check("no invoice inv_404" in envelope.message, f"message {envelope.message!r}")
        check("shop.list_invoices" in envelope.actions, f"actions {envelope.actions}")
        return f"{clip(envelope.message, 120)} / actions {envelope.actions}"

    async def conflict(self) -> str:
        body = {"id": "inv_1", "customer": "acme", "amount_cents": 100}
        envelope = await self.failure("shop.create_invoice", {"body": body}, "CONFLICT")
        check("already exists" in envelope.message, f"message {envelope.message!r}")
        return clip(envelope.message, 120)

    async def refused_by_the_api(self) -> str:
        said = []
        for amount, currency, words in ((100, "XXX", "unknown currency XXX"), (101, "EUR", "multiple of 5")):
            body = {"id": "inv_7", "customer": "acme", "amount_cents": amount, "currency": currency}
            result = await self.call("shop.create_invoice", {"body": body})
            text = text_of(result)
            check(result.is_error is True and text.startswith("<validation_error"), f"got {clip(text)}")
            check(words in text, f"the API's words {words!r} are not in {clip(text)}")
            said.append(text.split("\n")[1])
        return " / ".join(clip(line, 110) for line in said)

    async def forbidden(self) -> str:
        envelope = await self.failure("shop.void_invoice", {"invoice_id": "inv_2"}, "FORBIDDEN")
        check("locked by accounting" in envelope.message, f"message {envelope.message!r}")
        return clip(envelope.message, 120)

    async def auth_required(self) -> str:
        envelope = await self.failure("anon.list_invoices", {}, "AUTH_REQUIRED")
        check("X-API-Key" in envelope.message, f"message {envelope.message!r}")
        return clip(envelope.message, 120)

    async def statuses(self) -> str:
        limited = await self.failure("shop.report", {"outcome": "limited"}, "RATE_LIMITED")
        check(limited.retry_after == 7, f"RATE_LIMITED retry_after {limited.retry_after}, expected 7 (Retry-After)")
        busy = await self.failure("shop.report", {"outcome": "busy"}, "SERVER_BUSY")
        check(busy.retry_after == 3, f"SERVER_BUSY retry_after {busy.retry_after}, expected 3 (Retry-After)")
        await self.failure("shop.report", {"outcome": "gateway"}, "TIMEOUT")
        crashed = await self.failure("shop.report", {"outcome": "crash"}, "HANDOFF_UPSTREAM_UNAVAILABLE")
        check("crashed" in crashed.message, f"message {crashed.message!r}")
        slow = await self.failure("shop.report", {"outcome": "slow"}, "TIMEOUT")
        return f"429 retry_after 7, 503 retry_after 3, 504 TIMEOUT, 500 unavailable, slow: {clip(slow.message, 80)}"

    async def one_segment(self) -> str:
        result = await self.call("shop.read_file", {"name": "../admin"})
        check(not result.is_error, f"got {clip(text_of(result))}")
        check(result.structured_content == {"name": "../admin"}, f"got {clip(text_of(result))}")
        dots = await self.call("shop.read_file", {"name": ".."})
        check(text_of(dots).startswith("<validation_error"), f"'..' was sent: {clip(text_of(dots))}")
        return "'../admin' arrived as one path segment; '..' refused"

    async def api_gone(self) -> str:
        self.stop_api()
        envelope = await self.failure("shop.get_invoice", {"invoice_id": "inv_1"}, "HANDOFF_UPSTREAM_UNAVAILABLE")
        check("could not be reached" in envelope.message, f"message {envelope.message!r}")
        return clip(envelope.message, 140)

    async def run(self) -> bool:
        config = self.write_config()
        await self.open_gateway(config)
        try:
            await self.scenario("before the API is up: the mount answers in an envelope", 30, self.before_the_api)
            await self.scenario("the API comes up: its operations listed as tools", 40, self.comes_up)
            if not self.passed[-1]:
                return False
            await self.scenario("success: structured content, the API key sent (document by URL and by file)", 30, self.success)
            await self.scenario("validation by the gateway: the API never called", 30, self.validated_here)
            await self.scenario("404 is NOT_FOUND with the finders", 30, self.not_found)
            await self.scenario("409 is CONFLICT", 30, self.conflict)
            await self.scenario("400 and 422 are VALIDATION_ERROR with the API's words", 30, self.refused_by_the_api)
            await self.scenario("403 is FORBIDDEN", 30, self.forbidden)
            await self.scenario("401 is AUTH_REQUIRED (a mount without the key)", 30, self.auth_required)
            await self.scenario("429, 503, 504, 500 and a timeout", 40, self.statuses)
            await self.scenario("a path parameter stays one segment", 30, self.one_segment)
            await self.scenario("the API gone: HANDOFF_UPSTREAM_UNAVAILABLE", 30, self.api_gone)
        finally:
            self.stop_api()
        return all(self.passed)


async def main(options: argparse.Namespace) -> bool:
    with anyio.fail_after(RUN_LIMIT_S):
        async with AsyncExitStack() as stack:
            run = Run(options, stack)
            try:
                return await run.run()
            finally:
                run.stop_api()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--gateway", required=True, help="the fusion-gateway executable")
    parser.add_argument("--work", required=True, help="a directory for the gateway file and logs")
    started = time.monotonic()
    try:
        ok = anyio.run(main, parser.parse_args(sys.argv[1:]))
    except TimeoutError:
        print(f"FAIL the run did not end within {RUN_LIMIT_S} s", flush=True)
        ok = False
    print(f"{'passed' if ok else 'FAILED'} in {time.monotonic() - started:.1f} s", flush=True)
    sys.exit(0 if ok else 1)
