#!/usr/bin/env node
// The TypeScript MCP SDK v2 client (`@modelcontextprotocol/client`) through the void
// confirmation of ../confirmation.json on MCP 2026-07-28 over Streamable HTTP. Exits 1 on any
// mismatch, printing what it saw.
//
//   node confirm.mjs [--out RESULT.json] [--label TRANSPORT] --url http://127.0.0.1:PORT/mcp
//
// The client negotiates with `versionNegotiation: { mode: "auto" }` (server/discover, falling
// back to initialize on a 2025 server) and declares elicitation in form mode; its
// elicitation/create handler records each question and answers accept with {"confirm": true}.
// The SDK's own multi round-trip driver (inputRequired.autoFulfill, on by default) turns the
// input_required answer into a call of that handler and a retry: nothing here speaks MRTR. The
// requests it POSTs are recorded through the transport's `fetch` option, to show the retry.

import { readFileSync } from "node:fs";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  checkElicitation,
  checkProtocol,
  checkRounds,
  checkStored,
  checkUnknownTool,
  checkVoid,
  CONFIRMATION,
} from "../lib/confirmation.mjs";
import { failedCheck, finish } from "../lib/scenario.mjs";
import { parseArgs, usage } from "../lib/args.mjs";

const PACKAGE = "@modelcontextprotocol/client";
const VERSION = JSON.parse(
  readFileSync(new URL(`./node_modules/${PACKAGE}/package.json`, import.meta.url), "utf8"),
).version;

const options = parseArgs(process.argv.slice(2));
if (!options.url) usage("the confirmation runs over Streamable HTTP: give --url");

const { call, after } = CONFIRMATION;
const voidCalls = [];
const recordingFetch = async (input, init) => {
  if (init?.method === "POST" && typeof init.body === "string") {
    try {
      const message = JSON.parse(init.body);
      if (message.method === "tools/call" && message.params?.arguments?.action === call.arguments.action) {
        const { name, arguments: args, inputResponses, requestState } = message.params;
        voidCalls.push({ name, arguments: args, inputResponses, requestState });
      }
    } catch {
      // not JSON: not a request to record
    }
  }
  return fetch(input, init);
};
const transport = new StreamableHTTPClientTransport(new URL(options.url), { fetch: recordingFetch });

const run = {
  client: "typescript-sdk-v2",
  client_package: PACKAGE,
  client_version: VERSION,
  transport: options.label ?? "streamable-http",
  protocol_version: null,
  server: null,
  supported: true,
  elicitation: { asked: 0, answered: 0, messages: [] },
  tools_call_rounds: 0,
  checks: [],
};
console.log(`${PACKAGE} ${VERSION} over ${run.transport}: the void confirmation`);

const asked = [];
const client = new Client(
  { name: "mcp-fusion-interop-ts2", version: VERSION },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: "auto" } },
);
client.setRequestHandler("elicitation/create", async (request) => {
  asked.push(request.params);
  run.elicitation.asked += 1;
  run.elicitation.messages.push(request.params.message);
  console.log(`  elicitation asked: ${JSON.stringify(request.params.message)}; answering ${JSON.stringify(call.answer)}`);
  run.elicitation.answered += 1;
  return call.answer;
});
try {
  await client.connect(transport);
  run.protocol_version = client.getNegotiatedProtocolVersion() ?? null;
  run.server = client.getServerVersion() ?? null;
  console.log(`  negotiated protocol ${run.protocol_version} with ${run.server?.name} ${run.server?.version}`);
  run.checks.push(checkProtocol(run.protocol_version));
  try {
    run.checks.push(checkVoid(await client.callTool({ name: "billing", arguments: call.arguments })));
  } catch (error) {
    run.checks.push(failedCheck(call.name, error));
  }
  run.tools_call_rounds = voidCalls.length;
  run.checks.push(checkElicitation(asked));
  run.checks.push(checkRounds(voidCalls));
  try {
    run.checks.push(checkStored(await client.callTool({ name: "billing", arguments: after.arguments })));
  } catch (error) {
    run.checks.push(failedCheck(after.name, error));
  }
  // A tool the server does not have: the SDK throws the server's -32602.
  let unknownResult;
  try {
    unknownResult = await client.callTool({ name: CONFIRMATION.unknown_tool.tool, arguments: {} });
    run.checks.push(checkUnknownTool(undefined, unknownResult));
  } catch (error) {
    console.log(`  unknown tool: thrown ${error?.constructor?.name}: ${error?.message}`);
    run.checks.push(checkUnknownTool(error, unknownResult));
  }
} catch (error) {
  run.checks.push(failedCheck("connect", error));
} finally {
  await client.close().catch(() => {});
}
finish(options.out, run);
