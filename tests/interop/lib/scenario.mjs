// The interop scenario for JavaScript clients (the TypeScript SDK and the Inspector CLI): loads
// tests/interop/scenario.json, checks what a client saw against it, and writes the run's result
// file. tests/interop/python/client.py implements the same checks for the Python SDK.

import { readFileSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

export const SCENARIO = JSON.parse(readFileSync(new URL("../scenario.json", import.meta.url), "utf8"));

/** A value as one line, for problem reports. */
const show = (value) => (value === undefined ? "(absent)" : JSON.stringify(value));

/** Problems of `actual` against the keys `expected` lists (a subset match). */
function subsetProblems(what, actual, expected) {
  if (actual === null || typeof actual !== "object" || Array.isArray(actual)) {
    return [`${what}: expected an object with ${show(expected)}, got ${show(actual)}`];
  }
  return Object.entries(expected)
    .filter(([key, value]) => !isDeepStrictEqual(actual[key], value))
    .map(([key, value]) => `${what}.${key}: expected ${show(value)}, got ${show(actual[key])}`);
}

/** Checks a tools/list result (`{tools: [...]}` as on the wire). */
export function checkToolsList(result) {
  const spec = SCENARIO.tools_list;
  const problems = [];
  const tools = Array.isArray(result?.tools) ? result.tools : [];
  const names = tools.map((tool) => tool.name);
  if (!isDeepStrictEqual(names, spec.tool_names)) {
    problems.push(`tool names: expected ${show(spec.tool_names)}, got ${show(names)}`);
  }
  const billing = tools.find((tool) => tool.name === spec.tool_names[0]);
  const actionEnum = billing?.inputSchema?.properties?.action?.enum;
  if (!isDeepStrictEqual(actionEnum, spec.action_enum)) {
    problems.push(`inputSchema.properties.action.enum: expected ${show(spec.action_enum)}, got ${show(actionEnum)}`);
  }
  return outcome(spec.name, problems, { tools: names, action_enum: actionEnum });
}

/** Checks a tools/call result (`{content, isError, structuredContent}` as on the wire). */
export function checkCall(spec, result) {
  const expect = spec.expect;
  const problems = [];
  const isError = result?.isError ?? false;
  if (isError !== expect.isError) problems.push(`isError: expected ${expect.isError}, got ${show(result?.isError)}`);
  const content = Array.isArray(result?.content) ? result.content : [];
  if (expect.blockCount !== undefined && content.length !== expect.blockCount) {
    problems.push(`content: expected ${expect.blockCount} block(s), got ${content.length}`);
  }
  if (expect.noStructuredContent && result?.structuredContent != null) {
    problems.push(`structuredContent: expected none on a failed call, got ${show(result.structuredContent)}`);
  }
  if (expect.structuredContent) {
    problems.push(...subsetProblems("structuredContent", result?.structuredContent, expect.structuredContent));
  }
  (expect.blocks ?? []).forEach((want, index) => {
    const block = content[index];
    const where = `content[${index}]`;
    if (block?.type !== "text" || typeof block.text !== "string") {
      problems.push(`${where}: expected a text block, got ${show(block)}`);
      return;
    }
    const text = block.text;
    if (want.startsWith !== undefined && !text.startsWith(want.startsWith)) {
      problems.push(`${where}.text: expected it to start with ${show(want.startsWith)}, got ${show(text)}`);
    }
    for (const part of want.contains ?? []) {
      if (!text.includes(part)) problems.push(`${where}.text: expected it to contain ${show(part)}, got ${show(text)}`);
    }
    if (want.text !== undefined && text !== want.text) {
      problems.push(`${where}.text: expected exactly\n${want.text}\n--- got ---\n${text}`);
    }
    if (want.json !== undefined) {
      let parsed;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        problems.push(`${where}.text: expected JSON, got ${show(text)} (${error.message})`);
        return;
      }
      problems.push(...subsetProblems(`${where}.text`, parsed, want.json));
    }
  });
  return outcome(spec.name, problems, result);
}

function outcome(name, problems, saw) {
  return problems.length === 0 ? { name, passed: true } : { name, passed: false, problems, saw };
}

/** A check for something that threw before a result could be checked. */
export function failedCheck(name, error) {
  return { name, passed: false, problems: [`${error?.stack ?? error}`] };
}

/** Prints one line per check (and, for a failure, its problems and what was seen). */
export function report(check) {
  console.log(`  ${check.passed ? "ok  " : "FAIL"} ${check.name}`);
  if (!check.passed) {
    for (const problem of check.problems) console.log(`       - ${problem.replaceAll("\n", "\n         ")}`);
    if (check.saw !== undefined) console.log(`       saw: ${JSON.stringify(check.saw, null, 2).replaceAll("\n", "\n       ")}`);
  }
}

/** Writes the run's result file: what tests/interop/report.py collects. */
export function writeResult(path, run) {
  const result = { ...run, passed: run.checks.length > 0 && run.checks.every((check) => check.passed) };
  if (path) writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
