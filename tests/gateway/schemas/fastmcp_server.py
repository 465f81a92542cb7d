#!/usr/bin/env python3
"""A FastMCP server whose tools are declared the way FastMCP users declare them: pydantic
models, so its inputSchemas are the ones pydantic writes as FastMCP publishes them (it inlines
$defs but a recursive model's, drops pydantic's `discriminator` mapping, and closes the root
with additionalProperties false; nested models say nothing of unknown keys, and pydantic ignores
them).

Every tool answers with exactly the arguments it received after pydantic parsed them (JSON
text and structured content), so a test sees both that the call arrived and how it was read:
an unknown key pydantic ignored is missing from the echo, a "2" it coerced comes back as 2.

    python fastmcp_server.py        # serves MCP over stdio

If CALL_LOG names a file, each tools/call is appended to it (the tool's name, one line) before
pydantic sees the arguments: the proof that a call the gateway refused never got here.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware
from fastmcp.tools import Tool, ToolResult
from pydantic import BaseModel, ConfigDict, EmailStr, Field, TypeAdapter

mcp = FastMCP("schemas-py")
# Python values (models, datetimes, UUIDs) as JSON, leaving out model fields the call did not set.
_ECHO = TypeAdapter(dict[str, Any])


def echo(**arguments: Any) -> dict[str, Any]:
    return _ECHO.dump_python(arguments, mode="json", exclude_unset=True)


class CallLog(Middleware):
    """Appends each tools/call's tool name to CALL_LOG, before the arguments are validated."""

    def __init__(self, path: str) -> None:
        self.path = path

    async def on_call_tool(self, context: Any, call_next: Any) -> Any:
        with open(self.path, "a", encoding="utf-8") as log:
            log.write(f"{context.message.name}\n")
        return await call_next(context)


# ---- nested models and Optional[Model] ----------------------------------------------------


class Geo(BaseModel):
    lat: float
    lon: float


class Address(BaseModel):
    street: str
    zip_code: str
    geo: Geo


@mcp.tool
def ship(address: Address, billing: Address | None = None, gift_note: str | None = None) -> dict[str, Any]:
    """Ship to an address (a model two levels deep), billed to an optional one."""
    return echo(address=address, billing=billing, gift_note=gift_note)


# ---- list[Model] and Literal ---------------------------------------------------------------


class Item(BaseModel):
    sku: str
    qty: int


@mcp.tool
def order(
    items: list[Item],
    priority: Literal["low", "normal", "high"] = "normal",
    channel: Literal["web"] = "web",
) -> dict[str, Any]:
    """Order items; priority and channel are Literals with defaults (so null is not accepted)."""
    return echo(items=items, priority=priority, channel=channel)


# ---- a discriminated union ----------------------------------------------------------------


class Cat(BaseModel):
    kind: Literal["cat"]
    name: str
    meows: bool


class Dog(BaseModel):
    kind: Literal["dog"]
    name: str
    barks: int


@mcp.tool
def adopt(pet: Annotated[Cat | Dog, Field(discriminator="kind")]) -> dict[str, Any]:
    """Adopt a cat or a dog, told apart by `kind`."""
    return echo(pet=pet)


# ---- plain unions (no discriminator) ------------------------------------------------------


class Circle(BaseModel):
    radius: float


class Square(BaseModel):
    side: float


@mcp.tool
def pick(value: int | str, shape: Circle | Square) -> dict[str, Any]:
    """A scalar union and a union of two models, with nothing to tell the models apart but their keys."""
    return echo(value=value, shape=shape)


# ---- extra="allow" --------------------------------------------------------------------------


class Note(BaseModel):
    model_config = ConfigDict(extra="allow")
    text: str


@mcp.tool
def annotate(note: Note) -> dict[str, Any]:
    """A note that keeps whatever keys it is given besides `text`."""
    return echo(note=note)


# ---- a recursive model ----------------------------------------------------------------------


class Node(BaseModel):
    name: str
    children: list[Node] = []


@mcp.tool
def grow(tree: Node) -> dict[str, Any]:
    """A tree: each node has a name and children, nodes again."""
    return echo(tree=tree)


# ---- formats: EmailStr, datetime, UUID ------------------------------------------------------


@mcp.tool
def contact(email: EmailStr, when: datetime, id: UUID, cc: list[EmailStr] = []) -> dict[str, Any]:  # noqa: A002, B006
    """Formats: an email address, a date-time, a UUID, and a list of email addresses."""
    return echo(email=email, when=when, id=id, cc=cc)


# ---- free-form maps --------------------------------------------------------------------------


@mcp.tool
def store(data: dict[str, Any], counts: dict[str, int] = {}) -> dict[str, Any]:  # noqa: B006
    """A map of anything under any keys, and a map of integers under any keys."""
    return echo(data=data, counts=counts)


# ---- no parameters, and a root schema of exactly {"type": "object"} --------------------------


@mcp.tool
def ping() -> dict[str, Any]:
    """No parameters at all."""
    return echo()


class Raw(Tool):
    """A tool whose parameters are set to {"type": "object"}: FastMCP publishes them as they are
    and, having no function signature to check them against, passes any arguments through."""

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(structured_content=arguments)


mcp.add_tool(Raw(name="raw", description="Any object at all.", parameters={"type": "object"}))


if __name__ == "__main__":
    if log := os.environ.get("CALL_LOG"):
        mcp.add_middleware(CallLog(log))
    mcp.run(show_banner=False)
