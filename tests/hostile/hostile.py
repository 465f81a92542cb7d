"""billing-server over HTTP against clients that hold what they can: 20,000 sessions opened
without a token (all refused), 20,000 opened with one and left to expire (memory given back),
a few hundred sockets sending their headers a byte at a time while a real client calls, and
resource subscriptions past every bound (listens of 30,000 URIs, 1 MiB URIs, a server full of
subscriptions, then freed by DELETE).

Usage: hostile.py BILLING_SERVER [--sessions N] [--slow N]
Prints what it measured; exits 1 when a check fails. Standard library only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "hostile-test-token"
INITIALIZE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "0"}},
    }
)
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
FAILURES: list[str] = []


def check(condition: bool, what: str) -> None:
    print(f"  {'ok  ' if condition else 'FAIL'} {what}", flush=True)
    if not condition:
        FAILURES.append(what)


class Server:
    """billing-server on a loopback port with `flags`, on a fresh database."""

    def __init__(self, binary: str, flags: list[str], workdir: str, name: str) -> None:
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.log = open(self.log_path, "w+b")
        env = dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", "warn"))
        self.process = subprocess.Popen(
            [binary, "--db", os.path.join(workdir, f"{name}.db"), "--http", "127.0.0.1:0", *flags],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
            env=env,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            text = open(self.log_path, encoding="utf-8", errors="replace").read()
            found = re.search(r"listening on http://([\d.]+):(\d+)/mcp", text)
            if found:
                self.host, self.port = found.group(1), int(found.group(2))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise SystemExit(f"billing-server did not start:\n{open(self.log_path).read()}")

    def rss_kib(self) -> int:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise SystemExit("no VmRSS")

    def connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=30)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def post(conn: http.client.HTTPConnection, body: str, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
    conn.request("POST", "/mcp", body=body, headers={**HEADERS, **headers})
    response = conn.getresponse()
    data = response.read()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def initialize_many(server: Server, count: int, headers: dict[str, str], threads: int = 4) -> dict[int, int]:
    """`count` initialize requests over `threads` keep-alive connections: how many got each status."""
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def work(n: int) -> None:
        conn = server.connection()
        seen: dict[int, int] = {}
        for _ in range(n):
            try:
                status, answer_headers, _ = post(conn, INITIALIZE, headers)
            except (http.client.HTTPException, OSError):
                conn.close()
                conn = server.connection()
                status, answer_headers, _ = post(conn, INITIALIZE, headers)
            seen[status] = seen.get(status, 0) + 1
            if answer_headers.get("connection", "").lower() == "close":
                conn.close()
                conn = server.connection()
        conn.close()
        with lock:
            for status, n in seen.items():
                statuses[status] = statuses.get(status, 0) + n

    workers = [threading.Thread(target=work, args=(count // threads + (i < count % threads),)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return statuses


def sessions(binary: str, workdir: str, count: int) -> None:
    print(f"\n==> {count} sessions without a token, then {count} with one, left to expire", flush=True)
    idle = 3
    # The token comes from the environment, as the README advises.
    os.environ["BILLING_TOKEN"] = TOKEN
    server = Server(
        binary,
        ["--max-sessions", str(count + 100), "--max-sessions-per-caller", str(count + 100), "--session-idle-secs", str(idle)],
        workdir,
        "sessions",
    )
    try:
        # Warm up what the first session allocates once (the schema, the database), then measure.
        initialize_many(server, 50, {"Authorization": f"Bearer {TOKEN}"}, threads=1)
        time.sleep(idle + 2)
        start = server.rss_kib()
        print(f"  RSS at start: {start / 1024:.1f} MB", flush=True)

        began = time.monotonic()
        refused = initialize_many(server, count, {})
        took = time.monotonic() - began
        after_refused = server.rss_kib()
        check(refused == {401: count}, f"{count} initialize without a token: {refused} in {took:.1f} s")
        check(
            after_refused - start < 8 * 1024,
            f"RSS after them: {after_refused / 1024:.1f} MB (+{(after_refused - start) / 1024:.1f} MB)",
        )

        began = time.monotonic()
        opened = initialize_many(server, count, {"Authorization": f"Bearer {TOKEN}"})
        took = time.monotonic() - began
        peak = server.rss_kib()
        check(opened == {200: count}, f"{count} sessions opened with the token: {opened} in {took:.1f} s")
        print(f"  RSS with {count} sessions open: {peak / 1024:.1f} MB", flush=True)

        # Each session expires `idle` seconds after its last request; the allocator gives the
        # memory back within seconds after that. What stays is the allocator's own bookkeeping
        # of its busiest moment, which grows with the peak: over nine runs of 20,000 sessions
        # (builds of several commits), peaks of 360 to 440 MB left 8.3 to 11.6 MB (2.3 to 2.6 %);
        # on a machine where the same builds peak at 890 to 920 MB they leave 17.0 to 17.5 MB
        # (1.9 %), and 5,000 sessions peak at 389 MB and leave 6.5 MB. So the allowance is 2.5 %
        # of the peak, at least 16 MB: above that spread, and still below what sessions that
        # each kept 400 bytes (8 MB for 20,000) would add to it.
        allowed = max(16 * 1024, peak // 40)
        deadline = time.monotonic() + idle + 60
        now = server.rss_kib()
        while time.monotonic() < deadline:
            time.sleep(1)
            now = server.rss_kib()
            if now - start < allowed:
                time.sleep(5)
                now = server.rss_kib()
                break
        check(
            now - start < allowed,
            f"RSS after they expired: {now / 1024:.1f} MB (start {start / 1024:.1f} MB, +{(now - start) / 1024:.1f} MB, "
            f"from a peak of {peak / 1024:.1f} MB)",
        )
        # And the server still opens sessions: none is left holding a slot.
        again = initialize_many(server, 10, {"Authorization": f"Bearer {TOKEN}"}, threads=1)
        check(again == {200: 10}, f"sessions open again after the expiry: {again}")
    finally:
        server.stop()
        os.environ.pop("BILLING_TOKEN", None)


def call_latencies(server: Server, session: str, calls: int) -> list[float]:
    conn = server.connection()
    latencies = []
    for i in range(calls):
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "billing", "arguments": {"action": "get_invoice", "id": "inv_2026_0001"}},
            }
        )
        began = time.perf_counter()
        status, _, data = post(conn, body, {"mcp-session-id": session})
        latencies.append(time.perf_counter() - began)
        if status != 200 or b'"isError":false' not in data:
            raise SystemExit(f"call {i} failed: {status} {data[:300]!r}")
    conn.close()
    return latencies


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def slow_clients(binary: str, workdir: str, slow: int) -> None:
    print(f"\n==> {slow} sockets sending headers a byte a second while a real client calls", flush=True)
    server = Server(binary, [], workdir, "slow")
    try:
        conn = server.connection()
        status, headers, _ = post(conn, INITIALIZE, {})
        session = headers["mcp-session-id"]
        post(conn, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), {"mcp-session-id": session})
        conn.close()
        call_latencies(server, session, 50)
        baseline = call_latencies(server, session, 300)

        stop = threading.Event()
        sockets: list[socket.socket] = []
        cut = [0]

        def dribble() -> None:
            for _ in range(slow):
                s = socket.create_connection((server.host, server.port))
                s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
                sockets.append(s)
            while not stop.is_set():
                for s in list(sockets):
                    try:
                        s.sendall(b"a")
                    except OSError:
                        sockets.remove(s)
                        cut[0] += 1
                stop.wait(1)

        dribbler = threading.Thread(target=dribble)
        dribbler.start()
        while len(sockets) < slow and dribbler.is_alive():
            time.sleep(0.05)
        loaded = call_latencies(server, session, 300)
        held = len(sockets)
        # The header deadline (10 s by default) ends them; a write after that fails.
        time.sleep(15)
        stop.set()
        dribbler.join()
        for s in sockets:
            s.close()

        b50, b99 = percentile(baseline, 0.5) * 1000, percentile(baseline, 0.99) * 1000
        l50, l99 = percentile(loaded, 0.5) * 1000, percentile(loaded, 0.99) * 1000
        print(f"  alone:                 p50 {b50:.2f} ms, p99 {b99:.2f} ms", flush=True)
        print(f"  with {held} slow sockets: p50 {l50:.2f} ms, p99 {l99:.2f} ms", flush=True)
        check(held == slow, f"{slow} slow sockets held open while the client called ({held})")
        check(l99 <= max(5 * b99, b99 + 50), f"the client's p99 stayed within its normal latency ({l99:.2f} ms vs {b99:.2f} ms)")
        check(cut[0] == slow, f"the header deadline cut every slow socket ({cut[0]} of {slow})")
        print(f"  mean {statistics.mean(loaded) * 1000:.2f} ms over {len(loaded)} calls", flush=True)
    finally:
        server.stop()


def answer(data: bytes) -> dict:
    """The JSON-RPC message of a response: a JSON body, or the last `data:` of an event stream."""
    text = data.decode("utf-8", errors="replace").strip()
    if text.startswith("{"):
        return json.loads(text)
    messages = [line[len("data:"):].strip() for line in text.splitlines() if line.startswith("data:")]
    return json.loads([m for m in messages if m][-1])


def open_session(server: Server) -> tuple[http.client.HTTPConnection, str]:
    conn = server.connection()
    _, headers, _ = post(conn, INITIALIZE, {})
    session = headers["mcp-session-id"]
    post(conn, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), {"mcp-session-id": session})
    return conn, session


def subscribe(conn: http.client.HTTPConnection, session: str, uri: str, id: int) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}})
    return answer(post(conn, body, {"mcp-session-id": session})[2])


def delete(conn: http.client.HTTPConnection, session: str) -> int:
    conn.request("DELETE", "/mcp", headers={**HEADERS, "mcp-session-id": session})
    response = conn.getresponse()
    response.read()
    return response.status


def settled_rss(server: Server, start: int, allowed: int) -> int:
    """The RSS once it is within `allowed` KiB of `start`, or after 30 s."""
    deadline = time.monotonic() + 30
    now = server.rss_kib()
    while now - start >= allowed and time.monotonic() < deadline:
        time.sleep(0.5)
        now = server.rss_kib()
    return now


def listen_body(uris: list[str]) -> str:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"_meta": meta, "notifications": {"resourceSubscriptions": uris}}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params})


def subscriptions(binary: str, workdir: str) -> None:
    print("\n==> resource subscriptions past every bound", flush=True)
    server = Server(binary, [], workdir, "subscriptions")
    try:
        conn, session = open_session(server)
        call_latencies(server, session, 50)
        baseline = call_latencies(server, session, 300)

        # One listen of 30,000 URIs (1.3 MB), session-less as 2026-07-28 is, no token needed.
        body = listen_body([f"billing://invoices/inv_2026_{i:05}" for i in range(30_000)])
        headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "subscriptions/listen"}
        took = []
        for _ in range(5):
            listen = server.connection()
            began = time.perf_counter()
            status, _, data = post(listen, body, headers)
            took.append(time.perf_counter() - began)
            listen.close()
            error = answer(data).get("error", {})
        check(
            status == 200 and error.get("code") == -32602 and "holds 30000 URIs" in error.get("message", ""),
            f"a listen of 30,000 URIs ({len(body) / 1e6:.1f} MB) refused -32602: median {statistics.median(took) * 1000:.1f} ms, "
            f"slowest {max(took) * 1000:.1f} ms",
        )
        # Three of them at a time, again and again, while the client calls. On a busy machine one
        # measurement can fall on a bad moment: a pair (alone, then loaded) is measured again
        # when it misses the bound, and the check fails only when both pairs miss it.
        stop = threading.Event()

        def flood() -> None:
            listen = server.connection()
            while not stop.is_set():
                post(listen, body, headers)
            listen.close()

        pairs = []
        for attempt in range(2):
            if attempt > 0:
                baseline = call_latencies(server, session, 300)
            stop.clear()
            flooders = [threading.Thread(target=flood) for _ in range(3)]
            for flooder in flooders:
                flooder.start()
            loaded = call_latencies(server, session, 300)
            stop.set()
            for flooder in flooders:
                flooder.join()
            b99, l99 = percentile(baseline, 0.99) * 1000, percentile(loaded, 0.99) * 1000
            pairs.append(f"p99 {l99:.2f} ms (alone {b99:.2f} ms)")
            if l99 <= max(5 * b99, b99 + 50):
                break
        check(
            l99 <= max(5 * b99, b99 + 50),
            f"get_invoice during three 30,000-URI listens at a time: {'; measured again: '.join(pairs)}",
        )

        # The session's own connection sat idle through the flood: on a slow machine longer than
        # the server's idle deadline, which closes it. A fresh one carries the session on.
        conn.close()
        conn = server.connection()
        # 150 subscribes of 1 MiB URIs: refused as a read of them is, and nothing kept.
        start = server.rss_kib()
        huge = "a" * (1 << 20)
        codes = {subscribe(conn, session, f"billing://invoices/inv_{i}_{huge}", 1000 + i).get("error", {}).get("code") for i in range(150)}
        after = server.rss_kib()
        check(codes == {-32602}, f"150 subscribes of 1 MiB URIs refused: codes {sorted(map(str, codes))}")
        check(
            after - start < 8 * 1024,
            f"RSS after them: {after / 1024:.1f} MB (start {start / 1024:.1f} MB, +{(after - start) / 1024:.1f} MB)",
        )
        check(delete(conn, session) in (200, 204), "the session ended with DELETE")
        conn.close()
        print(f"  RSS after its DELETE: {server.rss_kib() / 1024:.1f} MB", flush=True)

        # The server's whole budget: 20 sessions of 1,000 subscriptions, then one more refused.
        # Sessions are not connections: one connection carries the requests of them all.
        start = server.rss_kib()
        conn, first = open_session(server)
        full = [first] + [open_session(server)[1] for _ in range(20)]
        for n, session in enumerate(full[:20]):
            for i in range(1_000):
                subscribe(conn, session, f"billing://invoices/inv_{n}_{i:04}_{'x' * 20}", i + 1)
        refused = subscribe(conn, full[20], "billing://summary", 1).get("error", {})
        peak = server.rss_kib()
        check(refused.get("code") == -32000, f"past 20,000 subscriptions the server refuses more: {refused.get('code')}")
        print(f"  RSS with 20,000 subscriptions held: {peak / 1024:.1f} MB (+{(peak - start) / 1024:.1f} MB)", flush=True)
        for session in full:
            delete(conn, session)
        now = settled_rss(server, start, 4 * 1024)
        check(
            now - start < 4 * 1024,
            f"RSS after their DELETE: {now / 1024:.1f} MB (start {start / 1024:.1f} MB, +{(now - start) / 1024:.1f} MB)",
        )
        session = open_session(server)[1]
        again = subscribe(conn, session, "billing://summary", 1)
        check("result" in again, f"a new session subscribes again: {again}")
        conn.close()
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--slow", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile.") as workdir:
        sessions(args.binary, workdir, args.sessions)
        slow_clients(args.binary, workdir, args.slow)
        subscriptions(args.binary, workdir)
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed", flush=True)
        sys.exit(1)
    print("\nall checks passed", flush=True)


if __name__ == "__main__":
    main()
