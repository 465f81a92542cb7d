#!/usr/bin/env node
// The official TypeScript MCP SDK (`@modelcontextprotocol/sdk`) driving billing-server through
// the interop scenario (../scenario.json). Exits 1 on any mismatch, printing what it saw.
//
//   node client.mjs [--out RESULT.json] [--label TRANSPORT] --url http://127.0.0.1:PORT/mcp
//   node client.mjs [--out RESULT.json] [--label TRANSPORT] --stdio COMMAND [ARG...]
//
// `--stdio` takes the rest of the command line as the server's command and arguments; a single
// word holding spaces is split on whitespace ("billing-server --db x.db").

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { checkCall, checkCompletion, checkPrompt, checkResource, checkToolsList, failedCheck, finish, SCENARIO } from "../lib/scenario.mjs";
import { parseArgs } from "../lib/args.mjs";

const PACKAGE = "@modelcontextprotocol/sdk";
const VERSION = JSON.parse(
  readFileSync(new URL(`./node_modules/${PACKAGE}/package.json`, import.meta.url), "utf8"),
).version;


const options = parseArgs(process.argv.slice(2));
let transport;
if (options.url) {
  transport = new StreamableHTTPClientTransport(new URL(options.url));
} else {
  const [command, ...args] = options.stdio;
  transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "warn" },
    stderr: "inherit",
  });
}
// The SDK hands the negotiated version to transports that want it (the HTTP one sends it as
// MCP-Protocol-Version); record it on the way, for either transport.
let protocolVersion = null;
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
  protocolVersion = version;
  setProtocolVersion?.(version);
};

const run = {
  client: "typescript-sdk",
  client_package: PACKAGE,
  client_version: VERSION,
  transport: options.label ?? (options.url ? "streamable-http" : "stdio"),
  protocol_version: null,
  server: null,
  checks: [],
};
console.log(`${PACKAGE} ${VERSION} over ${run.transport}`);

const client = new Client({ name: "mcp-fusion-interop-ts", version: VERSION });
try {
  await client.connect(transport);
  run.protocol_version = protocolVersion;
  run.server = client.getServerVersion() ?? null;
  console.log(`  negotiated protocol ${protocolVersion} with ${run.server?.name} ${run.server?.version}`);
  try {
    run.checks.push(checkToolsList(await client.listTools()));
  } catch (error) {
    run.checks.push(failedCheck(SCENARIO.tools_list.name, error));
  }
  for (const spec of SCENARIO.calls) {
    try {
      run.checks.push(checkCall(spec, await client.callTool({ name: "billing", arguments: spec.arguments })));
    } catch (error) {
      run.checks.push(failedCheck(spec.name, error));
    }
  }
  const { resource, prompt, completion } = SCENARIO.surface;
  const surface = [
    [resource.name, async () => checkResource(await client.readResource({ uri: resource.uri }))],
    [prompt.name, async () => checkPrompt(await client.getPrompt({ name: prompt.prompt, arguments: prompt.arguments }))],
    [
      completion.name,
      async () =>
        checkCompletion(
          await client.complete({
            ref: { type: "ref/prompt", name: completion.prompt },
            argument: { name: completion.argument, value: completion.value },
          }),
        ),
    ],
  ];
  for (const [name, check] of surface) {
    try {
      run.checks.push(await check());
    } catch (error) {
      run.checks.push(failedCheck(name, error));
    }
  }
} catch (error) {
  run.checks.push(failedCheck("initialize", error));
} finally {
  if (options.url && transport.sessionId) {
    await transport.terminateSession().catch((error) => console.log(`  (DELETE of the session failed: ${error.message})`));
  }
  await client.close().catch(() => {});
}
finish(options.out, run);
