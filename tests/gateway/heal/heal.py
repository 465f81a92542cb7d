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

The last lines are `direct: H/N (P%)` and `gateway: H/N (P%)`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import sys
import tempfile
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, Callable

from mcp import ClientSession, StdioServerParameters, stdio_client

CALL_TIMEOUT_S = 60
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


def corpus() -> list[Scenario]:
    out: list[Scenario] = []

    def add(*a, **k):
        out.append(Scenario(*a, **k))

    ada = [("Ada", "person", ["writes programs"])]
    two = [("Ada", "person", ["writes programs"]), ("Grace", "person", ["wrote COBOL"])]
    has = lambda name: lambda s, t: s.entity(name) is not None
    gone = lambda name: lambda s, t: s.entity(name) is None
    observed = lambda name, text: lambda s, t: text in ((s.entity(name) or {}).get("observations") or [])

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
        "searchNodes", {"query": "COBOL"}, lambda s, t: "Grace" in t, entities=two, qualify=False)
    add("mem_find", "tool_name", "memory", "find what I know about COBOL", {"query": "COBOL"},
        "find_nodes", {"query": "COBOL"}, lambda s, t: "Grace" in t, entities=two)
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
        "search_nodes", {"qeury": "COBOL"}, lambda s, t: "Grace" in t, entities=two)
    add("mem_key_words", "field_name", "memory", "find what I know about COBOL", {"query": "COBOL"},
        "search_nodes", {"search_query": "COBOL"}, lambda s, t: "Grace" in t, entities=two)
    add("mem_nested_key", "field_name", "memory", "remember Alan, a person", {"type": "person"},
        "create_entities", {"entities": [{"name": "Alan", "entity_type": "person", "observations": []}]}, has("Alan"))
    add("mem_missing_type", "missing_field", "memory", "remember Alan, a person", {"entityType": "person"},
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
    add("fs_dry_run", "ignored_key", "fs", "preview replacing two with 2 in notes.txt, change nothing", {"dryRun": True},
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
    add("fs_exclude", "ignored_key", "fs", "find txt files but not in old", {"excludePatterns": ["old"]},
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
    add("fs_one_letter", "runtime", "fs", "show notes.txt", {},
        "read_text_file", {"path": "{root}/note.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_wrong_case", "runtime", "fs", "show Notes.txt", {},
        "read_text_file", {"path": "{root}/Notes.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_wrong_dir", "runtime", "fs", "show report.md", {},
        "read_text_file", {"path": "{root}/report.md"}, lambda s, t: "quarter" in t,
        files={"docs/report.md": "the quarter was good\n"})
    add("fs_outside", "runtime", "fs", "show notes.txt", {},
        "read_text_file", {"path": "/notes.txt"}, lambda s, t: "three" in t, files=notes)
    add("fs_edit_missing_text", "runtime", "fs", "replace 'Two' with 2 in notes.txt", {},
        "edit_file", {"path": "{root}/notes.txt", "edits": [{"oldText": "Two", "newText": "2"}]},
        lambda s, t: (s.text("notes.txt") or "").startswith("one\n2\n"), files=notes)

    # --- time ----------------------------------------------------------------------------------
    tz = lambda zone: lambda s, t: zone in t
    add("time_get", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_time", {"timezone": "Asia/Tokyo"}, tz("Asia/Tokyo"))
    add("time_current", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "current_time", {"timezone": "Asia/Tokyo"}, tz("Asia/Tokyo"))
    add("time_now", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "now", {"timezone": "Asia/Tokyo"}, tz("Asia/Tokyo"))
    add("time_convert", "tool_name", "time", "14:00 in Berlin is what in New York", {},
        "convert_timezone", {"source_timezone": "Europe/Berlin", "time": "14:00", "target_timezone": "America/New_York"},
        tz("America/New_York"))
    add("time_unqualified", "tool_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {"timezone": "Asia/Tokyo"}, tz("Asia/Tokyo"), qualify=False)
    add("time_key_tz", "field_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {"tz": "Asia/Tokyo"}, tz("Asia/Tokyo"))
    add("time_key_zone", "field_name", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {"time_zone": "Asia/Tokyo"}, tz("Asia/Tokyo"))
    add("time_key_camel", "field_name", "time", "14:00 in Berlin is what in New York", {},
        "convert_time", {"sourceTimezone": "Europe/Berlin", "time": "14:00", "targetTimezone": "America/New_York"},
        tz("America/New_York"))
    add("time_key_from_to", "field_name", "time", "14:00 in Berlin is what in New York", {},
        "convert_time", {"from_timezone": "Europe/Berlin", "time": "14:00", "to_timezone": "America/New_York"},
        tz("America/New_York"))
    add("time_missing", "missing_field", "time", "what time is it in Tokyo", {"timezone": "Asia/Tokyo"},
        "get_current_time", {}, tz("Asia/Tokyo"))
    add("time_number", "type", "time", "14:00 in Berlin is what in New York", {},
        "convert_time", {"source_timezone": "Europe/Berlin", "time": 14, "target_timezone": "America/New_York"},
        tz("America/New_York"))
    add("time_bad_zone", "runtime", "time", "what time is it in Berlin", {"timezone": "Europe/Berlin"},
        "get_current_time", {"timezone": "Europe/Berlinn"}, tz("Europe/Berlin"))
    add("time_bad_format", "runtime", "time", "2pm in Berlin is what in New York", {"time": "14:00"},
        "convert_time", {"source_timezone": "Europe/Berlin", "time": "2pm", "target_timezone": "America/New_York"},
        tz("America/New_York"))
    return out


# ---------------------------------------------------------------------------------------------
# Reading a text

QUOTED = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|`([^`\n]{1,80})`")
IDENT = re.compile(r"^[A-Za-z_][\w.\-/]*$")
WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*")


def quoted(text: str) -> list[str]:
    return [a or b or c for a, b, c in QUOTED.findall(text)]


def split(name: str) -> list[str]:
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [w for w in re.split(r"[^A-Za-z0-9]+", name.lower()) if w]


def sim(a: str, b: str) -> float:
    return SequenceMatcher(None, a.lower(), b.lower()).ratio()


def overlap(words: list[str], name: str) -> int:
    own = split(name)
    return sum(1 for w in words if any(w == o or (len(w) > 3 and o.startswith(w[:4])) for o in own))


def sentences(text: str) -> list[str]:
    """The lines of a text, markup's attribute values kept as quoted names, and a line that is
    a bare name (how pydantic names a field) joined to the line that says what is wrong with it."""
    text = re.sub(r"<[a-z_]+((?:\s+[a-z_]+=\"[^\"]*\")*)\s*>",
                  lambda m: " " + " ".join(f'"{v}"' for v in re.findall(r'="([^"]*)"', m.group(1))) + " ", text)
    text = re.sub(r"</[a-z_]+>", "\n", text)
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    out: list[str] = []
    for line in lines:
        if out and re.fullmatch(r"[A-Za-z_][\w.]*", out[-1]):
            out[-1] = f"'{out[-1]}' {line}"
        else:
            out.append(line)
    return out


def named(line: str) -> list[str]:
    """The names a line speaks of: quoted ones, and one after "at" or "for" at its end."""
    names = [q for q in quoted(line) if IDENT.match(q)]
    names += re.findall(r"\b(?:at|for field|field)\s+([A-Za-z_][\w.]*)\s*$", line)
    return names


# ---------------------------------------------------------------------------------------------
# The agent


@dataclass
class Call:
    tool: str
    args: dict
    lookup: bool = False


class Agent:
    """Repairs its call from the text of the answer, with no schema."""

    def __init__(self, sc: Scenario, names: dict):
        self.sc = sc
        self.intent = split(sc.say) + [w for k in sc.values for w in split(k)]
        self.lookups = 0
        self.pending: dict | None = None
        self.names = names  # what it may know of tool names: none but those texts gave it

    def next(self, call: Call, text: str) -> Call | None:
        if self.pending:
            return self.after_lookup(text)
        return self.repair(call, text)

    def repair(self, call: Call, text: str) -> Call | None:
        lines = sentences(text)
        low = text.lower()
        # the tool itself is unknown: a name the text offers, the one nearest to what it meant
        if re.search(r"unknown tool|tool .{0,40}not found|no tool|has no tool|no mounted namespace", low):
            return self.other_tool(call, text)
        args = json.loads(json.dumps(call.args))
        changed = False
        missing = [n for line in lines if re.search(r"missing|required|undefined", line, re.I)
                   for n in named(line)[:1] if n not in flat_keys(args)]
        # a key reported unknown: rename it to the name suggested, the intent choosing between several
        for line in lines:
            if not re.search(r"unrecognized|unknown|not allowed|additional propert|unexpected", line, re.I):
                continue
            names = quoted(line)
            reported = next((n for n in names if n in flat_keys(args)), None)
            for path, key in keys_of(args):
                if key != reported:
                    continue
                offered = [n for n in names if n != key and IDENT.match(n)]
                m = re.search(r"did you mean (.+?)\?", line, re.I)
                if m:
                    offered = [n for n in quoted(m.group(1))] or offered
                elif missing:
                    offered = missing  # the value sent under another name belongs where one is missing
                if not offered:
                    continue
                pick = self.choose(offered, key, line)
                set_key(args, path, key, pick)
                changed = True
        # a field reported missing: the value the intent gave for it
        for line in lines:
            if not re.search(r"missing|required|undefined", line, re.I):
                continue
            for name in named(line)[:1]:
                if name in flat_keys(args) or name.rsplit(".", 1)[-1] in flat_keys(args):
                    continue
                value = self.value_for(name)
                if value is not None:
                    add_key(args, name, value)
                    changed = True
        # a value of the wrong kind or outside the allowed ones
        for path, key in keys_of(args):
            value = get_at(args, path, key)
            for line in lines:
                if key not in named(line):
                    continue
                fixed = fix_value(value, line)
                if fixed is not None and fixed != value:
                    set_at(args, path, key, fixed)
                    changed = True
                    break
        if changed:
            return Call(call.tool, args)
        # a value not found: look it up with a tool the text names, then take the nearest found
        if re.search(r"not found|no such|enoent|does not exist|could not find|unknown|not exist", low):
            finder = self.finder(text, call.tool)
            if finder and self.lookups < LOOKUPS:
                bad = self.bad_value(call, text)
                if bad:
                    self.pending = {"call": call, "bad": bad}
                    self.lookups += 1
                    return Call(finder, self.finder_args(finder, bad), lookup=True)
        return None

    def choose(self, offered: list[str], key: str, line: str = "") -> str:
        """One of several names: the one whose name, or the words after it in the line, say
        most of what the user said."""
        if len(offered) == 1:
            return offered[0]

        def about(name: str) -> list[str]:
            m = re.search(re.escape(f"'{name}'") + r"\s*\(([^)]*)\)", line)
            return split(name) + (split(m.group(1)) if m else [])

        scored = [(sum(1 for w in self.intent if len(w) > 2 and w in about(o)), sim(key, o), o) for o in offered]
        return max(scored)[2] if scored else key

    def other_tool(self, call: Call, text: str) -> Call | None:
        m = re.search(r'Call "([\w.\-]+)" with "([\w\-]+)": "([\w.\-]+)"', text)
        if m:
            return Call(m.group(1), {m.group(2): m.group(3), **call.args})
        offered: list[str] = []
        for line in sentences(text):
            if re.search(r"did you mean", line, re.I):
                offered += [q for q in quoted(line) if IDENT.match(q)]
        if not offered:
            return None
        wanted = split(call.tool) + self.intent
        pick = max(offered, key=lambda o: (overlap(wanted, o.split(".")[-1]), sim(call.tool, o.split(".")[-1])))
        if pick == call.tool:
            return None
        return Call(pick, call.args)

    def value_for(self, name: str) -> Any:
        name = name.rsplit(".", 1)[-1]
        own = split(name)
        best = None
        for k, v in self.sc.values.items():
            score = overlap(own, k) + (2 if k == name else 0)
            if score and (best is None or score > best[0]):
                best = (score, v)
        return best[1] if best else None

    def finder(self, text: str, tool: str) -> str | None:
        names = [q for q in re.findall(r"<action>([^<]+)</action>", text)]
        m = re.search(r"with ([\w.\-, ]+?) \((?:it|they) only read", text)
        if m:
            names = [n.strip() for n in re.split(r",| or ", m.group(1)) if n.strip()] + names
        names = [n for n in names if n != tool]
        return names[0] if names else None

    def bad_value(self, call: Call, text: str) -> tuple | None:
        for path, key in keys_of(call.args):
            v = get_at(call.args, path, key)
            vs = v if isinstance(v, list) else [v]
            for item in vs:
                if isinstance(item, str) and item and (item in text or os.path.basename(item) in text):
                    return (path, key, item)
        return None

    def finder_args(self, finder: str, bad: tuple) -> dict:
        value = bad[2]
        if "/" in value:
            parent = os.path.dirname(value) or "/"
            if "search" in finder:
                return {"path": parent, "pattern": "*"}
            return {"path": parent}
        if "search" in finder:
            return {"query": value[:3]}
        return {}

    def after_lookup(self, text: str) -> Call | None:
        pending, self.pending = self.pending, None
        call, (path, key, value) = pending["call"], pending["bad"]
        base = os.path.basename(value) if "/" in value else value
        found = [t for t in re.findall(r"[\w][\w.\-]*", text) if t.lower() != base.lower() or t != base]
        scored = [(sim(base, t), t) for t in found if t != base]
        scored = [x for x in scored if x[0] >= 0.6]
        if not scored:
            return None
        pick = max(scored)[1]
        new = os.path.join(os.path.dirname(value), pick) if "/" in value else pick
        args = json.loads(json.dumps(call.args))
        current = get_at(args, path, key)
        set_at(args, path, key, [new if x == value else x for x in current] if isinstance(current, list) else new)
        return Call(call.tool, args)


def fix_value(value: Any, line: str) -> Any:
    low = line.lower()
    m = re.search(r"(?:one of|expected|options?:?)\s*(.+)", line, re.I)
    if m and isinstance(value, str):
        allowed = [q for q in quoted(m.group(1))]
        same = [a for a in allowed if a.lower() == value.lower()]
        if same:
            return same[0]
    if isinstance(value, str) and re.search(r"\bnumber\b|\binteger\b", low) and re.fullmatch(r"-?\d+(\.\d+)?", value):
        return int(value) if value.isdigit() else float(value)
    if isinstance(value, str) and re.search(r"\barray\b", low):
        return [value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and re.search(r"\bstring\b", low):
        return f"{int(value):02d}:00" if re.search(r"hh:mm", low) else str(value)
    if isinstance(value, str) and re.search(r"hh:mm", low):
        if re.fullmatch(r"\d{1,2}", value.strip()):
            return f"{int(value):02d}:00"
        m2 = re.fullmatch(r"(\d{1,2})\s*(am|pm)", value.strip(), re.I)
        if m2:
            hour = int(m2.group(1)) % 12 + (12 if m2.group(2).lower() == "pm" else 0)
            return f"{hour:02d}:00"
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
                config.write_text("".join(
                    f"[[mount]]\nnamespace = {json.dumps(NAMESPACES[name])}\ncommand = {json.dumps(cmd)}\n"
                    f"args = {json.dumps(args)}\nenv = {{ {', '.join(f'{k} = {json.dumps(v)}' for k, v in env.items())} }}\n\n"
                    for name, (cmd, args, env) in servers.items()))
                session = await open_session(stack, opts.gateway, ["--config", str(config)], {"RUST_LOG": "error"})
                await wait_listed(session, len(servers))
            else:
                cmd, args, env = servers[sc.server]
                session = await open_session(stack, cmd, args, env)
            prefix = f"{NAMESPACES[sc.server]}." if through and sc.qualify else ""
            current = Call(prefix + sc.tool, fill(sc.args, str(root)))
            agent = Agent(sc, {})
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
    for _ in range(600):
        tools = (await session.list_tools()).tools
        if len({t.name.split(".", 1)[0] for t in tools}) >= mounts:
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the gateway did not list the tools of every mount within 30 s")


async def amain(opts: argparse.Namespace) -> int:
    scenarios = corpus()
    if opts.only:
        scenarios = [s for s in scenarios if s.id in opts.only.split(",")]
    rows, record = [], []
    for sc in scenarios:
        direct = await run_one(sc, opts, through=False)
        gateway = await run_one(sc, opts, through=True)
        rows.append((sc, direct.healed, gateway.healed))
        record.append({"id": sc.id, "kind": sc.kind, "server": sc.server, "direct": direct.healed,
                       "gateway": gateway.healed, "direct_calls": direct.calls, "gateway_calls": gateway.calls})
        print(f"{sc.kind:14} {sc.id:22} direct {'healed' if direct.healed else 'FAILED':7} "
              f"gateway {'healed' if gateway.healed else 'FAILED'}", flush=True)
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gateway", required=True, help="the fusion-gateway executable")
    p.add_argument("--node", default="node", help="node, to run the npm servers")
    p.add_argument("--memory", required=True, help="server-memory's dist/index.js")
    p.add_argument("--filesystem", required=True, help="server-filesystem's dist/index.js")
    p.add_argument("--time", required=True, nargs="+", help="the mcp-server-time command")
    p.add_argument("--agent", choices=["smart", "blind"], default="smart")
    p.add_argument("--only", help="scenario ids, comma-separated")
    p.add_argument("--json", help="write every call and answer here")
    opts = p.parse_args()
    for path in (opts.gateway, opts.memory, opts.filesystem):
        if not Path(path).exists():
            p.error(f"no such file: {path}")
    return asyncio.run(amain(opts))


if __name__ == "__main__":
    sys.exit(main())
