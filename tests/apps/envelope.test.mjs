// FusionApp.parseEnvelope (crates/fusion/src/apps/fusion-app.js) against the Rust parser
// (crates/wire/src/parse.rs), so the two cannot drift:
//
//   node --test tests/apps/envelope.test.mjs
//
// 1. Every envelope of the wire vectors (crates/wire/tests/vectors/wire-vectors.jsonl, the
//    golden file both implementations are held to) parses back to the fields its input gave,
//    read as crates/wire/tests/conformance.rs reads them; every escape vector unescapes back to
//    its input.
// 2. Every case of the parse vectors (crates/wire/tests/vectors/parse-vectors.jsonl, written and
//    checked by crates/wire/tests/parse_vectors.rs) reads to the fields the Rust parser reads,
//    a retry_after past 2^53 included.
// 3. The edge cases the Rust parser's unit tests pin (cut-off envelopes, bare messages, first
//    one wins, entities in attributes...), with the values those tests assert.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const ROOT = new URL("../../", import.meta.url);
const SCRIPT = readFileSync(new URL("crates/fusion/src/apps/fusion-app.js", ROOT), "utf8");
const VECTORS = readFileSync(new URL("crates/wire/tests/vectors/wire-vectors.jsonl", ROOT), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

const PARSE_VECTORS = readFileSync(new URL("crates/wire/tests/vectors/parse-vectors.jsonl", ROOT), "utf8")
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => JSON.parse(line));

// The script as a page runs it, with a bare object for `window` (nothing of the bridge runs
// before connect()).
const window = {};
new Function("window", SCRIPT)(window);
const { parse, parseEnvelope, unescape } = window.FusionApp;

test("the script can be inlined in a page's script element", () => {
  assert.doesNotMatch(SCRIPT, /<\/script|<!--/i, "it would end the script element early");
  assert.doesNotMatch(SCRIPT, /\/\*FUSION_APP_JS\*\//, "the marker would be replaced inside it");
  assert.doesNotMatch(SCRIPT, /[^\x00-\x7f]/, "ASCII only");
});

// The same counts conformance.rs holds the file to.
test("the vectors file holds the cases the Rust tests count", () => {
  assert.equal(VECTORS.length, 185);
  assert.equal(VECTORS.filter((c) => c.kind === "tool_error" || c.kind === "error_builder").length, 170);
});

// conformance.rs: a vector whose recorded input lost the `__proto__` detail its expected text
// shows; checked with that pair restored, and flagged once the vector is repaired.
const INPUT_LOST_PROTO_DETAIL = "tool_error/escape/details_proto_key";

// What the case's input says, read from its JSON alone (Fields::of_input in conformance.rs).
function fieldsOfInput(c) {
  const input = c.input;
  const f = {
    code: input.code, message: input.message, severity: "error", recovery: null,
    availableActions: [], details: [], retryAfter: null,
  };
  const apply = (method, args) => {
    switch (method) {
      case "suggest": f.recovery = args[0] === "" ? null : args[0]; break;
      case "actions": f.availableActions.push(...args); break;
      case "severity": f.severity = args[0]; break;
      case "warning": case "critical": f.severity = method; break;
      case "details":
        // A key set again keeps its place and takes the new value.
        for (const [key, value] of args[0]) {
          const at = f.details.find((d) => d[0] === key);
          if (at) at[1] = value;
          else f.details.push([key, value]);
        }
        break;
      // Zero seconds means no delay.
      case "retry_after": f.retryAfter = Number.isInteger(args[0]) && args[0] > 0 ? args[0] : null; break;
      default: throw new Error(`case ${c.id}: unknown method ${method}`);
    }
  };
  if (c.kind === "tool_error") {
    for (const [key, method] of [["suggestion", "suggest"], ["severity", "severity"], ["details", "details"], ["retry_after", "retry_after"]]) {
      if (input[key] !== undefined && input[key] !== null) apply(method, [input[key]]);
    }
    if (input.available_actions) apply("actions", input.available_actions);
  } else {
    for (const call of input.chain ?? []) apply(call.method, call.args ?? []);
  }
  return f;
}

function fieldsOfEnvelope(env) {
  return {
    code: env.code, message: env.message, severity: env.severity, recovery: env.recovery,
    availableActions: env.availableActions, details: env.details.map((d) => [d.key, d.value]),
    retryAfter: env.retryAfter,
  };
}

test("every expected envelope parses back to its input's fields", () => {
  const failures = [];
  let checked = 0;
  for (const c of VECTORS) {
    if (c.kind !== "tool_error" && c.kind !== "error_builder") continue;
    const text = c.expected.text;
    if (c.id === INPUT_LOST_PROTO_DETAIL) {
      assert.ok(text.includes('<detail key="__proto__">polluted</detail>'), `${c.id}: the vector changed`);
      assert.ok(!c.input.details.some((d) => d[0] === "__proto__"), `${c.id} was repaired: drop its special case`);
      c.input.details.unshift(["__proto__", "polluted"]);
    }
    checked++;
    const env = parse(text);
    const wanted = fieldsOfInput(c);
    const read = fieldsOfEnvelope(env);
    const problems = [];
    if (env.kind !== "tool_error") problems.push(`read as ${env.kind}`);
    if (env.isError !== c.expected.is_error) problems.push(`isError ${env.isError}, the vector says ${c.expected.is_error}`);
    try {
      assert.deepEqual(read, wanted);
    } catch {
      problems.push(`input  ${JSON.stringify(wanted)}\n  parsed ${JSON.stringify(read)}`);
    }
    // What a view gets: the envelope for an error, null for a warning; the same from a result.
    const fromText = parseEnvelope(text);
    const fromResult = parseEnvelope({ content: [{ type: "text", text }], isError: c.expected.is_error });
    if (c.expected.is_error ? fromText === null || fromResult === null : fromText !== null || fromResult !== null) {
      problems.push(`parseEnvelope gave ${JSON.stringify(fromText)} / ${JSON.stringify(fromResult)}`);
    } else if (c.expected.is_error) {
      try {
        assert.deepEqual(fromText, env);
        assert.deepEqual(fromResult, env);
      } catch {
        problems.push("parseEnvelope differs from parse");
      }
    }
    if (problems.length) failures.push(`case ${c.id}:\n  ${problems.join("\n  ")}`);
  }
  assert.equal(checked, 170);
  assert.equal(failures.length, 0, `${failures.length} of ${checked} vectors parse differently:\n${failures.join("\n")}`);
});

test("every escape vector unescapes back to its input", () => {
  const escapes = VECTORS.filter((c) => c.kind === "escape_text" || c.kind === "escape_attr");
  assert.equal(escapes.length, 15);
  for (const c of escapes) assert.equal(unescape(c.expected.text), c.input.text, c.id);
});

// The count parse_vectors.rs holds the file to.
const PARSE_CASES_IN_FILE = 263;

// retry_after is recorded as a string of digits: a JSON number past 2^53 would already be
// rounded here, before the parser under test is even run.
function exactSeconds(digits) {
  if (digits === null) return null;
  const n = BigInt(digits);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

const show = (v) => JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x));

