#!/usr/bin/env node
// A real OpenID provider (oidc-provider) for the OAuth tests of billing-server (run.sh): the
// client_credentials grant with RFC 8707 resource indicators, RS256 JWT access tokens (RFC 9068)
// and, for one client, opaque tokens to introspect (RFC 7662).
//
//   node provider.mjs [--port N] [--issuer URL] [--keys FILE] [--clock-offset SECS]
//
// Prints `oidc-provider: listening on http://127.0.0.1:PORT` on stdout once it serves, and
// nothing else there; logs go to stderr.
//   --port N            0 (the default) takes a free port
//   --issuer URL        the `iss` of its tokens and discovery; its own URL when omitted. With
//                       another provider's URL and the same --keys, its tokens are that
//                       provider's in all but being issued here (a replica); with an unrelated
//                       one, they are well signed but from the wrong issuer.
//   --keys FILE         the private JWKS ({"keys": [...]}) it signs with, shared by every
//                       process given the same file; created with one RSA key when missing
//   --clock-offset SECS its clock runs that far off (-7200: two hours behind), so what it
//                       issues has already expired by the real clock
//
// POST /__rotate (loopback callers only) signs with a fresh RSA key from then on, still
// publishing the previous ones in the JWKS, rewrites --keys and answers {"kid": NEW_KID}.
//
// Clients (client_secret_basic or client_secret_post, client_credentials only):
//   billing-reader/reader-secret            billing:read
//   billing-writer/writer-secret            billing:read billing:write
//   billing-other/other-secret              billing:read billing:write (another caller)
//   billing-opaque/opaque-secret            billing:read billing:write, opaque access tokens
//   billing-introspector/introspector-secret no scope; may introspect any client's tokens
//   billing-sdk/sdk-secret                  billing:read billing:write
//   billing-gateway/gateway-secret          billing:read billing:write (fusion-gateway's own,
//                                           for the billing-server it mounts)
// A token request must name its resource: http://127.0.0.1:PORT/mcp, http://localhost:PORT/mcp
// or http://127.0.0.1:PORT/other (the wrong-audience case). Without `resource` the token
// endpoint answers 400 invalid_target instead of issuing a token with no audience. Asking for a
// scope the client may not have is 400 invalid_scope.
//
// A JWT access token (header typ "at+jwt", alg RS256, kid) carries iss, sub (= client_id),
// client_id, aud (the resource, one string), scope (space-separated; absent when none was
// asked for), iat, exp (an hour on) and jti. Introspection (introspection_endpoint in the
// discovery document, /token/introspection) answers for an opaque token active, client_id, iss,
// aud, scope, iat, exp and token_type, and no sub; for anything else {"active": false}. JWTs are
// refused there (unsupported_token_type): they are checked against the JWKS instead.

import { randomUUID, generateKeyPairSync } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

function usage(message) {
  console.error(`provider.mjs: ${message}`);
  console.error("usage: node provider.mjs [--port N] [--issuer URL] [--keys FILE] [--clock-offset SECS]");
  process.exit(2);
}

// By hand rather than util.parseArgs, which refuses a value starting with "-" (--clock-offset -7200).
const FLAGS = ["--port", "--issuer", "--keys", "--clock-offset"];
const options = { port: "0", "clock-offset": "0" };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    let [flag, value] = argv[i].split(/=(.*)/s, 2);
    if (!FLAGS.includes(flag)) usage(`unknown argument ${JSON.stringify(argv[i])}`);
    if (value === undefined) {
      if (i + 1 >= argv.length) usage(`${flag} needs a value`);
      value = argv[++i];
    }
    options[flag.slice(2)] = value;
  }
}
const port = Number(options.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`--port ${options.port}: not a port`);
const clockOffset = Number(options["clock-offset"]);
if (!Number.isInteger(clockOffset)) usage(`--clock-offset ${options["clock-offset"]}: not a whole number of seconds`);
if (options.issuer !== undefined && !URL.canParse(options.issuer)) usage(`--issuer ${options.issuer}: not a URL`);

// oidc-provider reads the time through Date.now (epochTime), so shifting it before the module
// is loaded moves every iat and exp it writes.
if (clockOffset !== 0) {
  const realNow = Date.now;
  Date.now = () => realNow() + clockOffset * 1000;
}

// oidc-provider prints its notices with console.info, that is on stdout, which the scripts
// read for the listening line alone.
console.log = console.error;
console.info = console.error;

const { default: Provider, errors } = await import("oidc-provider");

const SCOPES = ["billing:read", "billing:write"];
const CLIENTS = {
  "billing-reader": { secret: "reader-secret", scope: "billing:read" },
  "billing-writer": { secret: "writer-secret", scope: "billing:read billing:write" },
  "billing-other": { secret: "other-secret", scope: "billing:read billing:write" },
  "billing-opaque": { secret: "opaque-secret", scope: "billing:read billing:write", opaque: true },
  "billing-introspector": { secret: "introspector-secret", scope: undefined },
  "billing-sdk": { secret: "sdk-secret", scope: "billing:read billing:write" },
  "billing-gateway": { secret: "gateway-secret", scope: "billing:read billing:write" },
};
const INTROSPECTOR = "billing-introspector";
const RESOURCE = /^http:\/\/(?:127\.0\.0\.1:\d{1,5}\/(?:mcp|other)|localhost:\d{1,5}\/mcp)$/;

