#!/usr/bin/env python3
"""heal-bench for third-party servers: does an error text let an agent repair its own call?

Three MCP servers from the registries, pinned by run.sh — `@modelcontextprotocol/server-memory`,
`@modelcontextprotocol/server-filesystem` (TypeScript SDK, zod) and `mcp-server-time` (Python SDK,
pydantic) — each scenario run twice: the agent talking to the upstream itself ("direct"), and
through `fusion-gateway`, which mounts the three as `memory`, `fs` and `time` ("gateway").

A scenario is what the user asked for (an intent: words, and the values the user gave) and the
plausible first call a model makes that is wrong: a tool name in other words, a misspelt or
wrongly cased key, a key the tool ignores, a value the upstream refuses when it runs. The agent
sees only its intent, its own calls and the TEXT of each answer, never `tools/list`; its rules
are generic text heuristics (quoted names, "did you mean", words near "expected", names of
tools offered to find a value), not any framework's sentences. A scenario is healed when a call
does what the intent asked, judged afterwards by the harness from the state it left (the
memory file, the files on disk, the zone of the time told) — a call that "succeeds" with the
wrong effect is not healed. Up to 3 repairs and 4 look-ups.

    python heal.py --gateway PATH --node node --memory JS --filesystem JS --time CMD [--json F]
    python heal.py ... --agent blind      # the control: retries without reading, heals 0
    python heal.py ... --tool-search --direct-from earlier.json   # the direct side as recorded

Scenarios run two at a time (--jobs), each with its own directory and servers.

The last lines are `direct: H/N (P%)` and `gateway: H/N (P%)`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import sys
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Callable

from mcp import ClientSession, StdioServerParameters, stdio_client

CALL_TIMEOUT_S = 60  # per call, and to start a server: generous, for a busy machine
LIST_TIMEOUT_S = 120  # for every mount of the gateway to list its tools
REPAIRS = 3
LOOKUPS = 4
NAMESPACES = {"memory": "memory", "fs": "fs", "time": "time"}

# ---------------------------------------------------------------------------------------------
# Scenarios


@dataclass
class Scenario:
    id: str
    kind: str
    server: str  # memory | fs | time
    say: str  # the user's words
    values: dict  # the values the user gave, under the agent's own names
    tool: str  # the first call's tool, as the model names it (no namespace)
    args: dict  # the first call's arguments
    judge: Callable[["State", str], bool]  # (state after, last success text) -> done as asked
    files: dict = field(default_factory=dict)  # fs: relative path -> content, made before
    entities: list = field(default_factory=list)  # memory: (name, type, [observations]) made before
    qualify: bool = True  # through the gateway, the first call carries the namespace


@dataclass
class State:
    root: Path  # the filesystem server's directory
    memory: Path  # the memory server's file

    def graph(self) -> list[dict]:
        if not self.memory.exists():
            return []
        return [json.loads(line) for line in self.memory.read_text().splitlines() if line.strip()]

    def entity(self, name: str) -> dict | None:
        return next((e for e in self.graph() if e.get("type") == "entity" and e.get("name") == name), None)

    def relation(self, a: str, b: str, kind: str) -> bool:
        return any(e.get("type") == "relation" and (e.get("from"), e.get("to"), e.get("relationType")) == (a, b, kind)
                   for e in self.graph())

    def text(self, rel: str) -> str | None:
        p = self.root / rel
        return p.read_text() if p.is_file() else None


def told(text: str) -> dict:
    try:
        out = json.loads(text)
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def zone(name: str) -> Callable[[State, str], bool]:
    """The current time told, in that zone."""
    return lambda s, t: told(t).get("timezone") == name


def converted(source: str, hhmm: str, target: str) -> Callable[[State, str], bool]:
    """That time in that zone, told in the target zone."""
    def judge(s: State, t: str) -> bool:
        d = told(t)
        src, dst = d.get("source") or {}, d.get("target") or {}
        return (src.get("timezone") == source and f"T{hhmm}:" in (src.get("datetime") or "")
                and dst.get("timezone") == target)
    return judge


def corpus() -> list[Scenario]:
    out: list[Scenario] = []

    def add(*a, **k):
        out.append(Scenario(*a, **k))

    ada = [("Ada", "person", ["writes programs"])]
    two = [("Ada", "person", ["writes programs"]), ("Grace", "person", ["wrote COBOL"])]
    has = lambda name: lambda s, t: s.entity(name) is not None
    gone = lambda name: lambda s, t: s.entity(name) is None
    observed = lambda name, text: lambda s, t: text in ((s.entity(name) or {}).get("observations") or [])
    found = lambda name, other: lambda s, t: name in t and other not in t

    # --- memory: tool names in other words ---------------------------------------------------
    add("mem_add_entity", "tool_name", "memory", "remember Alan, a person", {"name": "Alan", "type": "person"},
        "add_entities", {"entities": [{"name": "Alan", "entityType": "person", "observations": []}]}, has("Alan"))
    add("mem_new_entity", "tool_name", "memory", "remember Alan, a person", {"name": "Alan"},
        "createEntities", {"entities": [{"name": "Alan", "entityType": "person", "observations": []}]}, has("Alan"))
    add("mem_remove", "tool_name", "memory", "forget Ada", {"name": "Ada"},
        "remove_entities", {"entityNames": ["Ada"]}, gone("Ada"), entities=ada)
    add("mem_delete_entity", "tool_name", "memory", "forget Ada", {"name": "Ada"},
        "delete_entity", {"entityNames": ["Ada"]}, gone("Ada"), entities=ada)
    add("mem_search", "tool_name", "memory", "find what I know about COBOL", {"query": "COBOL"},
        "searchNodes", {"query": "COBOL"}, found("Grace", "Ada"), entities=two, qualify=False)
    add("mem_find", "tool_name", "memory", "find what I know about COBOL", {"query": "COBOL"},
        "find_nodes", {"query": "COBOL"}, found("Grace", "Ada"), entities=two)
    add("mem_read", "tool_name", "memory", "show me the whole graph", {},
        "get_graph", {}, lambda s, t: "Ada" in t, entities=ada)
    add("mem_add_obs", "tool_name", "memory", "note that Ada likes tea", {"entity": "Ada", "content": "likes tea"},
        "add_observation", {"observations": [{"entityName": "Ada", "contents": ["likes tea"]}]},
        observed("Ada", "likes tea"), entities=ada)
    add("mem_link", "tool_name", "memory", "Ada knows Grace", {"from": "Ada", "to": "Grace"},
        "add_relations", {"relations": [{"from": "Ada", "to": "Grace", "relationType": "knows"}]},
        lambda s, t: s.relation("Ada", "Grace", "knows"), entities=two)
    add("mem_open", "tool_name", "memory", "open Ada's node", {"name": "Ada"},
        "get_nodes", {"names": ["Ada"]}, lambda s, t: "writes programs" in t, entities=ada)
    # --- memory: arguments --------------------------------------------------------------------
    add("mem_key_case", "field_name", "memory", "forget Ada", {"names": ["Ada"]},
        "delete_entities", {"entity_names": ["Ada"]}, gone("Ada"), entities=ada)
    add("mem_key_other", "field_name", "memory", "forget Ada", {"names": ["Ada"]},
        "delete_entities", {"names": ["Ada"]}, gone("Ada"), entities=ada)
    add("mem_key_typo", "field_name", "memory", "find what I know about COBOL", {"query": "COBOL"},
        "search_nodes", {"qeury": "COBOL"}, found("Grace", "Ada"), entities=two)
    add("mem_key_words", "field_name", "memory", "find what I know about COBOL", {"query": "COBOL"},
        "search_nodes", {"search_query": "COBOL"}, found("Grace", "Ada"), entities=two)
    add("mem_nested_key", "field_name", "memory", "remember Alan, a person", {"type": "person"},
        "create_entities", {"entities": [{"name": "Alan", "entity_type": "person", "observations": []}]}, has("Alan"))
    add("mem_missing_type", "missing_field", "memory", "remember Alan, a person", {"type": "person"},
        "create_entities", {"entities": [{"name": "Alan", "observations": []}]}, has("Alan"))
    add("mem_string_list", "type", "memory", "forget Ada", {"names": ["Ada"]},
        "delete_entities", {"entityNames": "Ada"}, gone("Ada"), entities=ada)
    add("mem_missing", "missing_field", "memory", "open Ada's node", {"names": ["Ada"]},
        "open_nodes", {}, lambda s, t: "writes programs" in t, entities=ada)
    add("mem_wrong_case", "runtime", "memory", "note that Ada likes tea", {"content": "likes tea"},
        "add_observations", {"observations": [{"entityName": "ada", "contents": ["likes tea"]}]},
        observed("Ada", "likes tea"), entities=ada)
    add("mem_unknown_entity", "runtime", "memory", "note that Grace wrote COBOL in 1959", {"content": "1959"},
        "add_observations", {"observations": [{"entityName": "Grace Hopper", "contents": ["1959"]}]},
        observed("Grace", "1959"), entities=two)

    # --- filesystem: tool names ---------------------------------------------------------------
    notes = {"notes.txt": "one\ntwo\nthree\nfour\nfive\n"}
    same = lambda rel, text: lambda s, t: s.text(rel) == text
    isdir = lambda rel: lambda s, t: (s.root / rel).is_dir()
    add("fs_mkdir", "tool_name", "fs", "make a folder called drafts", {"path": "drafts"},
        "mkdir", {"path": "{root}/drafts"}, isdir("drafts"))
    add("fs_make_dir", "tool_name", "fs", "make a folder called drafts", {"path": "drafts"},
        "make_directory", {"path": "{root}/drafts"}, isdir("drafts"))
    add("fs_move", "tool_name", "fs", "rename notes.txt to old.txt", {},
        "move", {"source": "{root}/notes.txt", "destination": "{root}/old.txt"},
        lambda s, t: s.text("old.txt") is not None and s.text("notes.txt") is None, files=notes)
    add("fs_rename", "tool_name", "fs", "rename notes.txt to old.txt", {},
        "rename_file", {"source": "{root}/notes.txt", "destination": "{root}/old.txt"},
        lambda s, t: s.text("old.txt") is not None and s.text("notes.txt") is None, files=notes)
    add("fs_find", "tool_name", "fs", "find the txt files", {"pattern": "*.txt"},
        "find_files", {"path": "{root}", "pattern": "*.txt"}, lambda s, t: "notes.txt" in t, files=notes)
    add("fs_ls", "tool_name", "fs", "list the folder", {"path": "."},
        "ls", {"path": "{root}"}, lambda s, t: "notes.txt" in t, files=notes)
    add("fs_list_files", "tool_name", "fs", "list the folder", {"path": "."},
        "list_files", {"path": "{root}"}, lambda s, t: "notes.txt" in t, files=notes)
    add("fs_cat", "tool_name", "fs", "show notes.txt", {},
        "cat", {"path": "{root}/notes.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_get_file", "tool_name", "fs", "show notes.txt", {},
        "get_file", {"path": "{root}/notes.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_save", "tool_name", "fs", "save 'hello' to hello.txt", {"content": "hello"},
        "save_file", {"path": "{root}/hello.txt", "content": "hello"}, same("hello.txt", "hello"))
    add("fs_create_file", "tool_name", "fs", "save 'hello' to hello.txt", {"content": "hello"},
        "create_file", {"path": "{root}/hello.txt", "content": "hello"}, same("hello.txt", "hello"))
    add("fs_stat", "tool_name", "fs", "how big is notes.txt", {},
        "stat", {"path": "{root}/notes.txt"}, lambda s, t: "size" in t.lower(), files=notes)
    add("fs_tree", "tool_name", "fs", "show the folder as a tree", {},
        "tree", {"path": "{root}"}, lambda s, t: "notes.txt" in t, files=notes)
    add("fs_unqualified", "tool_name", "fs", "show notes.txt", {},
        "read_text_file", {"path": "{root}/notes.txt"}, lambda s, t: "three" in t, files=notes, qualify=False)
    # --- filesystem: arguments ----------------------------------------------------------------
    add("fs_dry_run", "ignored_key", "fs", "preview replacing two with 2 in notes.txt, change nothing", {"preview": True},
        "edit_file", {"path": "{root}/notes.txt", "edits": [{"oldText": "two", "newText": "2"}], "dry_run": True},
        lambda s, t: s.text("notes.txt") == notes["notes.txt"] and "2" in t, files=notes)
    add("fs_lines", "ignored_key", "fs", "show the first 2 lines of notes.txt", {"first": 2},
        "read_text_file", {"path": "{root}/notes.txt", "lines": 2},
        lambda s, t: "two" in t and "three" not in t, files=notes)
    add("fs_limit", "ignored_key", "fs", "show the last 2 lines of notes.txt", {"last": 2},
        "read_text_file", {"path": "{root}/notes.txt", "last_lines": 2},
        lambda s, t: "five" in t and "one" not in t, files=notes)
    add("fs_sort", "ignored_key", "fs", "list the folder by size", {"size": "size"},
        "list_directory_with_sizes", {"path": "{root}", "sort": "size"},
        lambda s, t: -1 < t.find("zbig.txt") < t.find("notes.txt"), files={**notes, "zbig.txt": "x" * 500})
    add("fs_exclude", "ignored_key", "fs", "find txt files but not in old", {"exclude": ["old"]},
        "search_files", {"path": "{root}", "pattern": "**/*.txt", "exclude": ["old"]},
        lambda s, t: "notes.txt" in t and "old/" not in t, files={**notes, "old/a.txt": "x"})
    add("fs_key_typo", "field_name", "fs", "save 'hello' to hello.txt", {"content": "hello"},
        "write_file", {"path": "{root}/hello.txt", "contnet": "hello"}, same("hello.txt", "hello"))
    add("fs_key_words", "field_name", "fs", "save 'hello' to hello.txt", {"content": "hello"},
        "write_file", {"path": "{root}/hello.txt", "text": "hello"}, same("hello.txt", "hello"))
    add("fs_key_from_to", "field_name", "fs", "rename notes.txt to old.txt", {},
        "move_file", {"from": "{root}/notes.txt", "to": "{root}/old.txt"},
        lambda s, t: s.text("old.txt") is not None, files=notes)
    add("fs_key_case", "field_name", "fs", "preview replacing two with 2 in notes.txt, change nothing", {},
        "edit_file", {"path": "{root}/notes.txt", "edits": [{"old_text": "two", "new_text": "2"}], "dryRun": True},
        lambda s, t: s.text("notes.txt") == notes["notes.txt"] and "2" in t, files=notes)
    add("fs_enum_case", "enum_value", "fs", "list the folder by size", {},
        "list_directory_with_sizes", {"path": "{root}", "sortBy": "SIZE"},
        lambda s, t: -1 < t.find("zbig.txt") < t.find("notes.txt"), files={**notes, "zbig.txt": "x" * 500})
    add("fs_number_string", "type", "fs", "show the first 2 lines of notes.txt", {},
        "read_text_file", {"path": "{root}/notes.txt", "head": "2"},
        lambda s, t: "two" in t and "three" not in t, files=notes)
    add("fs_paths_string", "type", "fs", "show notes.txt and todo.txt", {},
        "read_multiple_files", {"paths": "{root}/notes.txt"},
        lambda s, t: "three" in t, files=notes)
    add("fs_missing_content", "missing_field", "fs", "save 'hello' to hello.txt", {"content": "hello"},
        "write_file", {"path": "{root}/hello.txt"}, same("hello.txt", "hello"))
    add("fs_missing_pattern", "missing_field", "fs", "find the txt files", {"pattern": "*.txt"},
        "search_files", {"path": "{root}"}, lambda s, t: "notes.txt" in t, files=notes)
    add("fs_one_letter", "runtime", "fs", "show my notes file", {},
        "read_text_file", {"path": "{root}/note.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_wrong_case", "runtime", "fs", "show the Notes file", {},
        "read_text_file", {"path": "{root}/Notes.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_wrong_dir", "runtime", "fs", "show the report", {},
        "read_text_file", {"path": "{root}/report.md"}, lambda s, t: "quarter" in t,
        files={"docs/report.md": "the quarter was good\n"})
    add("fs_outside", "runtime", "fs", "show notes.txt", {},
        "read_text_file", {"path": "/notes.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_edit_missing_text", "runtime", "fs", "replace 'Two' with 2 in notes.txt", {},
        "edit_file", {"path": "{root}/notes.txt", "edits": [{"oldText": "Two", "newText": "2"}]},
        lambda s, t: (s.text("notes.txt") or "").startswith("one\n2\n"), files=notes)

    # --- time ----------------------------------------------------------------------------------
    add("time_get", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_time", {"timezone": "Asia/Tokyo"}, zone("Asia/Tokyo"))
    add("time_current", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "current_time", {"timezone": "Asia/Tokyo"}, zone("Asia/Tokyo"))
    add("time_now", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "now", {"timezone": "Asia/Tokyo"}, zone("Asia/Tokyo"))
    add("time_convert", "tool_name", "time", "14:00 in Berlin is what in New York", {},
        "convert_timezone", {"source_timezone": "Europe/Berlin", "time": "14:00", "target_timezone": "America/New_York"},
        converted("Europe/Berlin", "14:00", "America/New_York"))
    add("time_unqualified", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {"timezone": "Asia/Tokyo"}, zone("Asia/Tokyo"), qualify=False)
    add("time_key_tz", "field_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {"tz": "Asia/Tokyo"}, zone("Asia/Tokyo"))
    add("time_key_zone", "field_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {"time_zone": "Asia/Tokyo"}, zone("Asia/Tokyo"))
    add("time_key_camel", "field_name", "time", "14:00 in Berlin is what in New York", {},
        "convert_time", {"sourceTimezone": "Europe/Berlin", "time": "14:00", "targetTimezone": "America/New_York"},
        converted("Europe/Berlin", "14:00", "America/New_York"))
    add("time_key_from_to", "field_name", "time", "14:00 in Berlin is what in New York", {},
        "convert_time", {"from_timezone": "Europe/Berlin", "time": "14:00", "to_timezone": "America/New_York"},
        converted("Europe/Berlin", "14:00", "America/New_York"))
    add("time_missing", "missing_field", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {}, zone("Asia/Tokyo"))
    add("time_number", "type", "time", "14:00 in Berlin is what in New York", {},
        "convert_time", {"source_timezone": "Europe/Berlin", "time": 14, "target_timezone": "America/New_York"},
        converted("Europe/Berlin", "14:00", "America/New_York"))
    add("time_bad_zone", "runtime", "time", "what time is it in Berlin", {"timezone": "Europe/Berlin"},
        "get_current_time", {"timezone": "Europe/Berlinn"}, zone("Europe/Berlin"))
    add("time_bad_format", "runtime", "time", "2pm in Berlin is what in New York", {"time": "14:00"},
        "convert_time", {"source_timezone": "Europe/Berlin", "time": "2pm", "target_timezone": "America/New_York"},
        converted("Europe/Berlin", "14:00", "America/New_York"))
    return out


# ---------------------------------------------------------------------------------------------
# Reading a text

QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|`([^`\n]{1,80})`")
IDENT = re.compile(r"^[A-Za-z_][\w.\-/]*$")
# A name that looks like a tool's: words joined by `_` or `.` (`search_files`, `memory.open_nodes`)
TOOLISH = re.compile(r"(?<![\w/.-])[A-Za-z][A-Za-z0-9]*(?:[._][A-Za-z0-9]+)+(?![\w/-])")
# The verbs of a tool that only reads: the ones it may call on its own to look a value up
READS = {"read", "list", "search", "get", "find", "open", "show", "tree", "query", "lookup", "info", "stat"}
UNKNOWN_TOOL = re.compile(r"unknown tool|\btool\b.{0,60}\b(?:not found|does not exist)|no (?:such )?tool|has no tool",
                          re.I)
REJECTED = re.compile(r"not found|no such|enoent|does not exist|could not find|unknown|not exist|no .{0,30} found|"
                      r"invalid|not allowed|denied|outside", re.I)


def quoted(text: str) -> list[str]:
    return [a or b or c for a, b, c in QUOTED.findall(text)]


def split(name: str) -> list[str]:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", name.lower()) if w]


def norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def sim(a: str, b: str) -> float:
    return SequenceMatcher(None, a.lower(), b.lower()).ratio()


def overlap(words: list[str], name: str) -> int:
    own = split(name)
    return sum(1 for w in words if any(w == o or (len(w) > 3 and o.startswith(w[:4])) for o in own))


def leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def sentences(text: str) -> list[str]:
    """The lines of a text: markup's attribute values kept as quoted names, `a[0].b` paths
    written `a.0.b`, and a line that is a bare name (how pydantic names a field) joined to the
    line that says what is wrong with it."""
    text = re.sub(r"<[a-z_]+((?:\s+[a-z_]+=\"[^\"]*\")*)\s*>",
                  lambda m: "\n" + " ".join(f'"{v}"' for v in re.findall(r'="([^"]*)"', m.group(1))) + " ", text)
    text = re.sub(r"</[a-z_]+>", "\n", text)
    text = re.sub(r"\[(\d+)\]", r".\1", text)
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    out: list[str] = []
    for line in lines:
        if out and re.fullmatch(r"[A-Za-z_][\w.]*", out[-1]) and not re.fullmatch(r"[A-Za-z_][\w.]*", line):
            out[-1] = f"'{out[-1]}' {line}"
        else:
            out.append(line)
    return out


def named(line: str) -> list[str]:
    """The names a line speaks of: quoted ones, and one after "at" or "field" at its end."""
    names = [q for q in quoted(line) if IDENT.match(q)]
    names += re.findall(r"\b(?:at|field)\s+([A-Za-z_][\w.]*)\s*$", line)
    return names


def toolish(text: str) -> list[str]:
    """Names in a text that look like tools' names, in the order they first appear."""
    seen: list[str] = []
    for name in TOOLISH.findall(text) + [q for q in quoted(text) if TOOLISH.fullmatch(q)]:
        if name not in seen and not re.fullmatch(r"[\d.]+|\w+\.(?:txt|md|json|js|py)", name):
            seen.append(name)
    return seen


