// What the checks of oauth.mjs and gateway.mjs share: the `ok - …` / `not ok - …` reporting,
// client_credentials tokens from provider.mjs, and MCP over raw Streamable HTTP with a bearer
// token. Every request is bounded; the whole run is bounded by run.sh's timeout.

export const PROTOCOL_VERSION = "2025-06-18";
export const ALL_ACTIONS = ["list_invoices", "get_invoice", "create_invoice", "pay_invoice", "void_invoice", "export_invoices"];
/** The demo's actions a billing:read token may call. */
export const READ_ACTIONS = ["list_invoices", "get_invoice", "export_invoices"];
export const BOTH_SCOPES = "billing:read billing:write";
export const REQUEST_LIMIT_MS = 20_000;

/**
 * `--flag URL` pairs into {name: URL} by `flags` ({"--flag": "name"}), every flag required and
 * a trailing slash dropped; a bad command line ends the process with usage (exit 2).
 */
export function urlOptions(script, flags) {
  const usage = (message) => {
    console.error(`${script}: ${message}`);
    console.error(`usage: node ${script} ${Object.keys(flags).map((f) => `${f} URL`).join(" ")}`);
    process.exit(2);
  };
  const options = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const name = flags[argv[i]];
    if (!name) usage(`unknown argument ${JSON.stringify(argv[i])}`);
    if (i + 1 >= argv.length || !URL.canParse(argv[i + 1])) usage(`${argv[i]} needs a URL`);
    options[name] = argv[i + 1].replace(/\/$/, "");
  }
  for (const [flag, name] of Object.entries(flags)) if (!options[name]) usage(`${flag} is missing`);
  return options;
}

// ---- reporting ----

let passed = 0;
let failed = 0;

export class Failed extends Error {}

export function expect(condition, message) {
  if (!condition) throw new Failed(message);
}

export function clip(text, limit = 300) {
  const s = typeof text === "string" ? text : JSON.stringify(text);
  return s.length <= limit ? s : `${s.slice(0, limit)}… (${s.length} chars)`;
}

/** Runs one check: `fn` returns what was seen, printed after the name; a throw fails it. */
export async function check(name, fn) {
  try {
    const seen = await fn();
    passed++;
    // One line per check, whatever the text seen holds (an envelope spans several).
    console.log(`ok - ${name}${seen ? `: ${String(seen).replace(/\s*\n\s*/g, " ")}` : ""}`);
  } catch (error) {
    failed++;
    const why = error instanceof Failed ? error.message.replace(/\s*\n\s*/g, " ") : (error.stack ?? error);
    console.log(`not ok - ${name}: ${why}`);
  }
}

/** For what every later check needs: a failure ends the run. */
export async function required(what, fn) {
  try {
    return await fn();
  } catch (error) {
    console.log(`not ok - ${what}: ${error instanceof Failed ? error.message : (error.stack ?? error)}`);
    console.log(`${passed} passed, ${failed + 1} failed`);
    process.exit(1);
  }
}

/** Prints `N passed, N failed` and exits, 1 if any check failed. */
export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

// ---- the provider ----

export async function getJson(url, init) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_LIMIT_MS) });
  const text = await response.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Failed(`${url}: HTTP ${response.status}, not JSON: ${clip(text)}`);
  }
  return { response, body };
}

/** The discovery document of `issuer`, which must name it; a failure ends the run. */
export function discover(issuer) {
  return required("the provider's discovery document", async () => {
    const { response, body } = await getJson(`${issuer}/.well-known/openid-configuration`);
    expect(response.ok && body.issuer === issuer, `HTTP ${response.status}, issuer ${body.issuer} (wanted ${issuer})`);
    return body;
  });
}

// provider.mjs's clients, [id, secret, how it authenticates]. billing-reader sends its secret
// in the form (client_secret_post), the others as HTTP Basic (client_secret_basic): the
// provider takes both.
export const CLIENTS = {
  reader: ["billing-reader", "reader-secret", "post"],
  writer: ["billing-writer", "writer-secret"],
  other: ["billing-other", "other-secret"],
  opaque: ["billing-opaque", "opaque-secret"],
};

/** A client_credentials token of CLIENTS[client] for `resource` (RFC 8707) from `endpoint`. */
export async function requestToken(endpoint, client, resource, scope = BOTH_SCOPES) {
  const [id, secret, method] = CLIENTS[client];
  const form = new URLSearchParams({ grant_type: "client_credentials", scope, resource });
  const headers = {};
  if (method === "post") {
    form.set("client_id", id);
    form.set("client_secret", secret);
  } else {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;
  }
  const { response, body } = await getJson(endpoint, { method: "POST", headers, body: form });
  expect(response.ok && body.access_token, `token request of ${id} for ${resource}: HTTP ${response.status} ${clip(body)}`);
  return body.access_token;
}

export function decodeJwt(jwt) {
  const [header, payload] = jwt.split(".").slice(0, 2).map((part) => JSON.parse(Buffer.from(part, "base64url")));
  return { header, payload };
}

// ---- MCP over Streamable HTTP ----

export function metadataUrlOf(mcpUrl) {
  const url = new URL(mcpUrl);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
}

