#!/usr/bin/env node
// billing-server as an OAuth 2.1 resource server, driven over raw Streamable HTTP with tokens
// from a real OpenID provider (provider.mjs); run.sh starts everything and passes the URLs.
//
//   node oauth.mjs --issuer URL --wrong-issuer URL --expired-issuer URL --server URL
//                  --in-band-server URL --rate-limit-server URL --introspection-server URL
//
//   --issuer                the provider billing-server trusts (its URL is its issuer)
//   --wrong-issuer          a provider with the same keys and another issuer
//   --expired-issuer        a provider with the same keys and issuer whose clock is 2 h behind
//   --server                billing-server (step-up scope refusal) at its /mcp URL
//   --in-band-server        one started with --oauth-scope-refusal in-band
//   --rate-limit-server     one no other check calls, for the rate-limit budget
//   --introspection-server  one that checks opaque tokens at the provider (RFC 7662)
// Every server runs with --rate-limit 5/3600 and --oauth-resource its own /mcp URL.
//
// Prints `ok - …` or `not ok - …` per check, then `N passed, N failed`; exits 1 if any failed.

import { createHmac, createPublicKey, generateKeyPairSync, sign as rsaSign } from "node:crypto";

const FLAGS = {
  "--issuer": "issuer",
  "--wrong-issuer": "wrongIssuer",
  "--expired-issuer": "expiredIssuer",
  "--server": "server",
  "--in-band-server": "inBandServer",
  "--rate-limit-server": "rateLimitServer",
  "--introspection-server": "introspectionServer",
};

function usage(message) {
  console.error(`oauth.mjs: ${message}`);
  console.error(`usage: node oauth.mjs ${Object.keys(FLAGS).map((f) => `${f} URL`).join(" ")}`);
  process.exit(2);
}

const options = {};
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    const name = FLAGS[argv[i]];
    if (!name) usage(`unknown argument ${JSON.stringify(argv[i])}`);
    if (i + 1 >= argv.length || !URL.canParse(argv[i + 1])) usage(`${argv[i]} needs a URL`);
    options[name] = argv[i + 1].replace(/\/$/, "");
  }
  for (const [flag, name] of Object.entries(FLAGS)) if (!options[name]) usage(`${flag} is missing`);
}

const PROTOCOL_VERSION = "2025-06-18";
const ALL_ACTIONS = ["list_invoices", "get_invoice", "create_invoice", "pay_invoice", "void_invoice"];
const READ_ACTIONS = ["list_invoices", "get_invoice"];
const BOTH_SCOPES = "billing:read billing:write";
const NEW_INVOICE = {
  action: "create_invoice",
  customer_email: "ops@example.com",
  amount_cents: 1250,
  currency: "EUR",
};
// Any one request; the whole run is bounded by run.sh's timeout.
const REQUEST_LIMIT_MS = 20_000;
const ROTATION_LIMIT_MS = 60_000;

// ---- reporting ----

let passed = 0;
let failed = 0;

class Failed extends Error {}

function expect(condition, message) {
  if (!condition) throw new Failed(message);
}

function clip(text, limit = 300) {
  const s = typeof text === "string" ? text : JSON.stringify(text);
  return s.length <= limit ? s : `${s.slice(0, limit)}… (${s.length} chars)`;
}