def paths_in(text: str) -> list[str]:
    return re.findall(r"(?<![\w.<])(/[\w.\-/]+[\w])", text)


# ---------------------------------------------------------------------------------------------
# The agent


@dataclass
class Call:
    tool: str
    args: dict
    lookup: bool = False


class Agent:
    """Repairs its call from the text of the answer, with no schema: what it knows of the
    tools is its own first call and the names the answers give it."""

    def __init__(self, sc: Scenario):
        self.sc = sc
        self.intent = split(sc.say) + [w for k in sc.values for w in split(k)]
        self.lookups = 0
        self.pending: dict | None = None

    def next(self, call: Call, text: str) -> Call | None:
        if self.pending:
            return self.after_lookup(text)
        return self.repair(call, text)

    # -- the first reading of an answer -------------------------------------------------------

    def repair(self, call: Call, text: str) -> Call | None:
        lines = sentences(text)
        if UNKNOWN_TOOL.search(text):
            return self.other_tool(call, text, lines)
        args = json.loads(json.dumps(call.args))
        sent = flat_keys(args)
        changed = False
        missing = [n for line in lines if re.search(r"missing|required|undefined", line, re.I)
                   for n in named(line)[:1] if leaf(n) not in sent]
        # a key reported unknown: renamed to the name suggested, or to a field reported missing
        for line in lines:
            if not re.search(r"unrecognized|unknown|not allowed|additional propert|unexpected", line, re.I):
                continue
            names = quoted(line)
            reported = next((n for n in names if n in sent), None)
            values = {v for p, k in keys_of(args) for v in [get_at(args, p, k)] if isinstance(v, str)}
            for path, key in keys_of(args):
                if key != reported:
                    continue
                here = holder(args, path)
                offered = [n for n in names if n != key and IDENT.match(n) and n not in values and n not in here]
                m = re.search(r"did you mean (.+?)\?", line, re.I)
                if m:
                    offered = [n for n in quoted(m.group(1)) if n not in here] or offered
                elif missing:
                    offered = [leaf(n) for n in missing if leaf(n) not in here]
                if offered:
                    set_key(args, path, key, self.choose(offered, key, line))
                    changed = True
                elif re.search(r"\bremove\b|\bdelete\b|\bdrop\b|no fields|not allowed", line, re.I):
                    del here[key]  # a key the tool has no field for: left out
                    changed = True
                break
        # a field reported missing: a key sent under a name like it, else the value the intent gave
        for name in missing:
            if leaf(name) in flat_keys(args):
                continue
            alike = [(p, k) for p, k in keys_of(args) if k != leaf(name) and
                     (norm(k) == norm(leaf(name)) or sim(norm(k), norm(leaf(name))) >= 0.8)]
            if alike:
                set_key(args, alike[0][0], alike[0][1], leaf(name))
                changed = True
                continue
            value = self.value_for(name)
            if value is not None:
                add_key(args, name, value)
                changed = True
        # a value of the wrong kind, outside the allowed ones, or in another format
        for path, key in keys_of(args):
            value = get_at(args, path, key)
            for line in lines:
                if key not in [leaf(n) for n in named(line)]:
                    continue
                fixed = fix_value(value, line)
                if fixed is not None and fixed != value:
                    set_at(args, path, key, fixed)
                    changed = True
                    break
        if not changed:
            # a format the text asks for, with no field named: the one value it fits
            for line in lines:
                if any(leaf(n) in flat_keys(args) for n in named(line)):
                    continue
                fits = [(p, k, f) for p, k in keys_of(args)
                        for f in [fix_format(get_at(args, p, k), line)] if f is not None]
                if len(fits) == 1:
                    set_at(args, *fits[0])
                    changed = True
        if changed:
            return Call(call.tool, args)
        if not REJECTED.search(text):
            return None
        bad = self.bad_value(call, text)
        if bad is None:
            return None
        # a value the user gave, misspelt in the call: the user's spelling
        mended = self.from_intent(bad[2])
        if mended:
            return self.with_value(call, bad, mended)
        # a path refused where the answer names another directory: the same name there
        if bad[2].startswith("/") and re.search(r"denied|outside|not allowed|not in\b", text, re.I):
            for other in paths_in(text):
                if other != bad[2] and not other.startswith(bad[2]) and not bad[2].startswith(other + "/"):
                    return self.with_value(call, bad, os.path.join(other, os.path.basename(bad[2])))
        # a value not found: looked up with a tool the answer names that only reads
        self.pending = {"call": call, "bad": bad, "finders": [f for f in toolish(text) if self.reads(f, call)]}
        return self.lookup()

    def reads(self, name: str, call: Call) -> bool:
        if name == call.tool or leaf(name) == leaf(call.tool):
            return False
        words = split(leaf(name))
        return bool(words) and words[0] in READS and ("." in name) == ("." in call.tool)

    def choose(self, offered: list[str], key: str, line: str = "") -> str:
        """One of several names: the one whose name, or the words after it in the line, say
        most of what the user said; then the one spelt most like the key sent."""
        if len(offered) == 1:
            return offered[0]

        def about(name: str) -> list[str]:
            m = re.search(re.escape(f"'{name}'") + r"\s*\(([^)]*)\)", line)
            return split(name) + (split(m.group(1)) if m else [])

        scored = [(sum(1 for w in self.intent if len(w) > 2 and w in about(o)), sim(key, o), o) for o in offered]
        return max(scored)[2]

    def other_tool(self, call: Call, text: str, lines: list[str]) -> Call | None:
        """A tool name the answer offers: those after "did you mean" (or "try", "use") first,
        else any list of names in it; the one saying most of what was meant."""
        offered: list[str] = []
        for line in lines:
            if re.search(r"did you mean|\btry\b|\buse\b|similar", line, re.I):
                offered += [q for q in quoted(line) if IDENT.match(q) and q != call.tool]
        strict = not offered
        if strict:
            offered = [n for n in toolish(text) if n != call.tool and leaf(n) != leaf(call.tool)]
        if not offered:
            return None
        own = leaf(call.tool)
        wanted = split(own) + self.intent
        scored = [(overlap(wanted, leaf(o)), -i, o) for i, o in enumerate(offered)]
        best = max(scored)
        if strict and best[0] == 0:
            return None
        return Call(best[2], call.args)

    def value_for(self, name: str) -> Any:
        own = split(leaf(name))
        best = None
        for k, v in self.sc.values.items():
            score = overlap(own, k) + (2 if k == leaf(name) else 0)
            if score and (best is None or score > best[0]):
                best = (score, v)
        return best[1] if best else None

    def bad_value(self, call: Call, text: str) -> tuple | None:
        """The value of the call the answer quotes back (a path also by its file name)."""
        found = []
        for path, key in keys_of(call.args):
            v = get_at(call.args, path, key)
            for item in v if isinstance(v, list) else [v]:
                if isinstance(item, str) and len(item) > 1:
                    if item in text:
                        found.append((len(item), (path, key, item)))
                    elif "/" in item and os.path.basename(item) in text:
                        found.append((0, (path, key, item)))
        return max(found, key=lambda f: f[0])[1] if found else None

    def from_intent(self, value: str) -> str | None:
        """The value with a part misspelt of one the user gave, spelt the user's way."""
        given = [v for v in self.sc.values.values() if isinstance(v, str)]
        parts = re.split(r"([/_ \-])", value)
        for i, part in enumerate(parts):
            for v in given:
                for word in re.split(r"[/_ \-]", v):
                    if len(word) > 3 and part != word and sim(part, word) >= 0.8:
                        parts[i] = word
        out = "".join(parts)
        return out if out != value else None

    def with_value(self, call: Call, bad: tuple, new: Any) -> Call:
        path, key, value = bad
        args = json.loads(json.dumps(call.args))
        current = get_at(args, path, key)
        set_at(args, path, key, [new if x == value else x for x in current] if isinstance(current, list) else new)
        return Call(call.tool, args)

    # -- looking a value up ---------------------------------------------------------------------

    def lookup(self) -> Call | None:
        pending = self.pending
        while pending and pending["finders"] and self.lookups < LOOKUPS:
            finder = pending["finders"].pop(0)
            args = self.finder_args(finder, pending["bad"][2], pending["call"])
            if args is None:
                continue
            self.lookups += 1
            return Call(finder, args, lookup=True)
        self.pending = None
        return None

    def finder_args(self, finder: str, bad: str, call: Call) -> dict | None:
        """Arguments for a look-up, from the call that failed: the folder of a path to list or
        search everything under, the file it named to read, the first word of a name to search."""
        words = split(leaf(finder))
        where = next((v for p, k in keys_of(call.args) for v in [get_at(call.args, p, k)]
                      if isinstance(v, str) and v.startswith("/")), None)
        if bad.startswith("/"):
            folder = os.path.dirname(bad) or "/"
            if {"search", "find"} & set(words):
                return {"path": folder, "pattern": "**/*"}
            if {"list", "tree"} & set(words):
                return {"path": folder}
            return None
        if where and {"read", "get", "open", "show"} & set(words) and "info" not in words:
            return {"path": where}
        if {"search", "find", "query"} & set(words):
            return {"query": bad.split()[0]}
        if {"read", "list"} & set(words):
            return {}
        return None

    def after_lookup(self, text: str) -> Call | None:
        call, (path, key, value) = self.pending["call"], self.pending["bad"]
        best: tuple = (0.0, "")
        if value.startswith("/"):
            base = os.path.basename(value)
            for p in paths_in(text):
                score = sim(base, os.path.basename(p))
                if p != value and score > best[0]:
                    best = (score, p)
            for name in re.findall(r"[\w][\w.\-]*", text):  # a listing of bare names
                score = sim(base, name)
                if name != base and score > best[0]:
                    best = (score, os.path.join(os.path.dirname(value), name))
        else:
            words = [w.lower() for w in value.split()]
            for name in set(re.findall(r"[\w][\w.\-]*", text)) | set(quoted(text)):
                score = 0.9 if name.lower() in words else sim(value, name)
                if name != value and score > best[0]:
                    best = (score, name)
        if best[0] >= 0.6:
            self.pending = None
            return self.with_value(call, (path, key, value), best[1])
        return self.lookup()


