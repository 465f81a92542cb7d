#!/usr/bin/env python3
"""The official Python MCP SDK lists a port and its original over stdio and compares them:
the same tool names, each with the same hints (readOnlyHint, destructiveHint, idempotentHint,
openWorldHint). Exits 1 on any difference, printing both listings.

    python port.py ORIGINAL_BINARY PORT_BINARY FILE_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


async def listed(binary: str, file: Path) -> dict[str, dict[str, object]]:
    params = StdioServerParameters(command=binary, args=["--file", str(file)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
    out: dict[str, dict[str, object]] = {}
    for tool in tools:
        annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
        out[tool.name] = {hint: annotations.get(hint) for hint in HINTS}
    return out


async def main() -> int:
    original_bin, port_bin, directory = sys.argv[1:4]
    original = await listed(original_bin, Path(directory) / "original.json")
    port = await listed(port_bin, Path(directory) / "port.json")
    print(f"{'tool':<16} " + " ".join(f"{h:<16}" for h in HINTS))
    for name in sorted(set(original) | set(port)):
        row = port.get(name) or {}
        print(f"{name:<16} " + " ".join(f"{json.dumps(row.get(h)):<16}" for h in HINTS))
    if original != port or len(port) != 7:
        print(f"the port lists\n{json.dumps(port, indent=2)}\nits original\n{json.dumps(original, indent=2)}")
        return 1
    print(f"python sdk: {len(port)} tools, the same names and hints")
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
