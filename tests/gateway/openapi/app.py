"""A small invoice API in FastAPI, serving its own OpenAPI document at /openapi.json: the API
the gateway's OpenAPI mount is tested against (tests/gateway/openapi/run.sh).

Every route wants the header `X-API-Key` to equal the environment's SHOP_KEY (401 otherwise);
`/hits` (left out of the document) counts the requests that reached a route, so a test can tell
that a call the gateway refused never got here.
"""

from __future__ import annotations

import asyncio
import os

from fastapi import Depends, FastAPI, Header, HTTPException, Response
from pydantic import BaseModel, Field

KEY = os.environ.get("SHOP_KEY", "")
HITS = {"count": 0}


def api_key(x_api_key: str | None = Header(default=None, include_in_schema=False)) -> None:
    HITS["count"] += 1
    if not KEY or x_api_key != KEY:
        raise HTTPException(status_code=401, detail="a valid X-API-Key header is required")


app = FastAPI(title="Shop", version="1.0.0")
guarded = [Depends(api_key)]


class NewInvoice(BaseModel):
    id: str = Field(pattern=r"^inv_[a-z0-9]+$", description="The new invoice's id, like inv_42.")
    customer: str = Field(min_length=1)
    amount_cents: int = Field(gt=0)
    currency: str = Field(default="EUR", min_length=3, max_length=3)


INVOICES: dict[str, dict] = {
    "inv_1": {"id": "inv_1", "customer": "acme", "amount_cents": 1200, "currency": "EUR", "locked": False},
    "inv_2": {"id": "inv_2", "customer": "globex", "amount_cents": 500, "currency": "EUR", "locked": True},
}


@app.get("/invoices", operation_id="list_invoices", summary="List every invoice.", dependencies=guarded)
def list_invoices(customer: str | None = None) -> dict:
    return {"invoices": [i for i in INVOICES.values() if customer is None or i["customer"] == customer]}


@app.get("/invoices/{invoice_id}", operation_id="get_invoice", summary="Read one invoice.", dependencies=guarded)
def get_invoice(invoice_id: str) -> dict:
    if invoice_id not in INVOICES:
        raise HTTPException(status_code=404, detail=f"no invoice {invoice_id}")
    return INVOICES[invoice_id]


@app.post("/invoices", operation_id="create_invoice", summary="Create an invoice.", dependencies=guarded)
def create_invoice(invoice: NewInvoice) -> dict:
    if invoice.id in INVOICES:
        raise HTTPException(status_code=409, detail=f"invoice {invoice.id} already exists")
    if invoice.currency not in ("EUR", "USD"):
        raise HTTPException(status_code=400, detail=f"unknown currency {invoice.currency}; use EUR or USD")
    if invoice.amount_cents % 5:
        raise HTTPException(status_code=422, detail="amount_cents must be a multiple of 5")
    INVOICES[invoice.id] = {**invoice.model_dump(), "locked": False}
    return INVOICES[invoice.id]


@app.delete("/invoices/{invoice_id}", operation_id="void_invoice", summary="Void an invoice.", dependencies=guarded)
def void_invoice(invoice_id: str) -> Response:
    if invoice_id not in INVOICES:
        raise HTTPException(status_code=404, detail=f"no invoice {invoice_id}")
    if INVOICES[invoice_id]["locked"]:
        raise HTTPException(status_code=403, detail=f"invoice {invoice_id} is locked by accounting")
    del INVOICES[invoice_id]
    return Response(status_code=204)


@app.get("/files/{name:path}", operation_id="read_file", summary="Echo the file name received.", dependencies=guarded)
def read_file(name: str) -> dict:
    return {"name": name}


@app.get("/admin", operation_id="admin", summary="Nobody reaches this through read_file.", dependencies=guarded)
def admin() -> dict:
    return {"admin": True}


@app.get("/report", operation_id="report", summary="A report that fails as asked.", dependencies=guarded)
async def report(outcome: str, response: Response) -> dict:
    if outcome == "limited":
        raise HTTPException(status_code=429, detail="too many reports", headers={"Retry-After": "7"})
    if outcome == "busy":
        raise HTTPException(status_code=503, detail="the report queue is full", headers={"Retry-After": "3"})
    if outcome == "gateway":
        raise HTTPException(status_code=504, detail="the warehouse did not answer")
    if outcome == "crash":
        raise HTTPException(status_code=500, detail="the report generator crashed")
    if outcome == "slow":
        await asyncio.sleep(30)
    return {"report": outcome}


@app.get("/hits", include_in_schema=False)
def hits() -> dict:
    return HITS
