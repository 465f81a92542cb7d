"""How run.py judges a refusal: its field lines read from the envelope, which refusals of a
valid instance follow a documented policy, which lines say nothing specific, and which lines
name a path or echo a value that is not what was sent. Pure functions, tested by
test_rules.py."""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'")
# "a value" standing alone: followed by the end, a punctuation mark, or a joining word.
A_VALUE = re.compile(r"\ba value(?=\s*(?:$|[.;,:)]|or\b|and\b))")
UNKNOWN_KEY = re.compile(r"Unrecognized key ('(?:[^'\\]|\\.)*')")
FORMAT = re.compile(r"Invalid \S+ format\.")
ECHO = re.compile(r"You sent: (.*?)\. Expected")
PLAIN = set(map(chr, range(0x20, 0x7F))) - set("'\"\\")
# What the gateway writes as an escape (mcp_fusion_wire::is_invisible), besides controls.
INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]")


@dataclass(frozen=True)
class Line:
    """One field line of a `<validation_error>`: where, and what it says."""

    path: str  # as the gateway writes it: keys and indices joined by dots, `(root)` for the root
    text: str

    def __str__(self) -> str:
        return f"{self.path}: {self.text}"


def field_lines(text: str) -> list[Line] | None:
    """The field lines of a `<validation_error>` envelope, or None when `text` is none. A field
    without a name is about the arguments as a whole, `(root)` (as crates/wire/src/parse.rs
    reads it)."""
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return None
    if root.tag != "validation_error":
        return None
    return [Line(field.get("name", "(root)"), field.text or "") for field in root.iter("field")]


def is_generic(text: str) -> bool:
    """Whether a line says nothing specific about what would be right: its `Expected …` part
    (after the last `Expected `, quoted values left out) has "a value" as a whole item (`a
    value.`, `one of: a value; a value.`, `a value that is not a value.`), or defers to the
    schema (`as the schema describes`). "a value" opening a description (`a value matching
    exactly one of them`, `a value that satisfies 'x-even': true`) is specific."""
    _, found, expected = text.rpartition("Expected ")
    if not found:
        return False
    expected = QUOTED.sub("", expected)
    return "as the schema describes" in expected or A_VALUE.search(expected) is not None


def shape(text: str) -> str:
    """A line with what was sent and every quoted value blanked, to count lines alike."""
    return QUOTED.sub("'…'", ECHO.sub("You sent: …. Expected", text))


