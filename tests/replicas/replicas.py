#!/usr/bin/env python3
"""Three billing-server replicas behind haproxy (round-robin, no stickiness), sharing one SQLite
file and one Redis, driven with the official Python MCP SDK. Run by run.sh, which starts them:

    python replicas.py --proxy URL --replica URL --replica URL --replica URL \
        --pids PID,PID,PID SCENARIO...

Scenarios: sessions, subscriptions, idempotency, kill (these need no rate limit), rate (the
replicas run with --rate-limit 10/60). Each prints one PASS line or fails with what it saw.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import traceback
import uuid
from collections import Counter
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import warnings

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import Implementation

SUMMARY_URI = "billing://summary"
# resources/subscribe is what a client of 2025-11-25 uses, which these sessions are.
warnings.filterwarnings("ignore", message="resources/subscribe is removed")
INFO = Implementation(name="replicas-test", version="1")


TOKEN = ""


class Failed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


class Seen:
    """What the HTTP client saw: the replica (haproxy's `x-replica`) that answered each request,
    by session."""

    def __init__(self) -> None:
        self.replicas: dict[str, list[str]] = {}
        self.statuses: Counter[int] = Counter()

    async def response(self, response: httpx2.Response) -> None:
        session = response.request.headers.get("mcp-session-id") or response.headers.get("mcp-session-id")
        self.statuses[response.status_code] += 1
        replica = response.headers.get("x-replica")
        if session and replica:
            self.replicas.setdefault(session, []).append(replica)


@asynccontextmanager
async def connect(url: str, seen: Seen | None = None, on_message: Any = None) -> AsyncIterator[ClientSession]:
    seen = seen or Seen()
    http = create_mcp_http_client(headers={"authorization": f"Bearer {TOKEN}"})
    http.event_hooks["response"].append(seen.response)
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            kwargs: dict[str, Any] = {"client_info": INFO}
            if on_message is not None:
                kwargs["message_handler"] = on_message
            async with ClientSession(read, write, **kwargs) as session:
                await session.initialize()
                yield session


async def billing(session: ClientSession, action: str, **arguments: Any) -> tuple[bool, Any]:
    """Calls the billing tool: (succeeded, the result's JSON or the envelope's text)."""
    result = await session.call_tool("billing", {"action": action, **arguments})
    text = result.content[0].text if result.content else ""
    if result.is_error:
        return False, text
    return True, json.loads(text)


async def all_invoices(session: ClientSession) -> list[dict[str, Any]]:
    invoices: list[dict[str, Any]] = []
    cursor = None
    while True:
        arguments: dict[str, Any] = {"limit": 100}
        if cursor:
            arguments["cursor"] = cursor
        ok, page = await billing(session, "list_invoices", **arguments)
        check(ok, f"list_invoices failed: {page}")
        invoices += page["invoices"]
        cursor = page.get("next_cursor")
        if not cursor:
            return invoices


async def scenario_sessions(options: argparse.Namespace) -> str:
    seen = Seen()
    async with connect(options.proxy, seen) as session:
        for _ in range(9):
            ok, page = await billing(session, "list_invoices", limit=5)
            check(ok, f"a call in a session moving between replicas failed: {page}")
    check(len(seen.replicas) == 1, f"expected one session, saw {list(seen.replicas)}")
    (session_id, replicas), = seen.replicas.items()
    check(len(set(replicas)) >= 2, f"the session's requests all reached {set(replicas)}")
    return f"one session served by {sorted(set(replicas))} across {len(replicas)} requests, none refused"


class Hearer:
    """Counts the `resources/updated` notifications of the summary a session hears."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated" and message.params.uri == SUMMARY_URI:
            self.count += 1
            self.changed.set()

    async def more_than(self, count: int, within: float) -> bool:
        with anyio.move_on_after(within):
            while self.count <= count:
                self.changed = anyio.Event()
                await self.changed.wait()
        return self.count > count


async def change_through(payer: ClientSession) -> None:
    """One change of the summary: a new invoice."""
    ok, invoice = await billing(payer, "create_invoice", customer_email="sub@example.com", amount_cents=500, currency="EUR")
    check(ok, f"create_invoice failed: {invoice}")


async def heard_once_each(subscriber_url: str, payer_url: str) -> int:
    """A subscriber at `subscriber_url` hears each change made at `payer_url`, once: the number
    of changes it heard after its stream opened."""
    hearer = Hearer()
    async with connect(subscriber_url, on_message=hearer) as subscriber, connect(payer_url) as payer:
        await subscriber.subscribe_resource(SUMMARY_URI)
        # The SDK opens its GET stream after `initialize` and says not when: change until the
        # subscriber hears one, then it listens.
        for _ in range(20):
            await change_through(payer)
            if await hearer.more_than(0, within=1):
                break
        check(hearer.count > 0, "the subscriber heard none of 20 changes")
        # Each further change is heard, and heard once: a second copy of one would come before
        # the next change's (the relay channel keeps their order).
        base = hearer.count
        for change in range(1, 4):
            await change_through(payer)
            check(await hearer.more_than(base + change - 1, within=10), f"change {change} was not heard")
        check(hearer.count == base + 3, f"3 changes were heard {hearer.count - base} times")
        return 3


async def scenario_subscriptions(options: argparse.Namespace) -> str:
    one, two = options.replica[0], options.replica[1]
    direct = await heard_once_each(one, two)
    through = await heard_once_each(options.proxy, options.proxy)
    return (
        f"a subscriber on replica 1 heard {direct} changes made through replica 2, once each; "
        f"through haproxy, {through} of {through}"
    )


async def scenario_idempotency(options: argparse.Namespace) -> str:
    key = f"replicas-{uuid.uuid4().hex}"
    email = f"idem-{uuid.uuid4().hex[:8]}@example.com"
    outcomes: dict[str, tuple[bool, Any]] = {}

    async def create_through(name: str, url: str) -> None:
        async with connect(url) as session:
            outcomes[name] = await billing(
                session, "create_invoice", customer_email=email, amount_cents=700, currency="EUR", idempotency_key=key
            )

    async with anyio.create_task_group() as group:
        for n, url in enumerate(options.replica, 1):
            group.start_soon(create_through, f"r{n}", url)
    # Counted on one replica directly: what is checked here is the key, not a session moving.
    async with connect(options.replica[0]) as session:
        made = [invoice for invoice in await all_invoices(session) if invoice["customer_email"] == email]
    got = {name: (f"answered {answer['id']}" if ok else f"refused: {answer}") for name, (ok, answer) in sorted(outcomes.items())}
    check(len(made) == 1, f"one key sent to 3 replicas at once made {len(made)} invoices: {made}; answers {got}")
    ids = {answer["id"] for ok, answer in outcomes.values() if ok}
    check(ids <= {made[0]["id"]}, f"the answers name other invoices: {got}")
    for name, (ok, answer) in outcomes.items():
        # A duplicate waits for the first call and answers with its invoice, else says SERVER_BUSY.
        check(ok or "SERVER_BUSY" in answer or "CONFLICT" in answer, f"unexpected refusal from {name}: {answer}")
    answers = ", ".join(f"{name} {what}" for name, what in got.items())
    return f"3 concurrent creates with one key, one per replica: 1 invoice ({made[0]['id']}); {answers}"


class RawSession:
    """A session over plain HTTP, as a client that outlives a broken connection keeps one: its
    id, sent again on every request. (The Python SDK 2.3.0 ends its whole client when a
    response breaks off mid-stream, and cannot be given a session id to go on with.)"""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.id: str | None = None
        self.replicas: list[str] = []
        self.next_id = 0

    async def send(self, method: str, params: dict[str, Any] | None = None, notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}
        if self.id:
            headers["mcp-session-id"] = self.id
        response = await self.http.post(self.url, json=message, headers=headers)
        self.replicas.append(response.headers.get("x-replica", "?"))
        response.raise_for_status()
        self.id = self.id or response.headers.get("mcp-session-id")
        if notify:
            return None
        body = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            frames = [line[6:] for line in body.splitlines() if line.startswith("data: {")]
            body = next(frame for frame in frames if '"id"' in frame)
        return json.loads(body)["result"]


async def scenario_kill(options: argparse.Namespace) -> str:
    email = f"kill-{uuid.uuid4().hex[:8]}@example.com"
    victim = options.pids[2]
    acknowledged: dict[str, str] = {}
    failures: list[str] = []
    async with httpx2.AsyncClient(timeout=30, headers={"authorization": f"Bearer {TOKEN}"}) as http:
        session = RawSession(http, options.proxy)
        await session.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})
        await session.send("notifications/initialized", notify=True)
        opened = session.id
        before_kill = 0
        for n in range(16):
            if n == 5:
                os.kill(victim, signal.SIGKILL)
                before_kill = len(session.replicas)
            key = f"kill-{uuid.uuid4().hex}"
            arguments = {"action": "create_invoice", "customer_email": email, "amount_cents": 100 + n, "currency": "EUR", "idempotency_key": key}
            for attempt in range(20):
                try:
                    result = await session.send("tools/call", {"name": "billing", "arguments": arguments})
                except (httpx2.HTTPError, StopIteration) as error:  # the replica died under the request
                    failures.append(type(error).__name__)
                    await anyio.sleep(0.1 * (attempt + 1))
                    continue
                text = result["content"][0]["text"]
                if not result.get("isError"):
                    acknowledged[key] = json.loads(text)["id"]
                    break
                # Its first try may still be running on another replica's view of the key.
                check("SERVER_BUSY" in text, f"unexpected refusal: {text}")
                failures.append("SERVER_BUSY")
                await anyio.sleep(0.1 * (attempt + 1))
            else:
                raise Failed(f"create {n} never succeeded ({failures[-3:]})")
        check(session.id == opened, "the session changed")
        # Counted through the same session, on whichever replicas are left.
        listed: list[dict[str, Any]] = []
        cursor = None
        while True:
            page_arguments: dict[str, Any] = {"action": "list_invoices", "limit": 100, **({"cursor": cursor} if cursor else {})}
            page = json.loads((await session.send("tools/call", {"name": "billing", "arguments": page_arguments}))["content"][0]["text"])
            listed += page["invoices"]
            cursor = page.get("next_cursor")
            if not cursor:
                break
    invoices = [invoice for invoice in listed if invoice["customer_email"] == email]
    ids = {invoice["id"] for invoice in invoices}
    check(set(acknowledged.values()) <= ids, f"acknowledged invoices missing: {set(acknowledged.values()) - ids}")
    check(len(invoices) == len(acknowledged) == 16, f"16 keys made {len(invoices)} invoices ({len(acknowledged)} acknowledged)")
    after = session.replicas[before_kill:]
    check("r3" not in after and len(set(after)) == 2, f"after the kill the session was answered by {sorted(set(after))}")
    return (
        f"r3 killed after 5 creates: 16 acknowledged, 16 in the database; one session throughout, answered by "
        f"{sorted(set(session.replicas[:before_kill]))} before and {sorted(set(after))} after; {len(failures)} retries"
    )