/** The auth-params of a `Bearer` challenge (RFC 6750 §3), or null when there is none. */
export function bearerChallenge(header) {
  const match = /(?:^|,)\s*Bearer(?:\s+(.*))?$/i.exec(header ?? "");
  if (!match) return null;
  const params = {};
  const re = /([A-Za-z0-9_!#$%&'*+.^`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*,?\s*/gy;
  const rest = match[1] ?? "";
  let m;
  while ((m = re.exec(rest)) && m[0] !== "") {
    params[m[1].toLowerCase()] = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3];
  }
  return params;
}

let nextId = 1;

/**
 * POSTs one JSON-RPC message; answers {status, headers, message (the response with the same id,
 * from a JSON or an SSE body), text}.
 */
export async function post(mcpUrl, bearer, message, sessionId) {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
  if (sessionId) {
    headers["mcp-session-id"] = sessionId;
    headers["mcp-protocol-version"] = PROTOCOL_VERSION;
  }
  const response = await fetch(mcpUrl, {
    method: "POST",
    headers,
    body: JSON.stringify(message),
    signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
  });
  const text = await response.text();
  let reply = null;
  if (response.ok && message.id !== undefined) {
    const type = response.headers.get("content-type") ?? "";
    const candidates = [];
    if (type.startsWith("text/event-stream")) {
      // Events are separated by a blank line; an event's data lines join with "\n".
      for (const event of text.split(/\r?\n\r?\n/)) {
        const data = event
          .split(/\r?\n/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data) candidates.push(data);
      }
    } else if (text) {
      candidates.push(text);
    }
    for (const data of candidates) {
      try {
        const parsed = JSON.parse(data);
        if (parsed.id === message.id) reply = parsed;
      } catch {
        // A priming event or a comment: not the response.
      }
    }
  }
  return { status: response.status, headers: response.headers, message: reply, text };
}

export function initializeMessage() {
  return {
    jsonrpc: "2.0",
    id: nextId++,
    method: "initialize",
    params: {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: "mcp-fusion-oauth-test", version: "0" },
    },
  };
}

/** An initialized session; throws, saying what came back, if the server does not serve it. */
export async function session(mcpUrl, bearer) {
  const init = await post(mcpUrl, bearer, initializeMessage());
  expect(
    init.status === 200 && init.message?.result,
    `initialize: HTTP ${init.status} ${init.headers.get("www-authenticate") ?? ""} ${clip(init.text)}`,
  );
  const id = init.headers.get("mcp-session-id");
  expect(id, "initialize: no mcp-session-id header");
  const note = await post(mcpUrl, bearer, { jsonrpc: "2.0", method: "notifications/initialized" }, id);
  expect(note.status === 202 || note.status === 200, `notifications/initialized: HTTP ${note.status} ${clip(note.text)}`);
  return {
    id,
    /** What initialize answered (serverInfo, capabilities). */
    initialized: init.message.result,
    /** The raw exchange of one request in this session. */
    send: (method, params) => post(mcpUrl, bearer, { jsonrpc: "2.0", id: nextId++, method, params }, id),
    /** The result of one request; throws on anything but HTTP 200 with a result. */
    async request(method, params) {
      const r = await this.send(method, params);
      expect(
        r.status === 200 && r.message?.result,
        `${method}: HTTP ${r.status} ${r.headers.get("www-authenticate") ?? ""} ${clip(r.message ?? r.text)}`,
      );
      return r.message.result;
    },
    /** tools/call of `tool` (billing-server's grouped tool unless named). */
    call(args, tool = "billing") {
      return this.request("tools/call", { name: tool, arguments: args });
    },
    async close() {
      await fetch(mcpUrl, {
        method: "DELETE",
        headers: { authorization: `Bearer ${bearer}`, "mcp-session-id": id, "mcp-protocol-version": PROTOCOL_VERSION },
        signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
      }).catch(() => {});
    },
  };
}

export function resultText(result) {
  return (result.content ?? []).filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

/** A tool result that served the call (a page of invoices for list_invoices). */
export function expectServed(result, what) {
  expect(!result.isError, `${what}: isError, ${clip(resultText(result))}`);
  return result;
}

/** A list_invoices call through `tool` that is served: "N invoices". */
export async function listInvoices(s, tool = "billing") {
  const result = expectServed(await s.call({ action: "list_invoices" }, tool), "list_invoices");
  const invoices = result.structuredContent?.invoices;
  expect(Array.isArray(invoices), `list_invoices: no structuredContent.invoices in ${clip(result)}`);
  return `${invoices.length} invoices`;
}

/** The `action` enum of the tool named `tool` in a tools/list result. */
export function actionEnum(tools, tool = "billing") {
  const found = tools.tools?.find((t) => t.name === tool);
  expect(found, `tools/list: no tool "${tool}" in ${clip(tools)}`);
  return found.inputSchema?.properties?.action?.enum;
}

export function sameList(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A request with `bearer` is refused with 401 invalid_token naming the resource metadata. */
export async function expectInvalidToken(mcpUrl, bearer) {
  const r = await post(mcpUrl, bearer, initializeMessage());
  const header = r.headers.get("www-authenticate");
  expect(r.status === 401, `HTTP ${r.status} (wanted 401), WWW-Authenticate ${header}, ${clip(r.text)}`);
  const challenge = bearerChallenge(header);
  expect(challenge, `401 without a Bearer challenge: WWW-Authenticate ${header}`);
  expect(challenge.error === "invalid_token", `error=${challenge.error} (wanted invalid_token) in ${header}`);
  expect(
    challenge.resource_metadata === metadataUrlOf(mcpUrl),
    `resource_metadata=${challenge.resource_metadata} (wanted ${metadataUrlOf(mcpUrl)}) in ${header}`,
  );
  return `401 ${header}`;
}