def fix_value(value: Any, line: str) -> Any:
    low = line.lower()
    m = re.search(r"(?:one of|expected|options?:?)\s*(.+)", line, re.I)
    if m and isinstance(value, str):
        same = [a for a in quoted(m.group(1)) if a.lower() == value.lower()]
        if same:
            return same[0]
    if isinstance(value, str) and re.search(r"\bnumber\b|\binteger\b", low) and re.fullmatch(r"-?\d+(\.\d+)?", value):
        return int(value) if value.lstrip("-").isdigit() else float(value)
    if isinstance(value, str) and re.search(r"\barray\b|\blist\b", low):
        return [value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and re.search(r"\bstring\b", low):
        return fix_format(value, line) or str(value)
    return fix_format(value, line)


def fix_format(value: Any, line: str) -> Any:
    """A time written as the text asks (`HH:MM`)."""
    if not re.search(r"hh:mm", line, re.I) or isinstance(value, bool):
        return None
    v = str(value).strip() if isinstance(value, (str, int)) else ""
    if re.fullmatch(r"\d{1,2}", v):
        return f"{int(v):02d}:00"
    m = re.fullmatch(r"(\d{1,2})(?::(\d\d))?\s*(am|pm)", v, re.I)
    if m:
        hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "pm" else 0)
        return f"{hour:02d}:{m.group(2) or '00'}"
    return None