function newSigningKey() {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { ...privateKey.export({ format: "jwk" }), kid: randomUUID(), alg: "RS256", use: "sig" };
}

// Written whole then renamed, so a provider starting alongside never reads half a file.
function saveKeys(keys) {
  if (!options.keys) return;
  const partial = `${options.keys}.${process.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify({ keys }, null, 2)}\n`, { mode: 0o600 });
  renameSync(partial, options.keys);
}

let keys;
if (options.keys && existsSync(options.keys)) {
  ({ keys } = JSON.parse(readFileSync(options.keys, "utf8")));
  if (!Array.isArray(keys) || keys.length === 0) usage(`--keys ${options.keys}: no "keys" array`);
  console.error(`oidc-provider: signing keys from ${options.keys}: ${keys.map((k) => k.kid).join(", ")}`);
} else {
  keys = [newSigningKey()];
  saveKeys(keys);
  console.error(`oidc-provider: new signing key ${keys[0].kid}${options.keys ? ` written to ${options.keys}` : ""}`);
}

function configuration() {
  return {
    clients: Object.entries(CLIENTS).map(([id, client]) => ({
      client_id: id,
      client_secret: client.secret,
      grant_types: ["client_credentials"],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: "client_secret_basic",
      ...(client.scope ? { scope: client.scope } : {}),
    })),
    // The first key that fits is the signing key: a rotation puts the new one first.
    jwks: { keys },
    // Statics, so that validateClientScope refuses a scope the client's `scope` lacks.
    scopes: ["openid", ...SCOPES],
    claims: { openid: ["sub"] },
    ttl: { ClientCredentials: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? 3600 },
    // No extraTokenClaims: a JWT access token already has sub = client_id, and the
    // introspection answer for an opaque one has client_id and no sub, as oidc-provider gives
    // them out of the box; the resource server is tested against that, not a tidier variant.
    clientBasedCORS: () => false,
    cookies: { keys: ["mcp-fusion-oauth-tests"] },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: {
        enabled: true,
        // The resource server introspects tokens issued to other clients.
        allowedPolicy: async (_ctx, caller, token) => caller.clientId === INTROSPECTOR || caller.clientId === token.clientId,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => {
          throw new errors.InvalidTarget("a resource indicator (RFC 8707 `resource`) is required");
        },
        useGrantedResource: async () => false,
        getResourceServerInfo: async (_ctx, resource, client) => {
          if (!RESOURCE.test(resource)) throw new errors.InvalidTarget(`unknown resource ${resource}`);
          const { opaque } = CLIENTS[client.clientId] ?? {};
          return {
            scope: SCOPES.join(" "),
            audience: resource,
            accessTokenTTL: 3600,
            accessTokenFormat: opaque ? "opaque" : "jwt",
            ...(opaque ? {} : { jwt: { sign: { alg: "RS256" } } }),
          };
        },
      },
    },
  };
}

function build(issuer) {
  const provider = new Provider(issuer, configuration());
  provider.on("server_error", (_ctx, error) => console.error(`oidc-provider: server error: ${error.stack ?? error}`));
  provider.on("grant.error", (ctx, error) =>
    console.error(`oidc-provider: token request of ${ctx.oidc.client?.clientId ?? "?"} refused: ${error.message} ${error.error_description ?? ""}`),
  );
  provider.on("grant.success", (ctx) =>
    console.error(`oidc-provider: token issued to ${ctx.oidc.client?.clientId} for ${ctx.oidc.params.resource ?? "no resource"}`),
  );
  return provider;
}

function loopback(address) {
  return address === "::1" || /^(?:::ffff:)?127\./.test(address ?? "");
}

let handler;
let issuer;
const server = createServer((req, res) => {
  const { pathname } = new URL(req.url, "http://provider.invalid");
  if (pathname !== "/__rotate") return handler(req, res);
  const answer = (status, body) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(`${JSON.stringify(body)}\n`);
  };
  if (!loopback(req.socket.remoteAddress)) return answer(403, { error: "loopback callers only" });
  if (req.method !== "POST") return answer(405, { error: "POST only" });
  // Keys are taken at construction: a new instance, with the same clients, serves from now on;
  // client-credentials grants keep no state that the swap would lose, and the memory adapter
  // (opaque tokens) is one store for the whole process.
  const key = newSigningKey();
  keys = [key, ...keys];
  saveKeys(keys);
  handler = build(issuer).callback();
  console.error(`oidc-provider: rotated: now signing with ${key.kid}, publishing ${keys.length} keys`);
  answer(200, { kid: key.kid });
});
server.on("error", (error) => {
  console.error(`oidc-provider: ${error.message}`);
  process.exit(1);
});
server.listen(port, "127.0.0.1", () => {
  const url = `http://127.0.0.1:${server.address().port}`;
  issuer = options.issuer ?? url;
  handler = build(issuer).callback();
  if (clockOffset !== 0) console.error(`oidc-provider: clock runs ${clockOffset} s off`);
  console.error(`oidc-provider: issuer ${issuer}`);
  process.stdout.write(`oidc-provider: listening on ${url}\n`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => server.close(() => process.exit(0)).closeAllConnections());
}
