// The void confirmation of ../confirmation.json for JavaScript clients: checks what a client saw
// (the negotiated version, what its elicitation handler was asked, the tools/call requests it
// sent, the results) against it. tests/interop/python/confirm.py implements the same checks for
// the Python SDK.

import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { show, subsetProblems } from "./scenario.mjs";

export const CONFIRMATION = JSON.parse(readFileSync(new URL("../confirmation.json", import.meta.url), "utf8"));

function outcome(name, problems, saw) {
  return problems.length === 0 ? { name, passed: true } : { name, passed: false, problems, saw };
}

/** The negotiated protocol version is the one the confirmation runs on. */
export function checkProtocol(version) {
  const want = CONFIRMATION.protocol_version;
  return outcome(`protocol_${want.replaceAll("-", "_")}`, version === want ? [] : [`negotiated protocol: expected ${want}, got ${show(version)}`], { protocol_version: version });
}

/** `asked`: the params of every elicitation/create the handler got, in order. */
export function checkElicitation(asked) {
  const spec = CONFIRMATION.call;
  const problems = [];
  if (asked.length !== 1) problems.push(`elicitation handler: expected to be asked once, was asked ${asked.length} time(s)`);
  const params = asked[0];
  if (params !== undefined) {
    if (params.message !== spec.message) problems.push(`message: expected ${show(spec.message)}, got ${show(params.message)}`);
    if ((params.mode ?? "form") !== "form") problems.push(`mode: expected "form", got ${show(params.mode)}`);
    const field = params.requestedSchema?.properties?.[spec.field];
    if (field?.type !== "boolean") {
      problems.push(`requestedSchema.properties.${spec.field}: expected a boolean, got ${show(field)}`);
    }
  }
  return outcome("elicitation", problems, { asked });
}

/**
 * `calls`: the params of every tools/call of the void the client sent, in order. On 2026-07-28
 * the question travels in the first call's input_required result, so the SDK must have sent the
 * call twice: first bare, then with the handler's answer under the key and a requestState.
 */
export function checkRounds(calls) {
  const spec = CONFIRMATION.call;
  const problems = [];
  if (calls.length !== 2) problems.push(`tools/call of the void: expected 2 (the call, then its retry with the answer), sent ${calls.length}`);
  const [first, second] = calls;
  if (first && (first.inputResponses !== undefined || first.requestState !== undefined)) {
    problems.push(`first tools/call: expected neither inputResponses nor requestState, got ${show(first)}`);
  }
  if (second) {
    if (!isDeepStrictEqual(second.inputResponses, { [spec.key]: spec.answer })) {
      problems.push(`second tools/call: expected inputResponses ${show({ [spec.key]: spec.answer })}, got ${show(second.inputResponses)}`);
    }
    if (typeof second.requestState !== "string" || second.requestState === "") {
      problems.push(`second tools/call: expected the requestState of the first answer, got ${show(second.requestState)}`);
    }
    if (!isDeepStrictEqual(second.arguments, spec.arguments)) {
      problems.push(`second tools/call: expected the same arguments, got ${show(second.arguments)}`);
    }
  }
  const saw = calls.map((c) => ({ ...c, requestState: c.requestState === undefined ? undefined : `(${c.requestState.length} chars)` }));
  return outcome("multi_round_trip", problems, { calls: saw });
}

/** A successful result whose structured content has what `spec` lists. */
function checkSuccess(spec, result) {
  const problems = [];
  if ((result?.isError ?? false) !== false) problems.push(`isError: expected false, got ${show(result?.isError)}`);
  problems.push(...subsetProblems("structuredContent", result?.structuredContent, spec.structuredContent));
  return outcome(spec.name, problems, result);
}

/** The final result of the void: not an error, the invoice void. */
export const checkVoid = (result) => checkSuccess(CONFIRMATION.call, result);

/** get_invoice after the void. */
export const checkStored = (result) => checkSuccess(CONFIRMATION.after, result);

/**
 * The call of a tool the server does not have: on 2026-07-28 a JSON-RPC error `-32602` the SDK
 * throws (`thrown`), not a result (`result`, when it answered one). What a model is shown is the
 * thrown error's message: it must name the closest tool.
 */
export function checkUnknownTool(thrown, result) {
  const spec = CONFIRMATION.unknown_tool;
  const problems = [];
  if (thrown === undefined) {
    problems.push(`expected a thrown JSON-RPC error ${spec.code}, got a result ${show(result)}`);
  } else {
    if (thrown.code !== spec.code) problems.push(`code: expected ${spec.code}, got ${show(thrown.code)}`);
    if (!`${thrown.message}`.includes(spec.message_contains)) {
      problems.push(`message: expected it to contain ${show(spec.message_contains)}, got ${show(thrown.message)}`);
    }
    if (thrown.data?.code !== spec.data_code) problems.push(`data.code: expected ${show(spec.data_code)}, got ${show(thrown.data)}`);
  }
  const saw = thrown === undefined ? { result } : { code: thrown.code, message: thrown.message, data: thrown.data };
  return outcome(spec.name, problems, saw);
}
