"""The corpus: calls of the tools fastmcp_server.py and ts_server.mjs both serve (the same shapes,
declared with pydantic and with Zod), each either correct or bad.

A correct call (`path` None) must be forwarded by the gateway and succeed, with the same echo
the upstream gives when called directly. A bad call names the field path the gateway's
refusal must have a line for: dot-joined, array indices as numbers, "(root)" for the root.
The upstream itself may refuse a bad call or silently accept it (pydantic and Zod ignore
unknown keys, pydantic coerces "2" to 2): those it accepts are the ones only the gateway catches.

Calls that are bad only by a string format (email, date-time, uuid) are in the group "format".
A mount does not assert formats by default (the upstream checks its own, and takes more than
JSON Schema's strict forms: pydantic reads a date-time without an offset), so through `py` and
`ts` such a call is refused either by the gateway or by the upstream with words naming the
field; through `pyformats`, the same FastMCP server mounted with `assert_formats = true`, the
gateway itself must refuse it, at the field.

Calls in the group "read" send a string that spells the number the schema expects (`"2"` for an
integer): the gateway reads it (forgiving scalars, on by default), forwards the value read and
answers with the upstream's result and an `ARGUMENTS_CONVERTED` warning naming the field.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

SERVERS = ("py", "ts")
# The FastMCP server mounted once more with `assert_formats = true`: the format group and the
# correct calls of the tool it is about go through it too.
STRICT = "pyformats"


@dataclass(frozen=True)
class Case:
    tool: str
    name: str
    args: dict[str, Any]
    path: str | None = None  # None: a correct call; else where the refusal must point
    group: str = "shape"  # or "format", or "read"
    servers: tuple[str, ...] = SERVERS  # the servers the case is right for

    @property
    def correct(self) -> bool:
        return self.path is None


def ok(tool: str, name: str, args: dict[str, Any], servers: tuple[str, ...] = SERVERS) -> Case:
    return Case(tool, name, args, servers=servers)


def bad(tool: str, name: str, args: dict[str, Any], path: str, group: str = "shape") -> Case:
    return Case(tool, name, args, path, group)


def read(tool: str, name: str, args: dict[str, Any], path: str) -> Case:
    return Case(tool, name, args, path, "read")


DROP = object()  # a key `but` removes


def but(value: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of `value` with top-level keys replaced (or, with the value DROP, removed)."""
    out = copy.deepcopy(value)
    for key, new in changes.items():
        if new is DROP:
            out.pop(key, None)
        else:
            out[key] = new
    return out


GEO = {"lat": 48.85, "lon": 2.35}
ADDRESS = {"street": "1 Rue de Rivoli", "zip_code": "75001", "geo": GEO}
OTHER_ADDRESS = {"street": "10 Downing St", "zip_code": "SW1A 2AA", "geo": {"lat": 51, "lon": -0.12}}
ITEMS = [{"sku": "pen", "qty": 2}, {"sku": "ink", "qty": 1}]
CAT = {"kind": "cat", "name": "Tom", "meows": True}
DOG = {"kind": "dog", "name": "Rex", "barks": 3}
TREE = {
    "name": "root",
    "children": [
        {"name": "a", "children": [{"name": "a1", "children": []}, {"name": "a2"}]},
        {"name": "b"},
    ],
}
WHEN = "2026-01-02T03:04:05Z"
UUID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
CONTACT = {"email": "ada@example.com", "when": WHEN, "id": UUID}


def tree_with(change: Any) -> dict[str, Any]:
    """TREE with change(tree) applied to a copy."""
    tree = copy.deepcopy(TREE)
    change(tree)
    return {"tree": tree}