test("every parse vector reads as the Rust parser reads it", () => {
  assert.equal(PARSE_VECTORS.length, PARSE_CASES_IN_FILE);
  const failures = [];
  for (const c of PARSE_VECTORS) {
    const e = c.expected;
    const wanted = {
      kind: e.kind, code: e.code, severity: e.severity, message: e.message, recovery: e.recovery,
      availableActions: e.available_actions, details: e.details, retryAfter: exactSeconds(e.retry_after), isError: e.is_error,
    };
    const env = parse(c.text);
    const read = {
      kind: env.kind, code: env.code, severity: env.severity, message: env.message, recovery: env.recovery,
      availableActions: env.availableActions, details: env.details.map((d) => [d.key, d.value]), retryAfter: env.retryAfter,
      isError: env.isError,
    };
    try {
      assert.deepEqual(read, wanted);
    } catch {
      failures.push(`case ${c.id}:\n  expected ${show(wanted)}\n  parsed   ${show(read)}`);
    }
  }
  assert.equal(failures.length, 0, `${failures.length} of ${PARSE_VECTORS.length} parse vectors read differently:\n${failures.join("\n")}`);
});

// ---- The Rust unit tests' cases (crates/wire/src/parse.rs and escape.rs), same values. ----

const base = {
  kind: "tool_error", code: "UNKNOWN", severity: "error", message: "", recovery: null,
  availableActions: [], details: [], retryAfter: null, action: null, fields: [],
  contractAwareness: null, isError: true,
};
const unknown = (message) => ({ ...base, kind: "text", message });

