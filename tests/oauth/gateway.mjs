#!/usr/bin/env node
// fusion-gateway on both sides of OAuth, against provider.mjs; run.sh starts everything and
// passes the URLs. As a resource server, it takes only tokens the issuer signed for its own
// --oauth-resource; as a client, it gets a token of its own for the billing-server it mounts
// (namespace "billing"), by client_credentials as billing-gateway with that billing-server's
// URL as the resource, since the billing-server takes only tokens for itself.
//
//   node gateway.mjs --issuer URL --gateway URL --upstream URL
//
//   --issuer    the provider both trust (its URL is its issuer)
//   --gateway   fusion-gateway at its /mcp URL, its --oauth-resource
//   --upstream  the billing-server it mounts, at its /mcp URL, its --oauth-resource
//
// Prints `ok - …` or `not ok - …` per check, then `N passed, N failed`; exits 1 if any failed.

import {
  ALL_ACTIONS,
  READ_ACTIONS,
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
  metadataUrlOf,
  post,
  required,
  requestToken,
  resultText,
  sameList,
  session,
  urlOptions,
} from "./lib.mjs";

const options = urlOptions("gateway.mjs", { "--issuer": "issuer", "--gateway": "gateway", "--upstream": "upstream" });
const { gateway, upstream } = options;
// The upstream's grouped tool `billing`, under the mount's namespace.
const TOOL = "billing.billing";

const discovery = await discover(options.issuer);
const token = (client, resource, scope) => requestToken(discovery.token_endpoint, client, resource, scope);

/** A list_invoices call through `tool` that is served: its result. */
async function listInvoices(s, tool) {
  const result = await s.call({ action: "list_invoices" }, tool);
  expect(!result.isError && Array.isArray(result.structuredContent?.invoices), `list_invoices through ${tool}: ${clip(result)}`);
  return result;
}

await check("14 gateway: a request without a token is 401 naming resource_metadata", async () => {
  const r = await post(gateway, undefined, initializeMessage());
  const header = r.headers.get("www-authenticate");
  expect(r.status === 401, `HTTP ${r.status} (wanted 401), ${clip(r.text)}`);
  const challenge = bearerChallenge(header);
  expect(challenge, `no Bearer challenge: WWW-Authenticate ${header}`);
  expect(
    challenge.resource_metadata === metadataUrlOf(gateway),
    `resource_metadata=${challenge.resource_metadata} (wanted ${metadataUrlOf(gateway)}) in ${header}`,
  );
  return header;
});

await check("14 gateway: its resource metadata names the gateway's resource and the issuer", async () => {
  const { response, body } = await getJson(metadataUrlOf(gateway));
  expect(response.status === 200, `GET ${metadataUrlOf(gateway)}: HTTP ${response.status}`);
  expect(body.resource === gateway, `resource ${body.resource} (wanted ${gateway})`);
  expect(
    sameList(body.authorization_servers, [options.issuer]),
    `authorization_servers ${JSON.stringify(body.authorization_servers)} (wanted [${options.issuer}])`,
  );
  expect(body.bearer_methods_supported?.includes("header"), `bearer_methods_supported ${JSON.stringify(body.bearer_methods_supported)}`);
  return clip(body, 400);
});

const writerToken = await required("a token of billing-writer for the gateway", () => token("writer", gateway));
const upstreamToken = await required("a token of billing-writer for the upstream", () => token("writer", upstream));

await check(`14 gateway: billing-writer's token for it is served: tools/list has ${TOOL} with the six actions, and list_invoices through it answers what the billing-server behind does`, async () => {
  const { payload } = decodeJwt(writerToken);
  expect(payload.aud === gateway && payload.iss === options.issuer, `the fixture's token: ${clip(payload)}`);
  const s = await session(gateway, writerToken);
  const server = s.initialized.serverInfo?.name;
  expect(server === "fusion-gateway", `initialize: serverInfo ${clip(s.initialized.serverInfo)}`);
  const tools = await s.request("tools/list", {});
  const names = (tools.tools ?? []).map((t) => t.name);
  const actions = actionEnum(tools, TOOL);
  expect(sameList(actions, ALL_ACTIONS), `${TOOL}'s action enum ${JSON.stringify(actions)}`);
  const through = resultText(await listInvoices(s, TOOL));
  await s.close();
  // The same call made to the billing-server itself: nothing changed its invoices in between.
  const direct = await session(upstream, upstreamToken);
  const behind = resultText(await listInvoices(direct, "billing"));
  await direct.close();
  expect(through === behind, `through the gateway ${clip(through)}; from the billing-server ${clip(behind)}`);
  const count = JSON.parse(through).invoices.length;
  return `${server} lists ${JSON.stringify(names)}, actions ${JSON.stringify(actions)}; list_invoices: ${count} invoices, the same ${through.length} characters as the billing-server's own answer`;
});

await check("14 upstream: that token, for the gateway, is 401 invalid_token at the billing-server behind it, so the gateway called it with a token of its own", () =>
  expectInvalidToken(upstream, writerToken),
);

await check("14 gateway: a token for the billing-server behind it (not the gateway's resource) is 401 invalid_token", async () => {
  expect(decodeJwt(upstreamToken).payload.aud === upstream, `the fixture's token has aud ${decodeJwt(upstreamToken).payload.aud}`);
  return expectInvalidToken(gateway, upstreamToken);
});

await check(
  `14 gateway: billing-reader's billing:read token still sees ${TOOL} with all six actions and is served list_invoices, which the billing-server itself lists it only ${JSON.stringify(READ_ACTIONS)} of: the gateway lists what its own token (billing:read billing:write) allows, and asks its callers no scope for a mounted tool`,
  async () => {
    const readerToken = await token("reader", gateway, "billing:read");
    expect(decodeJwt(readerToken).payload.scope === "billing:read", `the fixture's token: ${clip(decodeJwt(readerToken).payload)}`);
    const s = await session(gateway, readerToken);
    const actions = actionEnum(await s.request("tools/list", {}), TOOL);
    expect(sameList(actions, ALL_ACTIONS), `${TOOL}'s action enum ${JSON.stringify(actions)}`);
    const listed = (await listInvoices(s, TOOL)).structuredContent.invoices.length;
    await s.close();
    // The same client and scope at the billing-server itself: its scope filter.
    const direct = await session(upstream, await token("reader", upstream, "billing:read"));
    const own = actionEnum(await direct.request("tools/list", {}));
    await direct.close();
    expect(sameList(own, READ_ACTIONS), `the billing-server itself lists billing-reader ${JSON.stringify(own)}`);
    return `through the gateway ${JSON.stringify(actions)}, list_invoices ${listed} invoices; from the billing-server itself ${JSON.stringify(own)}`;
  },
);

finish();