def keys_of(args: Any, path: tuple = ()) -> list[tuple]:
    out = []
    if isinstance(args, dict):
        for k, v in args.items():
            out.append((path, k))
            out += keys_of(v, path + (k,))
    elif isinstance(args, list):
        for i, v in enumerate(args):
            out += keys_of(v, path + (i,))
    return out


def flat_keys(args: Any) -> set:
    return {k for _, k in keys_of(args)}


def holder(args: Any, path: tuple) -> Any:
    for p in path:
        args = args[p]
    return args


def get_at(args, path, key):
    return holder(args, path)[key]


def set_at(args, path, key, value):
    holder(args, path)[key] = value


def set_key(args, path, key, new):
    h = holder(args, path)
    h[new] = h.pop(key)


def add_key(args: dict, name: str, value: Any) -> None:
    if "." in name:  # a path: `entities.0.entityType`
        *parents, last = name.split(".")
        target: Any = args
        try:
            for p in parents:
                target = target[int(p)] if isinstance(target, list) else target[p]
        except (KeyError, IndexError, ValueError, TypeError):
            return
        if isinstance(target, dict):
            target.setdefault(last, value)
        return
    add_plain(args, name, value)


def add_plain(args: dict, name: str, value: Any) -> None:
    # into the innermost object the call already has (an item of a list), else the top
    inner = [(p, k) for p, k in keys_of(args) if isinstance(get_at(args, p, k), list)
             and get_at(args, p, k) and isinstance(get_at(args, p, k)[0], dict)]
    if inner and name not in args:
        p, k = inner[0]
        for item in get_at(args, p, k):
            item.setdefault(name, value)
        return
    args[name] = value