async def scenario_rate(options: argparse.Namespace) -> str:
    seen = Seen()
    admitted = refused = 0
    async with connect(options.proxy, seen) as session:
        for _ in range(14):
            ok, answer = await billing(session, "list_invoices", limit=1)
            if ok:
                admitted += 1
            else:
                check("RATE_LIMITED" in answer, f"unexpected refusal: {answer}")
                refused += 1
    (replicas,) = seen.replicas.values()
    check((admitted, refused) == (10, 4), f"10/60 admitted {admitted} and refused {refused} of 14")
    check(len(set(replicas)) >= 2, f"the calls all reached {set(replicas)}")
    return f"10/60 admitted exactly 10 of 14 calls served by {sorted(set(replicas))}"


def describe(error: BaseException) -> str:
    """The innermost errors of a task group's, each with where it was raised."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in error.exceptions)
    where = traceback.extract_tb(error.__traceback__)[-1] if error.__traceback__ else None
    at = f" (at {where.filename.rsplit('/', 1)[-1]}:{where.lineno})" if where else ""
    return f"{type(error).__name__}: {error}{at}"


async def measure_restore(options: argparse.Namespace) -> str:
    """What restoring a session costs the request that needs it: sessions opened on replica 1,
    each then called twice on replica 2 (the first call restores it there), timed per call."""
    import statistics
    import time

    first: list[float] = []
    second: list[float] = []
    here: list[float] = []
    async with httpx2.AsyncClient(timeout=30, headers={"authorization": f"Bearer {TOKEN}"}) as http:
        for _ in range(200):
            opener = RawSession(http, options.replica[0])
            await opener.send("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})
            await opener.send("notifications/initialized", notify=True)
            call = {"name": "billing", "arguments": {"action": "get_invoice", "id": "inv_2026_0001"}}
            started = time.perf_counter()
            await opener.send("tools/call", call)
            here.append(time.perf_counter() - started)
            elsewhere = RawSession(http, options.replica[1])
            elsewhere.id = opener.id
            for timings in (first, second):
                started = time.perf_counter()
                await elsewhere.send("tools/call", call)
                timings.append(time.perf_counter() - started)
    ms = lambda values: f"{statistics.median(values) * 1000:.2f}"  # noqa: E731
    return (
        f"| a call on the replica that opened the session | {ms(here)} |\n"
        f"| the first call on another replica (restores the session from Redis) | {ms(first)} |\n"
        f"| the next call there | {ms(second)} |"
    )


SCENARIOS = {
    "sessions": scenario_sessions,
    "subscriptions": scenario_subscriptions,
    "idempotency": scenario_idempotency,
    "kill": scenario_kill,
    "rate": scenario_rate,
    "measure-restore": measure_restore,
}


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--token", required=True)
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--replica", action="append", required=True)
    parser.add_argument("--pids", type=lambda text: [int(pid) for pid in text.split(",")], required=True)
    parser.add_argument("scenarios", nargs="+", choices=sorted(SCENARIOS))
    options = parser.parse_args()
    global TOKEN
    TOKEN = options.token
    failed: list[str] = []
    for name in options.scenarios:
        try:
            with anyio.fail_after(90):
                outcome = await SCENARIOS[name](options)
                print(outcome if name.startswith("measure") else f"PASS {name}: {outcome}", flush=True)
        except BaseException as error:  # noqa: BLE001 - every failure is reported the same way
            failed.append(name)
            print(f"FAIL {name}: {describe(error)}", flush=True)
    if not options.scenarios[0].startswith("measure"):
        passed = len(options.scenarios) - len(failed)
        print(f"{passed} of {len(options.scenarios)} passed" + (f"; failed: {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