CASES: list[Case] = [
    # ---- ship: nested models (address.geo.lat), Optional[Model] (billing) ----------------------
    ok("ship", "address only, optional fields left out", {"address": ADDRESS}),
    ok("ship", "billing and gift_note given", {"address": ADDRESS, "billing": OTHER_ADDRESS, "gift_note": "hi"}),
    ok("ship", "billing and gift_note sent as null", {"address": ADDRESS, "billing": None, "gift_note": None}),
    bad("ship", "wrong type two levels deep", {"address": but(ADDRESS, geo=but(GEO, lat="north"))}, "address.geo.lat"),
    read("ship", "a numeric string for a float, two deep", {"address": but(ADDRESS, geo=but(GEO, lat="48.85"))},
         "address.geo.lat"),
    bad("ship", "unknown key in a nested model", {"address": but(ADDRESS, country="FR")}, "address.country"),
    bad("ship", "misspelt key in a nested model", {"address": but(ADDRESS, zip_code=DROP, zip_cod="75001")}, "address.zip_cod"),
    bad("ship", "unknown key two levels deep", {"address": but(ADDRESS, geo=but(GEO, alt=35))}, "address.geo.alt"),
    bad("ship", "unknown key in Optional[Model]", {"address": ADDRESS, "billing": but(OTHER_ADDRESS, vat="GB1")}, "billing.vat"),
    bad("ship", "wrong type in Optional[Model], two deep",
        {"address": ADDRESS, "billing": but(OTHER_ADDRESS, geo={"lat": 1, "lon": "east"})}, "billing.geo.lon"),
    bad("ship", "a string for Optional[Model]", {"address": ADDRESS, "billing": "same as address"}, "billing"),
    bad("ship", "missing required nested field", {"address": but(ADDRESS, geo={"lat": 1})}, "address.geo.lon"),
    bad("ship", "missing required argument", {"billing": ADDRESS}, "address"),
    bad("ship", "unknown argument", {"address": ADDRESS, "speed": "express"}, "speed"),
    # ---- order: list[Model], Literal / z.enum and z.literal -------------------------------------
    ok("order", "two items, defaults left out", {"items": ITEMS}),
    ok("order", "every Literal value given", {"items": ITEMS, "priority": "high", "channel": "web"}),
    ok("order", "an empty list", {"items": [], "priority": "low"}),
    bad("order", "wrong type in a list item", {"items": [ITEMS[0], {"sku": "ink", "qty": "two"}]}, "items.1.qty"),
    read("order", "a numeric string for an integer", {"items": [{"sku": "pen", "qty": "2"}]}, "items.0.qty"),
    bad("order", "unknown key in a list item", {"items": [ITEMS[0], {**ITEMS[1], "colour": "blue"}]}, "items.1.colour"),
    bad("order", "missing field in a list item", {"items": [{"sku": "pen"}]}, "items.0.qty"),
    bad("order", "bad Literal value", {"items": ITEMS, "priority": "urgent"}, "priority"),
    bad("order", "bad single-value Literal", {"items": ITEMS, "channel": "phone"}, "channel"),
    bad("order", "null for an optional field that is not nullable", {"items": ITEMS, "priority": None}, "priority"),
    bad("order", "an object for the list", {"items": ITEMS[0]}, "items"),
    # ---- adopt: a discriminated union ----------------------------------------------------------
    ok("adopt", "the cat variant", {"pet": CAT}),
    ok("adopt", "the dog variant", {"pet": DOG}),
    bad("adopt", "wrong type in a variant", {"pet": but(CAT, meows="yes")}, "pet.meows"),
    bad("adopt", "missing field in a variant", {"pet": but(DOG, barks=DROP)}, "pet.barks"),
    bad("adopt", "unknown key in a variant", {"pet": but(CAT, purrs=True)}, "pet.purrs"),
    bad("adopt", "the other variant's key", {"pet": but(CAT, barks=2)}, "pet.barks"),
    bad("adopt", "bad discriminator value", {"pet": but(CAT, kind="cow")}, "pet.kind"),
    bad("adopt", "no discriminator", {"pet": but(DOG, kind=DROP)}, "pet.kind"),
    # ---- pick: plain unions, no discriminator --------------------------------------------------
    ok("pick", "an integer and a circle", {"value": 7, "shape": {"radius": 1.5}}),
    ok("pick", "a string and a square", {"value": "seven", "shape": {"side": 2}}),
    bad("pick", "a list for int | str", {"value": [7], "shape": {"side": 2}}, "value"),
    bad("pick", "a fraction for int | str", {"value": 7.5, "shape": {"side": 2}}, "value"),
    bad("pick", "null for a required union", {"value": None, "shape": {"side": 2}}, "value"),
    bad("pick", "wrong type in one model of the union", {"value": 1, "shape": {"radius": "big"}}, "shape.radius"),
    bad("pick", "unknown key beside a model's own", {"value": 1, "shape": {"radius": 1, "colour": "red"}}, "shape.colour"),
    bad("pick", "an object matching neither model", {"value": 1, "shape": {}}, "shape"),
    # ---- annotate: extra="allow" / z.looseObject ------------------------------------------------
    ok("annotate", "extra keys kept", {"note": {"text": "hi", "mood": "happy", "score": 3, "tags": ["a", {"b": None}]}}),
    ok("annotate", "no extra keys", {"note": {"text": "hi"}}),
    bad("annotate", "wrong type of the declared field", {"note": {"text": 5, "mood": "happy"}}, "note.text"),
    bad("annotate", "missing declared field", {"note": {"mood": "happy"}}, "note.text"),
    bad("annotate", "unknown argument beside the open model", {"note": {"text": "hi"}, "mood": "happy"}, "mood"),
    # ---- grow: a recursive model ($ref to itself) ----------------------------------------------
    ok("grow", "a leaf", {"tree": {"name": "alone"}}),
    ok("grow", "a tree three deep", {"tree": TREE}),
    bad("grow", "wrong type three deep",
        tree_with(lambda t: t["children"][0]["children"][1].update(name=7)), "tree.children.0.children.1.name"),
    bad("grow", "unknown key in a node behind $ref",
        tree_with(lambda t: t["children"][1].update(colour="red")), "tree.children.1.colour"),
    bad("grow", "unknown key three deep",
        tree_with(lambda t: t["children"][0]["children"][0].update(size=1)), "tree.children.0.children.0.size"),
    bad("grow", "missing name in a child", tree_with(lambda t: t["children"].append({"children": []})), "tree.children.2.name"),
    bad("grow", "a string for the children", tree_with(lambda t: t.update(children="a, b")), "tree.children"),
    # ---- contact: EmailStr, datetime, UUID (format problems in their own group) -----------------
    ok("contact", "email, date-time and uuid", CONTACT),
    ok("contact", "fractional seconds and a cc list",
       {**CONTACT, "when": "2026-01-02T03:04:05.250Z", "cc": ["bob@example.org", "eve@example.net"]}),
    # pydantic takes a date-time without an offset, which RFC 3339 (and so JSON Schema's
    # `date-time`) does not: why a mount leaves formats to its upstream by default.
    ok("contact", "a date-time without an offset", {**CONTACT, "when": "2026-01-02T03:04:05"}, ("py",)),
    bad("contact", "a number for the date-time", {**CONTACT, "when": 1767322800}, "when"),
    bad("contact", "missing uuid", but(CONTACT, id=DROP), "id"),
    bad("contact", "unknown argument", {**CONTACT, "bcc": ["x@example.com"]}, "bcc"),
    bad("contact", "bad email", {**CONTACT, "email": "ada.example.com"}, "email", "format"),
    bad("contact", "bad email in a list", {**CONTACT, "cc": ["bob@example.org", "eve@"]}, "cc.1", "format"),
    bad("contact", "bad uuid", {**CONTACT, "id": "3f2504e0-4f89-41d3-9a0c"}, "id", "format"),
    bad("contact", "bad date-time", {**CONTACT, "when": "next tuesday"}, "when", "format"),
    bad("contact", "impossible date", {**CONTACT, "when": "2026-13-45T03:04:05Z"}, "when", "format"),
    # ---- store: dict[str, Any] / z.record --------------------------------------------------------
    ok("store", "arbitrary keys and values", {"data": {"any key": 1, "x.y": [1, {"z": None}], "deep": {"er": {"est": True}}}}),
    ok("store", "keys that look like schema words",
       {"data": {"type": "string", "properties": {}, "$ref": "#", "required": []}, "counts": {"additionalProperties": 1}}),
    ok("store", "an integer map with arbitrary keys", {"data": {}, "counts": {"apples": 3, "pears": 0, "über": -2}}),
    bad("store", "wrong type under a map key", {"data": {}, "counts": {"apples": 3, "pears": "three"}}, "counts.pears"),
    bad("store", "a fraction in an integer map", {"data": {}, "counts": {"apples": 1.5}}, "counts.apples"),
    bad("store", "a list for the map", {"data": [1, 2]}, "data"),
    bad("store", "unknown argument", {"data": {}, "extra": {}}, "extra"),
    # ---- ping: no parameters --------------------------------------------------------------------
    ok("ping", "no arguments", {}),
    bad("ping", "an argument it does not take", {"verbose": True}, "verbose"),
    # ---- raw: the root schema is exactly {"type": "object"} ---------------------------------------
    ok("raw", "no arguments", {}),
    ok("raw", "arbitrary keys", {"anything": 1, "nested": {"deep": [1, "two", None]}, "type": "array"}),
]


def selected(only: str | None) -> list[tuple[str, Case]]:
    """(server, case) for every case on each server, or those whose "server.tool/name" contains `only`."""
    pairs = [(server, case) for case in CASES for server in SERVERS if server in case.servers]
    strict = [c for c in CASES if c.group == "format" or (c.tool == "contact" and c.correct and "ts" in c.servers)]
    pairs += [(STRICT, case) for case in strict]
    return [(s, c) for s, c in pairs if not only or only in f"{s}.{c.tool}/{c.name}"]