test("escape.rs: unescape inverts both escapers, keeps malformed references", () => {
  assert.equal(unescape("&lt;b&gt; &amp;amp; &#60;&#x3e; &bogus;"), "<b> &amp; <> &bogus;");
  for (const s of ["&", "&;", "&#;", "&#x;", "&#xZZ;", "&#0;", "&#xD800;", "&#1114112;", "&amp",
    "&#99999999999;", "&verylongname;", "&#x+1;", "&#-1;", "&constructor;", "&__proto__;"]) {
    assert.equal(unescape(s), s, JSON.stringify(s));
  }
  assert.equal(unescape("&#128640;&#x1F680;"), "\u{1F680}\u{1F680}");
  assert.equal(unescape("&#X41;&#x10FFFF;"), "A\u{10FFFF}");
  assert.equal(unescape("caf\u00e9 &amp; \u65e5\u672c"), "caf\u00e9 & \u65e5\u672c");
});

test("parse.rs: the TypeScript routing error (comma-separated actions, no severity)", () => {
  const env = parse('<tool_error code="UNKNOWN_ACTION">\n<message>Unknown action &quot;x&quot;</message>\n' +
    "<available_actions>list, create , </available_actions>\n" +
    "<recovery>Choose one of the available actions.</recovery>\n</tool_error>");
  assert.deepEqual(env, {
    ...base, code: "UNKNOWN_ACTION", message: 'Unknown action "x"',
    availableActions: ["list", "create"], recovery: "Choose one of the available actions.",
  });
});

test("parse.rs: the indented envelope of the seed", () => {
  const env = parse('<tool_error code="NOT_FOUND" severity="error">\n  <message>No invoice with that ID</message>\n  ' +
    "<recovery>List invoices first, then retry with a real ID</recovery>\n  <available_actions>\n    " +
    "<action>billing.list_invoices</action>\n  </available_actions>\n  <details>\n    " +
    '<detail key="requestedId">inv_2026_9999</detail>\n  </details>\n  <retry_after>30 seconds</retry_after>\n</tool_error>');
  assert.deepEqual(env, {
    ...base, code: "NOT_FOUND", message: "No invoice with that ID",
    recovery: "List invoices first, then retry with a real ID", availableActions: ["billing.list_invoices"],
    details: [{ key: "requestedId", value: "inv_2026_9999" }], retryAfter: 30,
  });
});

test("parse.rs: a missing or empty code is UNKNOWN; no message is the whole text", () => {
  for (const text of ['<tool_error>\n<message>m</message>\n</tool_error>', '<tool_error code=""><message>m</message></tool_error>']) {
    assert.deepEqual([parse(text).code, parse(text).message], ["UNKNOWN", "m"]);
  }
  const noMessage = '<tool_error code="X"></tool_error>';
  assert.equal(parse(noMessage).message, noMessage);
  for (const text of ["", "  \n "]) assert.deepEqual(parse(text), unknown("Unknown error"));
  // Rust's trim: U+FEFF is not white space, U+0085 is.
  assert.deepEqual(parse("\ufeff"), unknown("\ufeff"));
  assert.deepEqual(parse("\u0085\u3000"), unknown("Unknown error"));
});

test("parse.rs: blanks as the Rust scanner reads them", () => {
  // A root starts a line after spaces, tabs, CRs or a BOM.
  assert.deepEqual(parse('\ufeff<tool_error code="X"><message>m</message></tool_error>').kind, "tool_error");
  const v = parse('x\n \t\r\ufeff<validation_error action="a"/>');
  assert.deepEqual([v.kind, v.message], ["validation_error", "Invalid arguments for a."]);
  // Inside a tag only ASCII blanks other than the vertical tab separate attributes.
  const e = parse('<tool_error\fcode="X"\r\n\tseverity="warning"><message>m</message></tool_error>');
  assert.deepEqual([e.code, e.severity], ["X", "warning"]);
  for (const blank of ["\v", "\u00a0"]) {
    assert.deepEqual(parse(`<tool_error${blank}code="X"><message>m</message></tool_error>`), unknown("m"), JSON.stringify(blank));
  }
});

test("parse.rs: the contract-awareness block after a tool error", () => {
  const env = parse('<tool_error code="VALIDATION_ERROR">\n<message>bad</message>\n</tool_error>\n<contract_awareness>\n  ' +
    "<system_note>note</system_note>\n  <action>billing.get_invoice</action>\n  <contract_changes>\n    " +
    '<change severity="BREAKING" field="f">\n      <description>d</description>\n    </change>\n  ' +
    "</contract_changes>\n</contract_awareness>");
  assert.deepEqual(env.availableActions, []);
  assert.deepEqual(env.contractAwareness, {
    tool: "note", action: "billing.get_invoice",
    changes: [{ severity: "BREAKING", field: "f", description: "d", before: null, after: null }],
  });
});

