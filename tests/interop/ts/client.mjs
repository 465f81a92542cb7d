#!/usr/bin/env node
// The official TypeScript MCP SDK (`@modelcontextprotocol/sdk`) driving billing-server through
// the interop scenario (../scenario.json), then through the experimental tasks of MCP 2025-11-25
// (../tasks.json) with the SDK's own `client.experimental.tasks`. Exits 1 on any mismatch,
// printing what it saw.
//
//   node client.mjs [--out RESULT.json] [--label TRANSPORT] [--cancel-url URL] --url http://127.0.0.1:PORT/mcp
//   node client.mjs [--out RESULT.json] [--label TRANSPORT] [--cancel-stdio COMMAND [ARG...]] --stdio COMMAND [ARG...]
//
// `--stdio` takes the rest of the command line as the server's command and arguments (up to a
// `--cancel-stdio`, which does the same for its server); a single word holding spaces is split
// on whitespace ("billing-server --db x.db"). Where the server offers the experimental form (its
// `capabilities.tasks`), the export cancelled by `task_cancel` goes to the server of
// `--cancel-url` or `--cancel-stdio`, one whose exports take longer than the run, so that it
// cannot end before the cancel reaches it; where it does not, the plain-call checks of
// tasks.json's `stateless` run instead.

import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { checkCall, checkCompletion, checkPrompt, checkResource, checkToolsList, failedCheck, finish, SCENARIO } from "../lib/scenario.mjs";
import { parseArgs } from "../lib/args.mjs";
import { checkCancel, checkExport, checkListed, checkNotOffered, checkOffered, checkPlainExport, shape, TASKS } from "../lib/tasks.mjs";

const PACKAGE = "@modelcontextprotocol/sdk";
const VERSION = JSON.parse(
  readFileSync(new URL(`./node_modules/${PACKAGE}/package.json`, import.meta.url), "utf8"),
).version;


const options = parseArgs(process.argv.slice(2), { cancel: true });

/** A transport to the server at `url`, or to the one `stdio` starts. */
function connectTo({ url, stdio }) {
  if (url) return new StreamableHTTPClientTransport(new URL(url));
  const [command, ...args] = stdio;
  return new StdioClientTransport({
    command,
    args,
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? "warn" },
    stderr: "inherit",
  });
}

/** Ends a client's session: DELETE of the HTTP session, if there is one, then close. */
async function end(client, transport) {
  if (transport.sessionId) {
    await transport.terminateSession().catch((error) => console.log(`  (DELETE of the session failed: ${error.message})`));
  }
  await client.close().catch(() => {});
}

const transport = connectTo(options);
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

/** Everything `callToolStream` yields for the export on `on`, up to the message `until` accepts. */
async function exportStream(on, until = () => false) {
  const messages = [];
  for await (const message of on.experimental.tasks.callToolStream(TASKS.call)) {
    messages.push(message);
    if (until(message)) break;
  }
  return messages;
}

/** Runs `check` (async, returning a check) into the run: a throw is that check failed. */
async function attempt(name, check) {
  try {
    run.checks.push(await check());
  } catch (error) {
    run.checks.push(failedCheck(name, error));
  }
}

/**
 * The second export of `task_cancel`, on the server of --cancel-url or --cancel-stdio: started
 * with callToolStream, read up to its taskCreated, then cancelled and read again.
 */
async function cancelledExport() {
  const where = options.cancelUrl ? { url: options.cancelUrl } : options.cancelStdio ? { stdio: options.cancelStdio } : null;
  if (!where) throw new Error("no server for the cancel check: give --cancel-url or --cancel-stdio");
  const other = new Client({ name: "mcp-fusion-interop-ts", version: VERSION });
  const otherTransport = connectTo(where);
  try {
    await other.connect(otherTransport);
    // Its exports take longer than the run: called plainly, this one would not end in time.
    const offered = checkOffered(other.getServerCapabilities(), await other.listTools());
    if (!offered.passed) throw new Error(`the cancel check's server: ${offered.problems.join("; ")}`);
    const [created] = await exportStream(other, (message) => message.type === "taskCreated");
    if (created?.type !== "taskCreated") return checkCancel(created, undefined, undefined);
    const cancelled = await other.experimental.tasks.cancelTask(created.task.taskId);
    const read = await other.experimental.tasks.getTask(created.task.taskId);
    run.tasks.cancel = read?.status ?? null;
    return checkCancel(created, cancelled, read);
  } finally {
    await end(other, otherTransport);
  }
}

/** The checks of tasks.json: `session` where the server offers the experimental form, else `stateless`. */
async function tasks() {
  const capabilities = client.getServerCapabilities();
  const offered = capabilities?.tasks !== undefined;
  run.tasks = { offered, export: null, cancel: null };
  console.log(`  tasks: ${offered ? "offered (capabilities.tasks)" : "not offered"}`);
  if (!offered) {
    run.checks.push(checkNotOffered(capabilities));
    await attempt("plain_export", async () => {
      const messages = await exportStream(client);
      run.tasks.export = shape(messages);
      return checkPlainExport(messages);
    });
    return;
  }
  // tools/list again here: the SDK asks for a task only for a tool it saw marked so there.
  await attempt("tasks_offered", async () => checkOffered(capabilities, await client.listTools()));
  let id;
  await attempt("task_export", async () => {
    const messages = await exportStream(client);
    id = messages[0]?.task?.taskId;
    run.tasks.export = shape(messages);
    return checkExport(messages);
  });
  await attempt("tasks_list", async () => checkListed(await client.experimental.tasks.listTasks(), id));
  await attempt("task_cancel", cancelledExport);
}

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
  await tasks();
} catch (error) {
  run.checks.push(failedCheck("initialize", error));
} finally {
  await end(client, transport);
}
finish(options.out, run);
