#!/usr/bin/env python3
"""The upstream the gateway mounts for the JSON-Schema-Test-Suite: an MCP server on stdio with
one tool per test group of the vendored suite (draft2020-12/ beside this file), whose input
schema is the group's schema wrapped as the `value` argument.

    upstream.py

It validates nothing and answers every call with success, its text the arguments as JSON: so
whatever is refused was refused by the gateway, and whatever comes back echoed was forwarded.
The low-level `Server` of the MCP Python SDK 2.3.0 has no check of arguments against a tool's
input schema to turn off (1.x's `validate_input` is gone); run.py proves that it checks none,
and that each tool is listed as built, by talking to this server directly.

run.py imports `groups()` from here, so the runner and the server agree on every tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from jsonschema import Draft202012Validator
from referencing.exceptions import Unresolvable
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SUITE = Path(__file__).resolve().parent / "draft2020-12"


@dataclass
class Group:
    """One test group of the suite: its schema, its tests, and the tool it becomes."""

    tool: str  # g{N}, N counted over every group of every file, files sorted by name
    file: str  # the suite's file name, like "type.json"
    index: int  # the group's place in its file
    description: str
    schema: Any
    tests: list[dict[str, Any]]

    def input_schema(self) -> dict[str, Any]:
        """The tool's input schema. Arguments must be an object, so the instance is sent as
        `{"value": instance}`. A schema object gets a `$id` of its own when it has none, which
        makes it an embedded resource: its `#/$defs/...` and `#` references then resolve inside
        it rather than against the wrapper."""
        inner = self.schema
        if isinstance(inner, dict) and "$id" not in inner:
            inner = {"$id": f"urn:suite:{Path(self.file).stem}:{self.index}", **inner}
        # The keys in the order the SDK's wire model of the tool's input schema writes them
        # (properties, required, type, then the rest): it re-dumps every listing through
        # that model, so only in this order does the listing say byte for byte what is built.
        return {"properties": {"value": inner}, "required": ["value"], "type": "object", "additionalProperties": False}

    def tool_entry(self) -> types.Tool:
        return types.Tool(
            name=self.tool, description=f"{self.file}: {self.description}", input_schema=self.input_schema()
        )


def needs_remote(schema: Any, tests: list[dict[str, Any]]) -> bool:
    """Whether evaluating the schema on its tests reaches a schema the suite serves from
    http://localhost:1234, told by the Python `jsonschema` package with no such schema known. A
    mount's validator fetches nothing (a schema an upstream lists must not make the gateway
    open URLs), so such a group is left out, as refRemote.json and vocabulary.json are."""
    validator = Draft202012Validator(schema)
    for test in tests:
        try:
            validator.is_valid(test["data"])
        except Unresolvable:
            return True
        except Exception:  # noqa: BLE001 - a regex Python cannot read says nothing of references
            continue
    return False


def groups(remote: bool = False) -> list[Group]:
    """Every group of the vendored files, in a stable order (files by name, groups as filed):
    those that can be run, or with `remote` those left out because they need a remote schema."""
    found: list[Group] = []
    left_out: list[Group] = []
    for path in sorted(SUITE.glob("*.json")):
        for index, group in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            into = left_out if needs_remote(group["schema"], group["tests"]) else found
            tool = f"g{len(found)}" if into is found else f"remote{len(left_out)}"
            into.append(Group(tool, path.name, index, group["description"], group["schema"], group["tests"]))
    return left_out if remote else found


def server() -> Server[Any]:
    tools = [group.tool_entry() for group in groups()]

    async def list_tools(_ctx: Any, _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(params.arguments))])

    return Server("jsonschema-suite", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    app = server()
    async with stdio_server() as (read, write):
        await app.run(read, write, app.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