# ---------------------------------------------------------------------------------------------
# Running


@dataclass
class Outcome:
    healed: bool
    calls: list


async def open_session(stack: AsyncExitStack, command: str, args: list[str], env: dict | None) -> ClientSession:
    params = StdioServerParameters(command=command, args=args, env={**os.environ, **(env or {})})
    errlog = open(os.devnull, "w")
    stack.callback(errlog.close)
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await asyncio.wait_for(session.initialize(), CALL_TIMEOUT_S)
    return session


def text_of(result: Any) -> str:
    parts = [getattr(c, "text", "") for c in result.content or []]
    return "\n".join(p for p in parts if p)


async def call(session: ClientSession, tool: str, args: dict) -> tuple[bool, str]:
    try:
        result = await asyncio.wait_for(session.call_tool(tool, args), CALL_TIMEOUT_S)
    except asyncio.TimeoutError:
        return False, "timed out"
    except Exception as e:  # a JSON-RPC error is an answer too: its text is what the agent reads
        return False, str(e)
    return not result.is_error, text_of(result)


def fill(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace("{root}", root)
    if isinstance(value, list):
        return [fill(v, root) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, root) for k, v in value.items()}
    return value


async def run_one(sc: Scenario, opts: argparse.Namespace, through: bool) -> Outcome:
    work = Path(tempfile.mkdtemp(prefix="heal-"))
    root, memory = (work / "files").resolve(), work / "memory.jsonl"
    root.mkdir()
    for rel, content in sc.files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(content)
    if sc.entities:
        memory.write_text("".join(json.dumps({"type": "entity", "name": n, "entityType": t, "observations": o}) + "\n"
                                  for n, t, o in sc.entities))
    state = State(root, memory)
    servers = {
        "memory": (opts.node, [opts.memory], {"MEMORY_FILE_PATH": str(memory)}),
        "fs": (opts.node, [opts.filesystem, str(root)], {}),
        "time": (opts.time[0], opts.time[1:] + ["--local-timezone", "UTC"], {}),
    }
    calls: list = []
    try:
        async with AsyncExitStack() as stack:
            if through:
                config = work / "gateway.toml"
                config.write_text(("tool_search = true\n\n" if opts.tool_search else "") + "".join(
                    f"[[mount]]\nnamespace = {json.dumps(NAMESPACES[name])}\ncommand = {json.dumps(cmd)}\n"
                    f"args = {json.dumps(args)}\nenv = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in env.items())} }}\n\n"
                    for name, (cmd, args, env) in servers.items()))
                if opts.tool_search:
                    # Nothing mounted is listed: the gateway answers once every mount settled.
                    flags = ["--config", str(config), "--wait-for-upstreams"]
                    session = await open_session(stack, opts.gateway, flags, {"RUST_LOG": "error"})
                else:
                    session = await open_session(stack, opts.gateway, ["--config", str(config)], {"RUST_LOG": "error"})
                    await wait_listed(session, len(servers))
            else:
                cmd, args, env = servers[sc.server]
                session = await open_session(stack, cmd, args, env)
            prefix = f"{NAMESPACES[sc.server]}." if through and sc.qualify else ""
            current = Call(prefix + sc.tool, fill(sc.args, str(root)))
            agent = Agent(sc)
            repairs = 0
            while True:
                ok, text = await call(session, current.tool, current.args)
                calls.append({"call": f"{current.tool} {json.dumps(current.args)}", "ok": ok, "text": text[:1500],
                              "lookup": current.lookup})
                if ok and not current.lookup:
                    return Outcome(sc.judge(state, text), calls)
                if opts.agent == "blind":
                    nxt = Call(current.tool, current.args) if repairs < REPAIRS else None
                else:
                    nxt = agent.next(current, text) if (repairs < REPAIRS or current.lookup) else None
                if nxt is None:
                    return Outcome(False, calls)
                if not nxt.lookup and not current.lookup:
                    repairs += 1
                current = nxt
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def wait_listed(session: ClientSession, mounts: int) -> None:
    """Waits until every mount lists its tools (a mount still connecting lists none)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LIST_TIMEOUT_S
    while loop.time() < deadline:
        tools = (await asyncio.wait_for(session.list_tools(), CALL_TIMEOUT_S)).tools
        if len({t.name.split(".", 1)[0] for t in tools}) >= mounts:
            return
        await asyncio.sleep(0.05)  # polled: a mount still starting lists nothing yet
    raise RuntimeError(f"the gateway did not list the tools of every mount within {LIST_TIMEOUT_S} s")


async def amain(opts: argparse.Namespace) -> int:
    # SIGTERM ends the run as Ctrl-C does: the servers of the scenarios running are stopped
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, asyncio.current_task().cancel)
    scenarios = corpus()
    if opts.only:
        scenarios = [s for s in scenarios if s.id in opts.only.split(",")]
    earlier = direct_outcomes(opts.direct_from, opts.agent, scenarios) if opts.direct_from else {}
    # Scenarios run side by side, each in its own directory with its own servers: most of a
    # scenario is servers starting, one core each.
    running = asyncio.Semaphore(opts.jobs)

    async def both(sc: Scenario) -> tuple[Outcome, Outcome]:
        async with running:
            direct = earlier.get(sc.id) or await run_one(sc, opts, through=False)
            gateway = await run_one(sc, opts, through=True)
        print(f"{sc.kind:14} {sc.id:22} direct {'healed' if direct.healed else 'FAILED':7} "
              f"gateway {'healed' if gateway.healed else 'FAILED'}", flush=True)
        return direct, gateway

    outcomes = await asyncio.gather(*(both(sc) for sc in scenarios))
    rows, record = [], []
    for sc, (direct, gateway) in zip(scenarios, outcomes):
        rows.append((sc, direct.healed, gateway.healed))
        record.append({"id": sc.id, "kind": sc.kind, "server": sc.server, "direct": direct.healed,
                       "gateway": gateway.healed, "direct_calls": direct.calls, "gateway_calls": gateway.calls})
    n = len(rows)
    d = sum(1 for _, a, _ in rows if a)
    g = sum(1 for _, _, b in rows if b)
    worse = [sc.id for sc, a, b in rows if a and not b]
    if opts.json:
        Path(opts.json).write_text(json.dumps({"agent": opts.agent, "direct": d, "gateway": g, "total": n,
                                               "worse": worse, "scenarios": record}, indent=1))
    print(f"worse through the gateway: {', '.join(worse) if worse else 'none'}")
    print(f"direct: {d}/{n} ({100 * d / max(n, 1):.1f}%)")
    print(f"gateway: {g}/{n} ({100 * g / max(n, 1):.1f}%)")
    return 0


def direct_outcomes(path: str, agent: str, scenarios: list[Scenario]) -> dict[str, Outcome]:
    """The direct outcomes of an earlier run's --json, for the same agent: the direct side
    involves no gateway, so a second run through the gateway (with other settings) reads them
    instead of talking to the upstreams again. Every scenario of this run must be there."""
    try:
        earlier = json.loads(Path(path).read_text())
        found = {s["id"]: Outcome(bool(s["direct"]), list(s["direct_calls"])) for s in earlier["scenarios"]}
        recorded_agent = earlier["agent"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SystemExit(f"heal.py: --direct-from {path}: not the --json of a heal.py run ({error!r})")
    if recorded_agent != agent:
        raise SystemExit(f"heal.py: --direct-from {path}: recorded with --agent {recorded_agent}, this run is --agent {agent}")
    missing = [sc.id for sc in scenarios if sc.id not in found]
    if missing:
        raise SystemExit(f"heal.py: --direct-from {path}: no direct outcome for {', '.join(missing)}")
    return {sc.id: found[sc.id] for sc in scenarios}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gateway", help="the fusion-gateway executable")
    p.add_argument("--node", default="node", help="node, to run the npm servers")
    p.add_argument("--memory", help="server-memory's dist/index.js")
    p.add_argument("--filesystem", help="server-filesystem's dist/index.js")
    p.add_argument("--time", nargs="+", help="the mcp-server-time command")
    p.add_argument("--agent", choices=["smart", "blind"], default="smart",
                   help="smart (default) reads each answer; blind retries the same call, the control")
    p.add_argument("--tool-search", action="store_true",
                   help="the gateway lists search_tools and get_tool_details instead of the mounted tools")
    p.add_argument("--only", help="scenario ids, comma-separated")
    p.add_argument("--jobs", type=int, default=2, help="scenarios run at once (default 2)")
    p.add_argument("--direct-from", metavar="JSON",
                   help="take the direct outcomes from an earlier run's --json instead of running them again")
    p.add_argument("--json", help="write every call and answer here")
    opts, unknown = p.parse_known_args()
    if unknown:
        p.error(f"unknown argument(s): {' '.join(unknown)} (see --help)")
    for flag in ("gateway", "memory", "filesystem", "time"):
        if not getattr(opts, flag):
            p.error(f"--{flag} is required")
    for path in (opts.gateway, opts.memory, opts.filesystem):
        if not Path(path).is_file():
            p.error(f"no such file: {path}")
    for program in (opts.node, opts.time[0]):
        if shutil.which(program) is None:
            p.error(f"not a program on PATH nor an executable file: {program}")
    if opts.only:
        known = {s.id for s in corpus()}
        unknown = [i for i in opts.only.split(",") if i not in known]
        if unknown:
            p.error(f"unknown scenario id(s): {', '.join(unknown)} (the ids are the second column of the table)")
    if not 1 <= opts.jobs <= 64:
        p.error(f"--jobs: expected 1 to 64 scenarios at once, found {opts.jobs}")
    if opts.json and not Path(opts.json).resolve().parent.is_dir():
        p.error(f"--json: no such directory: {Path(opts.json).resolve().parent}")
    try:
        return asyncio.run(amain(opts))
    except (asyncio.CancelledError, KeyboardInterrupt):
        print("heal.py: stopped; the servers it started are stopped too", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