test("parse.rs: a validation error's fields", () => {
  const env = parse('<validation_error action="billing.get_invoice">\n<field name="id">Bad &amp; wrong.</field>\n' +
    "<field>root problem.</field>\n<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>");
  assert.deepEqual(env, {
    ...base, kind: "validation_error", code: "VALIDATION_ERROR", message: "Invalid arguments for billing.get_invoice.",
    recovery: "Fix the fields above and call the tool again. Do not explain the error.", action: "billing.get_invoice",
    fields: [{ name: "id", text: "Bad & wrong." }, { name: "(root)", text: "root problem." }],
  });
});

test("parse.rs: an envelope after a data block; a warning is no failure", () => {
  const text = '{"id":"inv_1"}\n<tool_error code="DEPRECATED" severity="warning">\n<message>old</message>\n</tool_error>';
  const env = parse(text);
  assert.deepEqual([env.code, env.isError], ["DEPRECATED", false]);
  assert.equal(parseEnvelope(text), null);
  assert.equal(parseEnvelope({ content: [{ type: "text", text }] }), null);
});

test("parse.rs: broken roots fall back to text", () => {
  for (const text of ["<tool_error", '<tool_error code="x', "<tool_error code=x>", "<tool_errorz>", '<validation_error a="1" b>']) {
    assert.deepEqual(parse(text), unknown(text), text);
    assert.equal(parseEnvelope(text), null, text);
  }
});

test("parse.rs: a cut-off envelope keeps what it said", () => {
  const env = parse('<tool_error code="NOT_FOUND">\n<message>gone</message>\n<recovery>unfinish');
  assert.deepEqual([env.code, env.message, env.recovery], ["NOT_FOUND", "gone", null]);
});

test("parse.rs: a bare message outside an envelope is the message", () => {
  for (const [text, message] of [
    ["<message>Quota &amp; limits &lt;reached&gt;</message>", "Quota & limits <reached>"],
    ["Upstream failed:\n<message>gone</message>\nbye", "gone"],
    ["<error><message>nested</message></error>", "nested"],
    ["<message/><message>after the empty tag</message>", "after the empty tag"],
    ["<message>first</message><message>second</message>", "first"],
    ["<message></message>", ""],
    ["<tool_error code=x>\n<message>m</message>\n</tool_error>", "m"],
  ]) {
    assert.deepEqual(parse(text), unknown(message), text);
  }
  for (const text of ["<message>cut off", "<messages>x</messages>", "</message>", "<message x>m</message>"]) {
    assert.deepEqual(parse(text), unknown(text), text);
  }
  // A failed result that is not an envelope still renders, as UNKNOWN.
  assert.deepEqual(parseEnvelope({ content: [{ type: "text", text: "Something broke" }], isError: true }), unknown("Something broke"));
});

test("parse.rs: repeated single-valued elements, the first one wins", () => {
  const text = '<tool_error code="X" severity="warning" code="Y" severity="error">\n' +
    "<message>first &amp; only</message>\n<message>second</message>\n" +
    "<recovery>r1</recovery>\n<recovery>r2</recovery>\n" +
    "<retry_after>5 seconds</retry_after>\n<retry_after>9 seconds</retry_after>\n" +
    "<available_actions>a, b</available_actions>\n<available_actions>\n  <action>c</action>\n</available_actions>\n" +
    '<details>\n  <detail key="k">1</detail>\n</details>\n<details>\n  <detail key="k">2</detail>\n</details>\n' +
    "</tool_error>";
  assert.deepEqual(parse(text), {
    ...base, code: "X", severity: "warning", isError: false, message: "first & only", recovery: "r1", retryAfter: 5,
    availableActions: ["a", "b", "c"], details: [{ key: "k", value: "1" }, { key: "k", value: "2" }],
  });
  const env = parse('<tool_error code="X"><message>m</message><recovery></recovery><recovery>r2</recovery>' +
    "<retry_after>soon</retry_after><retry_after>3 seconds</retry_after></tool_error>");
  assert.deepEqual([env.recovery, env.retryAfter], [null, null]);

  const change = (d) => `<change severity="SAFE" field="f"><description>${d}</description>` +
    "<description>later</description><before>b1</before><before>b2</before><after>a1</after><after>a2</after></change>";
  const awareness = (a) => `<contract_awareness><system_note>IMPORTANT: The behavioral contract for tool "${a}" has changed since your last calibration.</system_note>` +
    `<system_note>second note</system_note><action>${a}.x</action><action>other</action>` +
    `<contract_changes>${change(a)}</contract_changes><contract_changes>${change("never read")}</contract_changes></contract_awareness>`;
  const v = parse(`<validation_error action="g.x">\n<field name="a">one</field>\n<field name="a">two</field>\n${awareness("g")}\n${awareness("h")}\n</validation_error>`);
  assert.deepEqual(v.contractAwareness, {
    tool: "g", action: "g.x",
    changes: [{ severity: "SAFE", field: "f", description: "g", before: "b1", after: "a1" }],
  });
  assert.deepEqual(v.fields, [{ name: "a", text: "one" }, { name: "a", text: "two" }]);
});

