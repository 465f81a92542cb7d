#!/usr/bin/env node
// The official TypeScript MCP SDK (@modelcontextprotocol/sdk) as an OAuth client of
// billing-server: it starts with no token and must find its own way to one (the 401's
// resource_metadata, the protected resource metadata, the authorization server's metadata, the
// client_credentials grant of billing-sdk with the RFC 8707 resource), then be served.
//
//   node sdk-client.mjs --url http://127.0.0.1:PORT/mcp --issuer URL
//
// --issuer is the authorization server billing-sdk's credentials belong to: the SDK sends them
// nowhere else. Prints `ok - …` or `not ok - …` per check, then `N passed, N failed`; exits 1
// if any failed.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ClientCredentialsProvider } from "@modelcontextprotocol/sdk/client/auth-extensions.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ALL_ACTIONS } from "./lib.mjs";

const PACKAGE = "@modelcontextprotocol/sdk";
const VERSION = JSON.parse(
  readFileSync(new URL(`./node_modules/${PACKAGE}/package.json`, import.meta.url), "utf8"),
).version;
const SCOPE = "billing:read billing:write";

function usage(message) {
  console.error(`sdk-client.mjs: ${message}`);
  console.error("usage: node sdk-client.mjs --url http://127.0.0.1:PORT/mcp --issuer URL");
  process.exit(2);
}

const options = {};
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) {
    if (!["--url", "--issuer"].includes(argv[i])) usage(`unknown argument ${JSON.stringify(argv[i])}`);
    if (i + 1 >= argv.length || !URL.canParse(argv[i + 1])) usage(`${argv[i]} needs a URL`);
    options[argv[i].slice(2)] = argv[i + 1];
  }
  if (!options.url || !options.issuer) usage("give both --url and --issuer");
}
const serverUrl = options.url;

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

// Everything the SDK sends goes through this fetch (the transport hands it to its auth flow
// too), so the checks can say which requests it made, not only that it got through.
const exchanges = [];
async function recordingFetch(input, init = {}) {
  const url = String(input instanceof Request ? input.url : input);
  const method = init.method ?? (input instanceof Request ? input.method : "GET");
  const headers = new Headers(init.headers);
  const body = init.body instanceof URLSearchParams ? new URLSearchParams(init.body) : undefined;
  const response = await fetch(input, init);
  exchanges.push({
    method,
    url,
    status: response.status,
    authorization: headers.get("authorization")?.split(" ")[0],
    wwwAuthenticate: response.headers.get("www-authenticate"),
    form: body,
  });
  return response;
}

console.log(`${PACKAGE} ${VERSION}, client_credentials as billing-sdk, against ${serverUrl}`);
const authProvider = new ClientCredentialsProvider({
  clientId: "billing-sdk",
  clientSecret: "sdk-secret",
  expectedIssuer: options.issuer,
  scope: SCOPE,
  clientName: "mcp-fusion-oauth-sdk",
});
const transport = new StreamableHTTPClientTransport(new URL(serverUrl), { authProvider, fetch: recordingFetch });
const client = new Client({ name: "mcp-fusion-oauth-sdk", version: VERSION });

let connected = false;
await check("the SDK connects with no token given: it authorizes itself", async () => {
  await client.connect(transport);
  connected = true;
  return `${client.getServerVersion()?.name} ${client.getServerVersion()?.version}, session ${transport.sessionId}`;
});

const metadataUrl = `${new URL(serverUrl).origin}/.well-known/oauth-protected-resource${new URL(serverUrl).pathname}`;

await check("the first request was refused 401 with resource_metadata, unauthenticated", async () => {
  const first = exchanges[0];
  expect(first && first.url === serverUrl && first.method === "POST", `first request: ${clip(first)}`);
  expect(first.status === 401 && !first.authorization, `first request: HTTP ${first.status}, authorization ${first.authorization}`);
  expect(first.wwwAuthenticate?.includes(`resource_metadata="${metadataUrl}"`), `WWW-Authenticate ${first.wwwAuthenticate}`);
  return first.wwwAuthenticate;
});

await check("the SDK read the protected resource metadata, then the authorization server's", async () => {
  const prm = exchanges.find((e) => e.url === metadataUrl);
  expect(prm?.status === 200, `GET ${metadataUrl}: ${clip(prm ?? "never requested")}`);
  const as = exchanges.filter((e) => e.url.startsWith(`${options.issuer}/.well-known/`));
  expect(as.some((e) => e.status === 200), `authorization server metadata: ${clip(as)}`);
  return as.map((e) => `${new URL(e.url).pathname} ${e.status}`).join(", ");
});

await check("its token request is client_credentials with resource = the server's resource (RFC 8707)", async () => {
  const tokenRequests = exchanges.filter((e) => e.form?.get("grant_type"));
  expect(tokenRequests.length === 1, `${tokenRequests.length} token requests: ${clip(tokenRequests)}`);
  const [{ form, status, url, authorization }] = tokenRequests;
  expect(status === 200, `POST ${url}: HTTP ${status}`);
  expect(form.get("grant_type") === "client_credentials", `grant_type ${form.get("grant_type")}`);
  expect(form.get("resource") === serverUrl, `resource ${form.get("resource")} (wanted ${serverUrl})`);
  const scopes = (form.get("scope") ?? "").split(" ").sort().join(" ");
  expect(scopes === SCOPE, `scope ${form.get("scope")}`);
  // The secret itself is not printed; only how it was sent.
  return `POST ${url} grant_type=client_credentials resource=${form.get("resource")} scope="${form.get("scope")}", client auth ${authorization ?? (form.has("client_secret") ? "client_secret_post" : "none")}`;
});

await check("the MCP requests after that carry the bearer token", async () => {
  const later = exchanges.filter((e) => e.url === serverUrl).slice(1);
  expect(later.length && later.every((e) => e.authorization === "Bearer"), clip(later));
  // A standalone GET stream may be declined (405) by a server that pushes nothing unasked.
  const posts = later.filter((e) => e.method === "POST");
  expect(posts.every((e) => e.status < 300), clip(posts));
  return `${later.length} requests, all with a Bearer token, ${posts.length} POSTs served`;
});

if (connected) {
  await check("tools/list: the action enum names all six actions", async () => {
    const { tools } = await client.listTools();
    const actions = tools.find((t) => t.name === "billing")?.inputSchema?.properties?.action?.enum;
    expect(JSON.stringify(actions) === JSON.stringify(ALL_ACTIONS), `action enum ${JSON.stringify(actions)}`);
    return JSON.stringify(actions);
  });
  await check("tools/call list_invoices is served", async () => {
    const result = await client.callTool({ name: "billing", arguments: { action: "list_invoices" } });
    expect(!result.isError && Array.isArray(result.structuredContent?.invoices), clip(result));
    return `${result.structuredContent.invoices.length} invoices`;
  });
  await transport.terminateSession().catch((error) => console.log(`  (DELETE of the session failed: ${error.message})`));
}
await client.close().catch(() => {});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
