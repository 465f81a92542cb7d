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
// The reporting and MCP-over-HTTP helpers are lib.mjs's, shared with gateway.mjs.

import { createHmac, createPublicKey, generateKeyPairSync, sign as rsaSign } from "node:crypto";
import {
  ALL_ACTIONS,
  READ_ACTIONS,
  BOTH_SCOPES,
  actionEnum,
  bearerChallenge,
  check,
  clip,
  decodeJwt,
  discover,
  expect,
  expectInvalidToken,
  finish,
  getJson,
  initializeMessage,
  listInvoices,
  metadataUrlOf,
  post,
  required,
  requestToken,
  resultText,
  sameList,
  session,
  urlOptions,
} from "./lib.mjs";

const options = urlOptions("oauth.mjs", {
  "--issuer": "issuer",
  "--wrong-issuer": "wrongIssuer",
  "--expired-issuer": "expiredIssuer",
  "--server": "server",
  "--in-band-server": "inBandServer",
  "--rate-limit-server": "rateLimitServer",
  "--introspection-server": "introspectionServer",
});

const NEW_INVOICE = {
  action: "create_invoice",
  customer_email: "ops@example.com",
  amount_cents: 1250,
  currency: "EUR",
};
const ROTATION_LIMIT_MS = 60_000;

const discovery = await discover(options.issuer);

/**
 * A client_credentials token for `resource` from the provider at `provider` (the main one by
 * default); the replicas are asked at their own address, whatever issuer they claim.
 */
function token(client, resource, { scope = BOTH_SCOPES, provider = options.issuer } = {}) {
  const endpoint = provider === options.issuer ? discovery.token_endpoint : `${provider}/token`;
  return requestToken(endpoint, client, resource, scope);
}

function b64url(data) {
  return Buffer.from(data).toString("base64url");
}

const now = () => Math.floor(Date.now() / 1000);

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

finish();