test("parse.rs: an unknown severity is kept as sent", () => {
  const env = parse('<tool_error code="NOT_FOUND" severity="fatal">\n<message>m</message>\n</tool_error>');
  assert.deepEqual([env.severity, env.isError], ["fatal", true]);
  for (const [written, severity] of [["Warning", "Warning"], ["WARNING", "WARNING"], [" warning", " warning"], ["", "error"], ["critical", "critical"]]) {
    const e = parse(`<tool_error code="X" severity="${written}"><message>m</message></tool_error>`);
    assert.deepEqual([e.severity, e.isError], [severity, true], written);
  }
});

test("parse.rs: attribute values are unescaped like text", () => {
  const env = parse('<tool_error code="X&lt;Y" severity="a&amp;b">\n<message>m</message>\n<details>\n  ' +
    "<detail key=\"a&quot;b\">v</detail>\n  <detail key='&apos;&#60;&#x3E;'>w</detail>\n</details>\n</tool_error>");
  assert.deepEqual([env.code, env.severity, env.details], ["X<Y", "a&b", [{ key: 'a"b', value: "v" }, { key: "'<>", value: "w" }]]);
  const v = parse('<validation_error action="a&amp;b">\n<field name="x&lt;y">bad.</field>\n</validation_error>\n' +
    "<contract_awareness>\n  <action>a&amp;b</action>\n  <contract_changes>\n    " +
    '<change severity="&#66;REAKING" field="p&amp;q&quot;">\n      <description>d</description>\n    </change>\n  ' +
    "</contract_changes>\n</contract_awareness>");
  assert.deepEqual([v.action, v.message, v.fields], ["a&b", "Invalid arguments for a&b.", [{ name: "x<y", text: "bad." }]]);
  assert.deepEqual([v.contractAwareness.changes[0].severity, v.contractAwareness.changes[0].field], ["BREAKING", 'p&q"']);
  // Change severities compare ASCII case-insensitively only.
  const s = parse('<tool_error code="X"><message>m</message></tool_error>\n<contract_awareness><contract_changes>' +
    '<change severity="breaking"/><change severity="\u017fafe"/></contract_changes></contract_awareness>');
  assert.deepEqual(s.contractAwareness.changes.map((c) => c.severity), ["BREAKING", "RISKY"]);
});

test("parse.rs: retry_after reads the leading number", () => {
  const retry = (t) => parse(`<tool_error code="X"><message>m</message><retry_after>${t}</retry_after></tool_error>`).retryAfter;
  assert.equal(retry("30 seconds"), 30);
  assert.equal(retry(" 5s"), 5);
  assert.equal(retry("0 seconds"), null);
  assert.equal(retry("soon"), null);
  assert.equal(retry("99999999999999999999999 seconds"), null);
});

test("FusionApp.value reads a success's data as the Rust client does", () => {
  const { value } = window.FusionApp;
  assert.deepEqual(value({ content: [{ type: "text", text: '{"id":"inv_1"}' }], structuredContent: { id: "inv_2" } }), { id: "inv_2" });
  assert.deepEqual(value({ content: [{ type: "text", text: '{"id":"inv_1"}' }] }), { id: "inv_1" });
  assert.equal(value({ content: [{ type: "text", text: "plain" }] }), "plain");
  const warning = '<tool_error code="HANDOFF_CONNECTING" severity="warning">\n<message>connecting</message>\n</tool_error>';
  assert.equal(value({ content: [{ type: "text", text: warning }] }), null);
  assert.deepEqual(value({ content: [{ type: "text", text: "[1]" }, { type: "text", text: warning }] }), [1]);
});
