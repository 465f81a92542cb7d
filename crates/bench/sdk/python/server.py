"""The benchmark's tool on FastMCP (PyPI `fastmcp`), over stdio: `billing` with the action
`get_invoice`, its arguments checked by FastMCP against the function's types."""

from typing import Annotated, Literal

from fastmcp import FastMCP
from pydantic import Field

mcp = FastMCP("bench-fastmcp")


@mcp.tool(description="Invoices.")
def billing(action: Literal["get_invoice"], id: Annotated[str, Field(min_length=1)]) -> dict:
    return {
        "id": id,
        "customer_email": "ada@example.com",
        "amount_cents": 12500,
        "currency": "EUR",
        "status": "open",
        "due_date": "2026-12-31",
    }


if __name__ == "__main__":
    mcp.run(show_banner=False)
