#!/usr/bin/env node
// Whether the pinned TypeScript SDK v1 (`@modelcontextprotocol/sdk`) can run the void
// confirmation of ../confirmation.json, which needs MCP 2026-07-28 and its multi round-trip
// requests (SEP-2322). It cannot yet: this records why, from the installed package itself (its
// SUPPORTED_PROTOCOL_VERSIONS, and no `inputResponses` anywhere in its dist), and exits 0. Should
// a new pin know 2026-07-28 or carry `inputResponses`, it exits 1 instead, so that the check is
// written for it (see ../ts2/confirm.mjs) rather than the old verdict kept. It also connects to
// the server at --url, which offers 2026-07-28, and records the version the SDK settles on.
//
//   node confirm.mjs [--out RESULT.json] [--label TRANSPORT] --url http://127.0.0.1:PORT/mcp

import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { CONFIRMATION } from "../lib/confirmation.mjs";
import { failedCheck, finish } from "../lib/scenario.mjs";
import { parseArgs, usage } from "../lib/args.mjs";

const PACKAGE = "@modelcontextprotocol/sdk";
const ROOT = new URL(`./node_modules/${PACKAGE}/`, import.meta.url);
const VERSION = JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")).version;

const options = parseArgs(process.argv.slice(2));
if (!options.url) usage("the confirmation runs over Streamable HTTP: give --url");
const want = CONFIRMATION.protocol_version;

/** The files under dist/esm holding `needle`, relative to the package. */
function filesWith(needle) {
  const dir = new URL("dist/esm/", ROOT);
  return readdirSync(dir, { recursive: true })
    .filter((file) => /\.(m?js)$/.test(file) && readFileSync(new URL(file, dir), "utf8").includes(needle))
    .map((file) => `dist/esm/${file}`);
}

const knows = SUPPORTED_PROTOCOL_VERSIONS.includes(want);
const mrtr = filesWith("inputResponses");
const run = {
  client: "typescript-sdk",
  client_package: PACKAGE,
  client_version: VERSION,
  transport: options.label ?? "streamable-http",
  protocol_version: null,
  server: null,
  supported: false,
  reason: null,
  checks: [],
};
console.log(`${PACKAGE} ${VERSION}: can it run the void confirmation on ${want}?`);
if (!knows && mrtr.length === 0) {
  run.reason =
    `its \`SUPPORTED_PROTOCOL_VERSIONS\` are ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}, without ${want}, ` +
    "and its dist has no `inputResponses`, so it cannot answer an `input_required` result (MRTR, SEP-2322)";
  run.checks.push({ name: "mrtr_support_recorded", passed: true });
  console.log(`  no: ${run.reason}`);
} else {
  run.checks.push({
    name: "mrtr_support_recorded",
    passed: false,
    problems: [
      `${PACKAGE} ${VERSION} ${knows ? `lists ${want}` : `does not list ${want}`}` +
        `${mrtr.length ? ` and has \`inputResponses\` in ${mrtr.join(", ")}` : ""}: ` +
        "it may support the confirmation now; write the check for it (as ../ts2/confirm.mjs does) instead of recording it unsupported",
    ],
  });
}

// What it negotiates with this server, which offers 2026-07-28 too.
const transport = new StreamableHTTPClientTransport(new URL(options.url));
const setProtocolVersion = transport.setProtocolVersion.bind(transport);
transport.setProtocolVersion = (version) => {
  run.protocol_version = version;
  setProtocolVersion(version);
};
const client = new Client({ name: "mcp-fusion-interop-ts", version: VERSION });
try {
  await client.connect(transport);
  run.server = client.getServerVersion() ?? null;
  console.log(`  negotiated protocol ${run.protocol_version} with ${run.server?.name} ${run.server?.version}`);
  if (transport.sessionId) await transport.terminateSession().catch(() => {});
} catch (error) {
  run.checks.push(failedCheck("connect", error));
} finally {
  await client.close().catch(() => {});
}
finish(options.out, run);