def unquote(quoted: str) -> str:
    """The text of an echo `'…'`, its escapes undone (`\\'`, `\\\\`, `\\n`, `\\u{1b}` …)."""
    simple = {"n": "\n", "r": "\r", "t": "\t"}

    def undo(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape.startswith("u{"):
            return chr(int(escape[2:-1], 16))
        return simple.get(escape, escape)

    return re.sub(r"\\(u\{[0-9a-f]+\}|.)", undo, quoted[1:-1])


def named(schema: Any, key: str) -> bool:
    """Whether `key` is named anywhere in `schema`: a key of some `properties` object, or
    matched by some `patternProperties` regex (one Python cannot compile counts as a match)."""
    if isinstance(schema, list):
        return any(named(item, key) for item in schema)
    if not isinstance(schema, dict):
        return False
    properties, patterns = schema.get("properties"), schema.get("patternProperties")
    if isinstance(properties, dict) and key in properties:
        return True
    if isinstance(patterns, dict):
        for pattern in patterns:
            try:
                if re.search(pattern, key):
                    return True
            except re.error:
                return True
    return any(named(value, key) for value in schema.values())


def policy(lines: list[Line], schema: Any) -> str | None:
    """The documented policy a refusal of a valid instance follows, if any: "unknown-key" when
    every line refuses a key the schema names nowhere (the gateway closes open objects), or
    "format" when every line is about a string format (the gateway asserts formats)."""
    if not lines:
        return None
    keys = [UNKNOWN_KEY.match(line.text) for line in lines]
    if all(keys) and not any(named(schema, unquote(key.group(1))) for key in keys if key):
        return "unknown-key"
    if all(FORMAT.match(line.text) for line in lines):
        return "format"
    return None


def bare(key: str) -> str:
    """A key as the gateway writes it inside a path (mcp_fusion_wire's bare echo): `\\`, controls
    and invisible characters escaped, cut to 47 characters and `...` past 50."""
    out, written, cut_at = "", 0, 0
    for c in key:
        if c == "\\":
            piece = "\\\\"
        elif c in "\n\r\t":
            piece = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[c]
        elif unicodedata.category(c) == "Cc" or INVISIBLE.match(c):
            piece = f"\\u{{{ord(c):x}}}"
        else:
            piece = c
        if written + len(piece) > 50:
            return out[:cut_at] + "..."
        out += piece
        written += len(piece)
        if written <= 47:
            cut_at = len(out)
    return out


MISSING = object()


def resolve(arguments: Any, path: str) -> Any:
    """The value at a written path in the arguments, or MISSING. Keys may hold dots, so each
    way of reading the path is tried."""

    def walk(value: Any, rest: str) -> Iterator[Any]:
        if isinstance(value, dict):
            for key, inner in value.items():
                name = bare(key)
                if rest == name:
                    yield inner
                elif rest.startswith(name + "."):
                    yield from walk(inner, rest[len(name) + 1 :])
        elif isinstance(value, list):
            head, dot, tail = rest.partition(".")
            if head.isdigit() and int(head) < len(value):
                yield from walk(value[int(head)], tail) if dot else iter([value[int(head)]])

    return arguments if path == "(root)" else next(walk(arguments, path), MISSING)


def echo_agrees(echo: str, value: Any) -> bool:
    """Whether `You sent: {echo}` may stand for `value`: the whole echo for short scalars and
    arrays (numbers by value, so `1.0` may be written `1`, or by their kind, `a number`), only
    its kind for an object (compact JSON, which a scalar's echo is not); longer strings pass."""
    if isinstance(value, bool) or value is None:
        return echo == {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, int | float):
        # A number too wide to carry exactly is named by its kind: echoing the value the
        # server holds would show a rounded one as sent.
        if echo == "a number":
            return True
        if not re.fullmatch(r"-?\d+(\.\d+)?([eE][+-]?\d+)?", echo):
            return False
        if isinstance(value, int) and re.fullmatch(r"-?\d+", echo):
            return int(echo) == value
        try:
            return float(echo) == float(value)
        except OverflowError:
            return False
    if isinstance(value, str):
        return echo == f"'{value}'" if len(value) < 40 and set(value) <= PLAIN else True
    if isinstance(value, list):
        return echo == f"array({len(value)})"
    if isinstance(value, dict):
        return echo.startswith("{")
    return True


def wrong(line: Line, arguments: dict[str, Any]) -> str | None:
    """Why a line is wrong, or None: its path must be in the arguments (a missing field's
    parent, an object), and what it says was sent must agree with the value there."""
    echoed = ECHO.search(line.text)
    if line.text.startswith("Missing"):
        # The parent is the longest part of the path that is in the arguments, else the root.
        prefixes = [line.path[:at] for at, c in enumerate(line.path) if c == "."]
        found = (resolve(arguments, prefix) for prefix in reversed(prefixes))
        if not isinstance(next((value for value in found if value is not MISSING), arguments), dict):
            return "the missing field's parent is not an object in the arguments"
        if echoed and echoed.group(1) != "(missing)":
            return f"a missing field echoed as {echoed.group(1)}"
        return None
    value = resolve(arguments, line.path)
    if value is MISSING:
        return "the path is not in the arguments"
    # An `Invalid key` line is about the object at its path, and echoes the key it refuses.
    if echoed and not line.text.startswith("Invalid key") and not echo_agrees(echoed.group(1), value):
        return f"the echo is not the value sent there, {json.dumps(value)[:60]}"
    return None
