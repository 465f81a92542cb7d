// fusion-app.js: the view's side of an MCP App (the io.modelcontextprotocol/ui extension,
// SEP-1865), and the reader of MCP Fusion's error envelopes. Plain ES2020, no dependencies: the
// server inlines it into a page's script element that holds only the marker comment
// FUSION_APP_JS, so this file must never spell a closing script tag, nor an HTML comment opener.
//
//   FusionApp.on("tool-result", (result, envelope) => envelope ? showError(envelope) : render(result));
//   await FusionApp.connect({ name: "invoice-view", version: "1.0.0" });
//   const outcome = await FusionApp.callTool("billing", { action: "get_invoice", id });
//   if (!outcome.ok) showError(outcome.envelope);
//
// Events: "tool-input" (the arguments of the model's call), "tool-input-partial",
// "tool-result" (its CallToolResult, and its envelope or null), "tool-cancelled",
// "host-context" (the merged context, and what changed), "teardown" (awaited before the host
// is answered). An envelope is {kind: "tool_error" | "validation_error" | "text" | "rpc_error",
// code, severity, message, recovery, availableActions, details: [{key, value}], retryAfter,
// action, fields: [{name, text}], contractAwareness, isError}; retryAfter is null or whole
// seconds, a Number up to Number.MAX_SAFE_INTEGER and a BigInt above it (exact up to 2^64 - 1,
// as the Rust parser reads it; JSON.stringify needs a replacer for a BigInt).
(function (global) {
  "use strict";

  const PROTOCOL_VERSION = "2026-01-26";

  // ---------------------------------------------------------------------------------------
  // Envelopes: a port of crates/wire/src/parse.rs and escape.rs, same rules and same results;
  // tests/apps/envelope.test.mjs runs it on the wire crate's vectors so the two cannot drift.
  // Tags, names and entities are ASCII, so indexing UTF-16 code units finds the boundaries
  // the Rust code finds in bytes.
  // ---------------------------------------------------------------------------------------

  // Rust's trim and char::is_whitespace (Unicode White_Space). JavaScript's \s differs: it
  // takes U+FEFF and leaves U+0085.
  const WHITE = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  const BLANK = new RegExp(`^[${WHITE}]*$`);
  const LEADING = new RegExp(`^[${WHITE}]+`);
  const TRAILING = new RegExp(`[${WHITE}]+$`);
  const isBlank = (s) => BLANK.test(s);
  const trimStart = (s) => s.replace(LEADING, "");
  const trim = (s) => trimStart(s).replace(TRAILING, "");
  const isNameChar = (c) => c !== undefined && /[A-Za-z0-9_.:-]/.test(c);
  // u8::is_ascii_whitespace: no vertical tab.
  const isAsciiBlank = (c) => c === " " || c === "\t" || c === "\n" || c === "\f" || c === "\r";

  const NAMED = new Map([["amp", "&"], ["lt", "<"], ["gt", ">"], ["quot", "\""], ["apos", "'"]]);

  // The exact inverse of the escaper: the five named entities and numeric references. Anything
  // else (a stray "&", an unknown name, a surrogate, NUL) stays as written.
  function unescape(text) {
    let out = "";
    let i = 0;
    for (let amp = text.indexOf("&"); amp >= 0; amp = text.indexOf("&", i)) {
      out += text.slice(i, amp);
      // The longest reference read is 12 characters ("&#1114111;" and kin), so a text full of
      // stray ampersands stays linear.
      const semi = text.slice(amp, amp + 12).indexOf(";");
      const ch = semi < 0 ? null : reference(text.slice(amp + 1, amp + semi));
      out += ch ?? "&";
      i = ch === null ? amp + 1 : amp + semi + 1;
    }
    return out + text.slice(i);
  }

  function reference(name) {
    if (NAMED.has(name)) return NAMED.get(name);
    const m = /^#(?:[xX]([0-9A-Fa-f]+)|([0-9]+))$/.exec(name);
    if (!m) return null;
    const code = m[1] !== undefined ? parseInt(m[1], 16) : parseInt(m[2], 10);
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return null;
    return String.fromCodePoint(code);
  }

  // A cursor over a string, reading tags as the Rust scanner does.
  class Scanner {
    constructor(src) {
      this.src = src;
      this.pos = 0;
    }

    skipBlanks() {
      while (isAsciiBlank(this.src[this.pos])) this.pos++;
    }

    takeName() {
      const start = this.pos;
      while (isNameChar(this.src[this.pos])) this.pos++;
      return this.src.slice(start, this.pos);
    }

    // <name attr="v" ...> or <name .../> at the cursor: {name, attrs (their raw text),
    // selfClosing}; null, the cursor unmoved, if it is not one.
    openTag() {
      const start = this.pos;
      const tag = this.openTagAt();
      if (tag === null) this.pos = start;
      return tag;
    }

    openTagAt() {
      if (this.src[this.pos] !== "<") return null;
      this.pos++;
      const name = this.takeName();
      if (name === "") return null;
      const attrsStart = this.pos;
      for (;;) {
        this.skipBlanks();
        const attrs = this.src.slice(attrsStart, this.pos);
        if (this.src.startsWith("/>", this.pos)) {
          this.pos += 2;
          return { name, attrs, selfClosing: true };
        }
        if (this.src[this.pos] === ">") {
          this.pos++;
          return { name, attrs, selfClosing: false };
        }
        if (this.attribute() === null) return null;
      }
    }

    // name="value" (or single quotes) at the cursor: [name, raw value], or null.
    attribute() {
      const name = this.takeName();
      if (name === "") return null;
      this.skipBlanks();
      if (this.src[this.pos] !== "=") return null;
      this.pos++;
      this.skipBlanks();
      const quote = this.src[this.pos];
      if (quote !== "\"" && quote !== "'") return null;
      // A value never holds a raw "<" (it is escaped): stopping there keeps a broken tag cheap.
      let end = this.pos + 1;
      while (end < this.src.length && this.src[end] !== quote && this.src[end] !== "<") end++;
      if (this.src[end] !== quote) return null;
      const value = this.src.slice(this.pos + 1, end);
      this.pos = end + 1;
      return [name, value];
    }
  }

  // The unescaped value of attribute `name` in a tag's attribute text; the first one wins.
  function attr(attrs, name) {
    const s = new Scanner(attrs);
    for (;;) {
      s.skipBlanks();
      const pair = s.attribute();
      if (pair === null) return null;
      if (pair[0] === name) return unescape(pair[1]);
    }
  }

  // The elements directly inside `src`, as [{name, attrs, body}], skipping stray text and
  // stray closing tags. With `parent`, reading stops after "</parent>". `list.end` is where
  // reading stopped: what follows is after the parent, or the cut-off rest.
  function elements(src, parent) {
    const s = new Scanner(src);
    const list = [];
    for (let lt = src.indexOf("<"); lt >= 0; lt = src.indexOf("<", s.pos)) {
      s.pos = lt;
      if (src.startsWith("</", lt)) {
        if (parent !== undefined && src.startsWith(`</${parent}>`, lt)) {
          s.pos = lt + parent.length + 3;
          break;
        }
        s.pos += 2;
        continue;
      }
      const tag = s.openTag();
      if (tag === null) {
        s.pos++;
        continue;
      }
      if (tag.selfClosing) {
        list.push({ name: tag.name, attrs: tag.attrs, body: "" });
        continue;
      }
      // The body runs to the first closing tag of its name; with none, this element and all
      // after it are cut off.
      const close = src.indexOf(`</${tag.name}>`, s.pos);
      if (close < 0) break;
      list.push({ name: tag.name, attrs: tag.attrs, body: src.slice(s.pos, close) });
      s.pos = close + tag.name.length + 3;
    }
    list.end = s.pos;
    return list;
  }

  const first = (list, name) => list.find((e) => e.name === name) ?? null;
  const firstText = (list, name) => {
    const e = first(list, name);
    return e === null ? null : unescape(e.body);
  };
  const named = (list, name) => list.filter((e) => e.name === name);

  const NOTE_PREFIX = "IMPORTANT: The behavioral contract for tool \"";
  const NOTE_SUFFIX = "\" has changed since your last calibration.";
  const CHANGE_SEVERITIES = ["BREAKING", "RISKY", "SAFE", "COSMETIC"];

  function contractAwareness(body) {
    const parts = elements(body);
    const note = firstText(parts, "system_note");
    const changes = first(parts, "contract_changes");
    const framed = note !== null && note.length >= NOTE_PREFIX.length + NOTE_SUFFIX.length &&
      note.startsWith(NOTE_PREFIX) && note.endsWith(NOTE_SUFFIX);
    return {
      tool: note === null ? "" : framed ? note.slice(NOTE_PREFIX.length, -NOTE_SUFFIX.length) : note,
      action: firstText(parts, "action") ?? "",
      changes: changes === null ? [] : named(elements(changes.body), "change").map(contractChange),
    };
  }

  function contractChange(element) {
    const parts = elements(element.body);
    // eq_ignore_ascii_case: toUpperCase would fold more than ASCII ("\u017fafe" is not SAFE).
    const severity = (attr(element.attrs, "severity") ?? "").replace(/[a-z]/g, (c) => c.toUpperCase());
    return {
      // An unknown severity still reports a change, of unknown weight.
      severity: CHANGE_SEVERITIES.includes(severity) ? severity : "RISKY",
      field: attr(element.attrs, "field") ?? "",
      description: firstText(parts, "description") ?? "",
      before: firstText(parts, "before"),
      after: firstText(parts, "after"),
    };
  }

  const U64_MAX = 0xffffffffffffffffn;
  const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

  // "30 seconds" -> 30. Zero, no number, or more than a u64 holds means no delay, as in Rust.
  // The Rust reader keeps every u64 exactly, and a Number does not past 2^53 (2^53 + 1 would
  // read as 2^53), so a larger delay is a BigInt: a view that does arithmetic with retryAfter
  // gets a Number for every delay a server really sends, and an exact value for the rest.
  // Leading zeros are dropped before the length check, so a long run of digits costs no
  // BigInt work.
  function leadingSeconds(text) {
    const [all, significant] = /^0*([0-9]*)/.exec(trimStart(text));
    if (all === "" || significant === "" || significant.length > 20) return null;
    const n = BigInt(significant);
    if (n > U64_MAX) return null;
    return n <= MAX_SAFE ? Number(n) : n;
  }

  function availableActions(body) {
    if (body.includes("<")) return named(elements(body), "action").map((e) => unescape(e.body));
    // The TypeScript routing errors write them comma-separated.
    return unescape(body).split(",").map(trim).filter((a) => a !== "");
  }

  // Where the first root tag that starts a line (after blanks) is, or -1.
  function findRoot(text) {
    for (let start = 0; start < text.length;) {
      const nl = text.indexOf("\n", start);
      const end = nl < 0 ? text.length : nl + 1;
      let at = start;
      while (at < end && " \t\r\ufeff".includes(text[at])) at++;
      if (text[at] === "<") {
        let nameEnd = at + 1;
        while (nameEnd < end && isNameChar(text[nameEnd])) nameEnd++;
        const name = text.slice(at + 1, nameEnd);
        if (name === "tool_error" || name === "validation_error") return at;
      }
      start = end;
    }
    return -1;
  }

  const envelope = (kind, code, message) => ({
    kind, code, severity: "error", message, recovery: null, availableActions: [], details: [],
    retryAfter: null, action: null, fields: [], contractAwareness: null, isError: true,
  });

  // Text that is not an envelope: UNKNOWN, with the first <message> in it, else all of it.
  const unstructured = (text) => envelope("text", "UNKNOWN", bareMessage(text) ?? (isBlank(text) ? "Unknown error" : text));

  // The text of the first complete <message> element anywhere, at any depth.
  function bareMessage(text) {
    const s = new Scanner(text);
    for (let lt = text.indexOf("<"); lt >= 0; lt = text.indexOf("<", s.pos)) {
      s.pos = lt;
      const tag = s.openTag();
      if (tag === null) {
        s.pos++;
      } else if (tag.name === "message" && !tag.selfClosing) {
        // A "</message>" closing a later one would close this one too: if this one is
        // unclosed, so is every later one.
        const close = text.indexOf("</message>", s.pos);
        return close < 0 ? null : unescape(text.slice(s.pos, close));
      }
    }
    return null;
  }

  function parseRoot(whole, text) {
    const s = new Scanner(text);
    const root = s.openTag();
    if (root === null) return null;
    const validation = root.name === "validation_error";
    const code = validation ? "VALIDATION_ERROR" : attr(root.attrs, "code") || "UNKNOWN";
    const env = envelope(root.name, code, "");
    env.severity = attr(root.attrs, "severity") || "error";
    if (validation) env.action = attr(root.attrs, "action") ?? "";
    const afterRoot = text.slice(s.pos);
    // Children are read up to the root's closing tag; a cut-off envelope still says what it
    // said so far.
    const children = root.selfClosing ? elements("") : elements(afterRoot, root.name);
    for (const e of children) {
      if (e.name === "available_actions") env.availableActions.push(...availableActions(e.body));
      if (e.name === "details") {
        for (const d of named(elements(e.body), "detail")) env.details.push({ key: attr(d.attrs, "key") ?? "", value: unescape(d.body) });
      }
      if (e.name === "field" && validation) env.fields.push({ name: attr(e.attrs, "name") ?? "(root)", text: unescape(e.body) });
    }
    // Single-valued elements: the first one wins, even empty (an empty recovery means none).
    const message = firstText(children, "message");
    env.recovery = firstText(children, "recovery") || null;
    const retry = first(children, "retry_after");
    env.retryAfter = retry === null ? null : leadingSeconds(retry.body);
    let block = first(children, "contract_awareness");
    // The TypeScript implementation appends the block after the tool error.
    if (block === null) block = first(elements(root.selfClosing ? afterRoot : afterRoot.slice(children.end)), "contract_awareness");
    env.contractAwareness = block === null ? null : contractAwareness(block.body);
    if (message !== null) env.message = message;
    else if (validation) env.message = `Invalid arguments for ${env.action}.`;
    else env.message = isBlank(whole) ? "Unknown error" : whole;
    env.isError = env.severity !== "warning";
    return env;
  }

  // mcp_fusion_wire::parse: never fails. Text that is not an envelope reads as kind "text",
  // code UNKNOWN.
  function parse(text) {
    const at = findRoot(text);
    return (at < 0 ? null : parseRoot(text, text.slice(at))) ?? unstructured(text);
  }

  const textBlocks = (result) => (Array.isArray(result?.content) ? result.content : [])
    .filter((c) => c?.type === "text" && typeof c.text === "string")
    .map((c) => c.text);

  // A failed call's envelope, or null for a success. A CallToolResult fails when isError is
  // true: its text blocks, joined, are the envelope (kind "text" when they are not one, so a
  // failure always renders). A string fails when it holds an envelope that is an error (a
  // warning is no failure).
  function parseEnvelope(resultOrText) {
    if (typeof resultOrText === "string") {
      const env = parse(resultOrText);
      return env.kind !== "text" && env.isError ? env : null;
    }
    return resultOrText?.isError === true ? parse(textBlocks(resultOrText).join("\n")) : null;
  }

  // The data of a success, as the Rust client reads it: structuredContent, else the first text
  // block as JSON (or as the string when it is not JSON); null when there is none, or when the
  // first text is a warning sent alone.
  function value(result) {
    if (result?.structuredContent != null) return result.structuredContent;
    const texts = textBlocks(result);
    const isWarning = (t) => {
      if (!trimStart(t).startsWith("<tool_error")) return false;
      const env = parse(t);
      return env.kind === "tool_error" && env.severity === "warning";
    };
    if (texts.length === 0 || (trimStart(texts[0]).startsWith("<tool_error") && texts.some(isWarning))) return null;
    try {
      return JSON.parse(texts[0]);
    } catch {
      return texts[0];
    }
  }

  // ---------------------------------------------------------------------------------------
  // The bridge: JSON-RPC 2.0 with the host over postMessage. The host is the parent window;
  // a message from any other window is ignored, as the official transport ignores it.
  // ---------------------------------------------------------------------------------------

  let nextId = 1;
  let connecting = null;
  const pending = new Map();
  const listeners = new Map();
  // The last tool input and result, handed to a listener added after they came: a view that
  // subscribes late (after an await) still renders the call that opened it.
  const last = new Map();
  const report = (e) => global.console?.error("[FusionApp]", e);

  const app = {
    protocolVersion: PROTOCOL_VERSION,
    hostInfo: null,
    hostCapabilities: {},
    hostContext: {},
    toolInput: null,
    toolResult: null,
  };

  // Calls every listener of `event`; resolves once all have (teardown waits for them).
  function emit(event, ...args) {
    if (event === "tool-input" || event === "tool-result") last.set(event, args);
    return Promise.all((listeners.get(event) ?? []).map(async (fn) => {
      try {
        await fn(...args);
      } catch (e) {
        report(e);
      }
    }));
  }

  function post(message) {
    global.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  }

  // A request to the host: resolves with its result, rejects with an Error carrying the
  // JSON-RPC error's code and data.
  function request(method, params = {}) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      post({ id, method, params });
    });
  }

  function notify(method, params) {
    post(params === undefined ? { method } : { method, params });
  }

  function onMessage(event) {
    const msg = event.data;
    if (event.source !== global.parent || msg?.jsonrpc !== "2.0") return;
    if (msg.method === undefined) {
      const waiting = pending.get(msg.id);
      if (!waiting) return;
      pending.delete(msg.id);
      if (msg.error) {
        waiting.reject(Object.assign(new Error(msg.error.message || `JSON-RPC error ${msg.error.code}`), { code: msg.error.code, data: msg.error.data }));
      } else {
        waiting.resolve(msg.result);
      }
    } else if (msg.id !== undefined) {
      answer(msg);
    } else {
      notification(msg.method, msg.params ?? {});
    }
  }

  // The host's requests: ping, and the teardown it waits on before removing the view.
  async function answer({ id, method, params }) {
    try {
      if (method === "ui/resource-teardown") await emit("teardown", params ?? {});
      else if (method !== "ping") throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
      post({ id, result: {} });
    } catch (e) {
      post({ id, error: { code: typeof e.code === "number" ? e.code : -32603, message: String(e.message ?? e) } });
    }
  }

  function notification(method, params) {
    switch (method) {
      case "ui/notifications/tool-input":
        app.toolInput = params.arguments ?? {};
        emit("tool-input", app.toolInput);
        break;
      case "ui/notifications/tool-input-partial":
        emit("tool-input-partial", params.arguments ?? {});
        break;
      case "ui/notifications/tool-result":
        app.toolResult = params;
        emit("tool-result", params, parseEnvelope(params));
        break;
      case "ui/notifications/tool-cancelled":
        emit("tool-cancelled", params);
        break;
      case "ui/notifications/host-context-changed":
        // Partial updates, merged into what the view knows.
        app.hostContext = { ...app.hostContext, ...params };
        emit("host-context", app.hostContext, params);
        break;
    }
  }

  // The handshake: ui/initialize says who the view is and what it can do, then
  // ui/notifications/initialized; the host sends nothing before that. Resolves with the host's
  // answer. Options: name, version, appCapabilities, autoResize (default true).
  app.connect = function connect(options = {}) {
    if (connecting) return connecting;
    global.addEventListener("message", onMessage);
    connecting = request("ui/initialize", {
      appInfo: { name: options.name ?? "mcp-fusion-app", version: options.version ?? "1.0.0" },
      appCapabilities: options.appCapabilities ?? { availableDisplayModes: ["inline"] },
      protocolVersion: PROTOCOL_VERSION,
    }).then((result) => {
      app.protocolVersion = result.protocolVersion;
      app.hostInfo = result.hostInfo ?? null;
      app.hostCapabilities = result.hostCapabilities ?? {};
      app.hostContext = result.hostContext ?? {};
      notify("ui/notifications/initialized");
      if (options.autoResize !== false) watchSize();
      emit("host-context", app.hostContext, app.hostContext);
      return result;
    });
    return connecting;
  };

  // Adds a listener; returns what removes it.
  app.on = function on(event, fn) {
    listeners.set(event, [...(listeners.get(event) ?? []), fn]);
    if (last.has(event)) Promise.resolve().then(() => fn(...last.get(event))).catch(report);
    return () => listeners.set(event, (listeners.get(event) ?? []).filter((g) => g !== fn));
  };

  // A tools/call through the host. A refusal (isError) and a JSON-RPC error (the host or the
  // server would not run it) both resolve as {ok: false, envelope}, so a view renders every
  // failure one way, its own calls' and the model's alike.
  app.callTool = function callTool(name, args = {}) {
    return request("tools/call", { name, arguments: args }).then((result) => {
      const env = parseEnvelope(result);
      return env === null ? { ok: true, result } : { ok: false, envelope: env, result };
    }, (error) => {
      const env = envelope("rpc_error", error.code === undefined ? "UNKNOWN" : String(error.code), error.message);
      if (error.data !== undefined) env.details.push({ key: "data", value: JSON.stringify(error.data) });
      return { ok: false, envelope: env };
    });
  };

  // ui/notifications/size-changed when the content's size changes, once a frame at most,
  // measured as the official SDK measures it: the height the content needs, not the frame's.
  function watchSize() {
    if (typeof global.ResizeObserver !== "function") return;
    const root = global.document.documentElement;
    let queued = false;
    let sent = "";
    const measure = () => {
      if (queued) return;
      queued = true;
      global.requestAnimationFrame(() => {
        queued = false;
        const saved = root.style.height;
        root.style.height = "max-content";
        const size = { width: Math.ceil(global.innerWidth), height: Math.ceil(root.getBoundingClientRect().height) };
        root.style.height = saved;
        if (`${size.width}x${size.height}` !== sent) {
          sent = `${size.width}x${size.height}`;
          notify("ui/notifications/size-changed", size);
        }
      });
    };
    measure();
    const observer = new global.ResizeObserver(measure);
    observer.observe(root);
    observer.observe(global.document.body);
  }

  Object.assign(app, { request, notify, parse, parseEnvelope, unescape, value });
  global.FusionApp = app;
})(typeof window !== "undefined" ? window : globalThis);
