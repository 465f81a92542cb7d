// The interop scenario for JavaScript clients (the TypeScript SDK and the Inspector CLI): loads
// tests/interop/scenario.json, checks what a client saw against it (tools, then the resource, the
// prompt and the completion of `surface`), and writes the run's result file. tests/interop/python/client.py implements the same checks for the Python SDK.

import { readFileSync, writeFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";

export const SCENARIO = JSON.parse(readFileSync(new URL("../scenario.json", import.meta.url), "utf8"));

/** A value as one line, for problem reports. */
export const show = (value) => (value === undefined ? "(absent)" : JSON.stringify(value));

/** Problems of `actual` against the keys `expected` lists (a subset match). */
export function subsetProblems(what, actual, expected) {
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

/** Checks a resources/read result (`{contents: [...]}`). */
export function checkResource(result) {
  const spec = SCENARIO.surface.resource;
  const problems = [];
  const contents = Array.isArray(result?.contents) ? result.contents : [];
  const first = contents[0];
  if (contents.length !== 1) problems.push(`contents: expected 1, got ${contents.length}`);
  if (first?.uri !== spec.uri) problems.push(`contents[0].uri: expected ${show(spec.uri)}, got ${show(first?.uri)}`);
  if (first?.mimeType !== spec.mimeType) {
    problems.push(`contents[0].mimeType: expected ${show(spec.mimeType)}, got ${show(first?.mimeType)}`);
  }
  try {
    problems.push(...subsetProblems("contents[0].text", JSON.parse(first?.text), spec.json));
  } catch (error) {
    problems.push(`contents[0].text: expected JSON, got ${show(first?.text)} (${error.message})`);
  }
  return outcome(spec.name, problems, result);
}

/** Checks a prompts/get result (`{messages: [...]}`). */
export function checkPrompt(result) {
  const spec = SCENARIO.surface.prompt;
  const problems = [];
  const messages = Array.isArray(result?.messages) ? result.messages : [];
  const [text, embedded] = messages;
  if (messages.length !== 2) problems.push(`messages: expected 2, got ${messages.length}`);
  if (text?.role !== "user" || text?.content?.type !== "text" || !text.content.text?.startsWith(spec.firstTextStartsWith)) {
    problems.push(`messages[0]: expected a user text starting with ${show(spec.firstTextStartsWith)}, got ${show(text)}`);
  }
  if (embedded?.content?.type !== "resource" || embedded.content.resource?.uri !== spec.embeddedUri) {
    problems.push(`messages[1]: expected the embedded resource ${show(spec.embeddedUri)}, got ${show(embedded)}`);
  }
  return outcome(spec.name, problems, result);
}

/** Checks a completion/complete result (`{completion: {values}}`). */
export function checkCompletion(result) {
  const spec = SCENARIO.surface.completion;
  const values = result?.completion?.values;
  const problems = isDeepStrictEqual(values, spec.values) ? [] : [`completion.values: expected ${show(spec.values)}, got ${show(values)}`];
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

/** Ends a client's run: each check reported, the result written to `path`, the verdict as exit status. */
export function finish(path, run) {
  run.checks.forEach(report);
  const result = writeResult(path, run);
  console.log(`  ${result.passed ? "PASSED" : "FAILED"}: ${run.checks.filter((c) => c.passed).length}/${run.checks.length} checks`);
  process.exit(result.passed ? 0 : 1);
}
