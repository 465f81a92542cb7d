"""billing-server over HTTP against clients that hold what they can: 20,000 sessions opened
without a token (all refused), 20,000 opened with one and left to expire (memory given back),
and a few hundred sockets sending their headers a byte at a time while a real client calls.

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
        # (builds of several commits), peaks of 360 to 440 MB left 8.3 to 11.6 MB. 16 MB is
        # above that spread, and below what sessions that each kept 400 bytes would leave.
        allowed = 16 * 1024
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--slow", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hostile.") as workdir:
        sessions(args.binary, workdir, args.sessions)
        slow_clients(args.binary, workdir, args.slow)
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed", flush=True)
        sys.exit(1)
    print("\nall checks passed", flush=True)


if __name__ == "__main__":
    main()