/** Runs one check: `fn` returns what was seen, printed after the name; a throw fails it. */
async function check(name, fn) {
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

// ---- the provider ----

async function getJson(url, init) {
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

/** For what every later check needs: a failure ends the run. */
async function required(what, fn) {
  try {
    return await fn();
  } catch (error) {
    console.log(`not ok - ${what}: ${error instanceof Failed ? error.message : (error.stack ?? error)}`);
    console.log(`${passed} passed, ${failed + 1} failed`);
    process.exit(1);
  }
}

const discovery = await required("the provider's discovery document", async () => {
  const { response, body } = await getJson(`${options.issuer}/.well-known/openid-configuration`);
  expect(response.ok && body.issuer === options.issuer, `HTTP ${response.status}, issuer ${body.issuer} (wanted ${options.issuer})`);
  return body;
});

// billing-reader sends its secret in the form (client_secret_post), the others as HTTP Basic
// (client_secret_basic): the provider takes both.
const CLIENTS = {
  reader: ["billing-reader", "reader-secret", "post"],
  writer: ["billing-writer", "writer-secret"],
  other: ["billing-other", "other-secret"],
  opaque: ["billing-opaque", "opaque-secret"],
};

/**
 * A client_credentials token for `resource` from the provider at `provider` (the main one by
 * default); the replicas are asked at their own address, whatever issuer they claim.
 */
async function token(client, resource, { scope = BOTH_SCOPES, provider = options.issuer } = {}) {
  const [id, secret, method] = CLIENTS[client];
  const endpoint = provider === options.issuer ? discovery.token_endpoint : `${provider}/token`;
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

function b64url(data) {
  return Buffer.from(data).toString("base64url");
}

function decodeJwt(jwt) {
  const [header, payload] = jwt.split(".").slice(0, 2).map((part) => JSON.parse(Buffer.from(part, "base64url")));
  return { header, payload };
}

const now = () => Math.floor(Date.now() / 1000);

// ---- MCP over Streamable HTTP ----

function metadataUrlOf(mcpUrl) {
  const url = new URL(mcpUrl);
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname}`;
}

/** The auth-params of a `Bearer` challenge (RFC 6750 §3), or null when there is none. */
function bearerChallenge(header) {
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
async function post(mcpUrl, bearer, message, sessionId) {
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

function initializeMessage() {
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
async function session(mcpUrl, bearer) {
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
    call(args) {
      return this.request("tools/call", { name: "billing", arguments: args });
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

function resultText(result) {
  return (result.content ?? []).filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

/** A tool result that served the call (a page of invoices for list_invoices). */
function expectServed(result, what) {
  expect(!result.isError, `${what}: isError, ${clip(resultText(result))}`);
  return result;
}

async function listInvoices(s) {
  const result = expectServed(await s.call({ action: "list_invoices" }), "list_invoices");
  const invoices = result.structuredContent?.invoices;
  expect(Array.isArray(invoices), `list_invoices: no structuredContent.invoices in ${clip(result)}`);
  return `${invoices.length} invoices`;
}

function actionEnum(tools) {
  const billing = tools.tools?.find((tool) => tool.name === "billing");
  expect(billing, `tools/list: no tool "billing" in ${clip(tools)}`);
  return billing.inputSchema?.properties?.action?.enum;
}

function sameList(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A request with `bearer` is refused with 401 invalid_token naming the resource metadata. */
async function expectInvalidToken(mcpUrl, bearer) {
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

// ---- the checks ----

const server = options.server;
// Each server is started with --oauth-resource its own /mcp URL.
const resource = server;

await check("1 metadata: a request without a token is 401 naming resource_metadata", async () => {
  const r = await post(server, undefined, initializeMessage());
  const header = r.headers.get("www-authenticate");
  expect(r.status === 401, `HTTP ${r.status} (wanted 401), ${clip(r.text)}`);
  const challenge = bearerChallenge(header);
  expect(challenge, `no Bearer challenge: WWW-Authenticate ${header}`);
  expect(
    challenge.resource_metadata === metadataUrlOf(server),
    `resource_metadata=${challenge.resource_metadata} (wanted ${metadataUrlOf(server)}) in ${header}`,
  );
  return header;
});

for (const url of [metadataUrlOf(server), `${new URL(server).origin}/.well-known/oauth-protected-resource`]) {
  await check(`1 metadata: GET ${new URL(url).pathname} has resource, authorization_servers, scopes, bearer methods`, async () => {
    const { response, body } = await getJson(url);
    expect(response.status === 200, `HTTP ${response.status}`);
    expect(body.resource === resource, `resource ${body.resource} (wanted ${resource})`);
    expect(
      Array.isArray(body.authorization_servers) && body.authorization_servers[0] === options.issuer,
      `authorization_servers ${JSON.stringify(body.authorization_servers)} (wanted [${options.issuer}])`,
    );
    expect(
      sameList([...(body.scopes_supported ?? [])].sort(), ["billing:read", "billing:write"]),
      `scopes_supported ${JSON.stringify(body.scopes_supported)}`,
    );
    expect(body.bearer_methods_supported?.includes("header"), `bearer_methods_supported ${JSON.stringify(body.bearer_methods_supported)}`);
    return clip(body, 400);
  });
}

const writerToken = await required("a token of billing-writer", () => token("writer", resource));
const readerToken = await required("a token of billing-reader", () => token("reader", resource, { scope: "billing:read" }));

await check("2 valid token: billing-writer's token is served (initialize, tools/list, list_invoices)", async () => {
  const { payload, header } = decodeJwt(writerToken);
  expect(payload.aud === resource && payload.iss === options.issuer, `the fixture's token: ${clip(payload)}`);
  const s = await session(server, writerToken);
  const actions = actionEnum(await s.request("tools/list", {}));
  const listed = await listInvoices(s);
  const summary = await s.request("resources/read", { uri: "billing://summary" });
  expect(summary.contents?.length, `resources/read billing://summary: ${clip(summary)}`);
  await s.close();
  return `kid ${header.kid}, sub ${payload.sub}, scope "${payload.scope}"; ${actions?.length} actions, ${listed}, billing://summary read`;
});

await check("3 wrong audience: a token for http://127.0.0.1:PORT/other is 401 invalid_token", async () => {
  const other = `${new URL(server).origin}/other`;
  const jwt = await token("writer", other);
  expect(decodeJwt(jwt).payload.aud === other, `the fixture's token has aud ${decodeJwt(jwt).payload.aud}`);
  return expectInvalidToken(server, jwt);
});

await check("4 wrong issuer: a token signed with the same key by another issuer is 401 invalid_token", async () => {
  const jwt = await token("writer", resource, { provider: options.wrongIssuer });
  const { header, payload } = decodeJwt(jwt);
  expect(payload.iss !== options.issuer && payload.aud === resource, `the fixture's token: ${clip(payload)}`);
  return `iss ${payload.iss}, kid ${header.kid}: ${await expectInvalidToken(server, jwt)}`;
});

await check("5 expired: a token of the right issuer, validly signed, expired an hour ago is 401 invalid_token", async () => {
  const jwt = await token("writer", resource, { provider: options.expiredIssuer });
  const { payload } = decodeJwt(jwt);
  expect(payload.iss === options.issuer && payload.exp < now() - 600, `the fixture's token: ${clip(payload)}, now ${now()}`);
  return `exp ${now() - payload.exp} s ago: ${await expectInvalidToken(server, jwt)}`;
});

{
  const [h, p, sig] = writerToken.split(".");
  const { header } = decodeJwt(writerToken);
  // Not the last character: its low bits are padding that a decoder may ignore.
  const i = 20;
  const altered = `${h}.${p}.${sig.slice(0, i)}${sig[i] === "A" ? "B" : "A"}${sig.slice(i + 1)}`;
  const { privateKey: stranger } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const strangers = `${h}.${p}.${b64url(rsaSign("sha256", Buffer.from(`${h}.${p}`), stranger))}`;
  const none = `${b64url(JSON.stringify({ ...header, alg: "none" }))}.${p}.`;
  const jwks = (await getJson(discovery.jwks_uri)).body;
  const pem = createPublicKey({ key: jwks.keys.find((k) => k.kid === header.kid), format: "jwk" }).export({
    type: "spki",
    format: "pem",
  });
  const hsHead = b64url(JSON.stringify({ ...header, alg: "HS256" }));
  const confused = `${hsHead}.${p}.${createHmac("sha256", pem).update(`${hsHead}.${p}`).digest("base64url")}`;
  for (const [what, jwt] of [
    ["one character of the signature changed", altered],
    ["signed by another key under the same kid", strangers],
    ['alg "none", no signature', none],
    ["HS256 keyed with the provider's public key", confused],
  ]) {
    await check(`6 bad signature: ${what} is 401 invalid_token`, () => expectInvalidToken(server, jwt));
  }
}

for (const [what, bearer] of [
  ["garbage", "garbage"],
  ["a.b.c", "a.b.c"],
  ["an 8 KiB token", `eyJ${"A".repeat(4096)}.${"B".repeat(4096)}.c`],
]) {
  await check(`7 not a JWT: ${what} is 401 invalid_token`, () => expectInvalidToken(server, bearer));
}
await check("7 not a JWT: the server still serves a valid token afterwards", async () => {
  const s = await session(server, writerToken);
  const actions = actionEnum(await s.request("tools/list", {}));
  await s.close();
  return `${actions?.length} actions listed`;
});

await check("8 missing scope: billing-reader calling create_invoice is 403 insufficient_scope (step-up)", async () => {
  const s = await session(server, readerToken);
  const listed = await listInvoices(s);
  const r = await s.send("tools/call", { name: "billing", arguments: NEW_INVOICE });
  await s.close();
  const header = r.headers.get("www-authenticate");
  expect(r.status === 403, `HTTP ${r.status} (wanted 403), WWW-Authenticate ${header}, ${clip(r.message ?? r.text)}`);
  const challenge = bearerChallenge(header);
  expect(challenge?.error === "insufficient_scope", `error=${challenge?.error} (wanted insufficient_scope) in ${header}`);
  expect(challenge.scope?.split(" ").includes("billing:write"), `scope=${challenge.scope} (wanted billing:write) in ${header}`);
  expect(
    challenge.resource_metadata === metadataUrlOf(server),
    `resource_metadata=${challenge.resource_metadata} (wanted ${metadataUrlOf(server)}) in ${header}`,
  );
  return `list_invoices served (${listed}); create_invoice: 403 ${header}`;
});

await check("8 missing scope, --oauth-scope-refusal in-band: a FORBIDDEN tool result naming billing:write", async () => {
  const url = options.inBandServer;
  const s = await session(url, await token("reader", url, { scope: "billing:read" }));
  const result = await s.call(NEW_INVOICE);
  await s.close();
  const text = resultText(result);
  expect(result.isError === true, `isError ${result.isError}: ${clip(result)}`);
  expect(text.includes("FORBIDDEN") && text.includes("billing:write"), `the envelope: ${clip(text)}`);
  return clip(text, 200);
});

for (const [who, bearer, want] of [
  ["billing-reader (billing:read)", readerToken, READ_ACTIONS],
  ["billing-writer (billing:read billing:write)", writerToken, ALL_ACTIONS],
]) {
  await check(`10 tools/list for ${who}: the action enum is ${JSON.stringify(want)}`, async () => {
    const s = await session(server, bearer);
    const actions = actionEnum(await s.request("tools/list", {}));
    await s.close();
    expect(sameList(actions, want), `action enum ${JSON.stringify(actions)}`);
    return JSON.stringify(actions);
  });
}

{
  const url = options.rateLimitServer;
  const calls = [];
  await check("11 rate limit: two tokens of billing-writer share one budget of 5 calls", async () => {
    const [a, b] = [await token("writer", url), await token("writer", url)];
    expect(a !== b, "the provider issued the same token twice");
    const [sa, sb] = [await session(url, a), await session(url, b)];
    for (const [name, s] of [["A", sa], ["A", sa], ["A", sa], ["B", sb], ["B", sb]]) {
      calls.push(`${name} ${await listInvoices(s)}`);
    }
    for (const [name, s] of [["A", sa], ["B", sb]]) {
      const result = await s.call({ action: "list_invoices" });
      const text = resultText(result);
      expect(result.isError === true && text.includes("RATE_LIMITED"), `call 6 with ${name}: ${clip(result)}`);
      calls.push(`${name} RATE_LIMITED`);
    }
    await sa.close();
    await sb.close();
    return calls.join(", ");
  });
  await check("11 rate limit: billing-other has a budget of its own", async () => {
    const s = await session(url, await token("other", url));
    const listed = await listInvoices(s);
    await s.close();
    return listed;
  });
}

{
  const url = options.introspectionServer;
  await check("12 introspection: billing-opaque's opaque token is served", async () => {
    const opaque = await token("opaque", url);
    expect(opaque.split(".").length !== 3, `the fixture's token is a JWT: ${clip(opaque)}`);
    const s = await session(url, opaque);
    const listed = await listInvoices(s);
    await s.close();
    return `token ${opaque.slice(0, 6)}… (${opaque.length} chars): ${listed}`;
  });
  await check("12 introspection: a made-up opaque token is 401 invalid_token", () =>
    expectInvalidToken(url, "madeUpOpaqueToken0123456789abcdefghijklmnop"),
  );
}

// Last: a server takes a new kid only once its refetch interval has passed since it last read
// the JWKS (30 s for billing-server), so a rotation earlier would hold up the checks of the
// other servers, which know only the first key.
await check("9 key rotation: a token signed with a new kid is served by the running server", async () => {
  const { response, body } = await getJson(`${options.issuer}/__rotate`, { method: "POST" });
  expect(response.ok && body.kid, `POST /__rotate: HTTP ${response.status} ${clip(body)}`);
  const jwt = await token("writer", resource);
  const { kid } = decodeJwt(jwt).header;
  expect(kid === body.kid && kid !== decodeJwt(writerToken).header.kid, `the new token's kid is ${kid}, rotated to ${body.kid}`);
  // A server may refetch the JWKS at most so often: the new kid is given a minute to be taken.
  const start = Date.now();
  let s;
  for (;;) {
    try {
      s = await session(server, jwt);
      break;
    } catch (error) {
      if (Date.now() - start > ROTATION_LIMIT_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const listed = await listInvoices(s);
  await s.close();
  return `new kid ${kid}, taken after ${((Date.now() - start) / 1000).toFixed(1)} s: ${listed}`;
});

await check("9 key rotation: a token of the previous key, still published, is still served", async () => {
  const s = await session(server, writerToken);
  const actions = actionEnum(await s.request("tools/list", {}));
  await s.close();
  return `kid ${decodeJwt(writerToken).header.kid}: ${actions?.length} actions listed`;
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
