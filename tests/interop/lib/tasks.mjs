// The experimental tasks of MCP 2025-11-25 (../tasks.json) for the TypeScript SDK v1: checks what
// its `client.experimental.tasks` yielded and answered against them. `session` checks run where
// the server serves that form (stdio, Streamable HTTP sessions), `stateless` ones where it does
// not (a stateless HTTP server). Only ../ts/client.mjs runs them: of the pinned clients, only that
// SDK speaks this form.

import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { show } from "./scenario.mjs";

export const TASKS = JSON.parse(readFileSync(new URL("../tasks.json", import.meta.url), "utf8"));

/** The `_meta` key that ties a result to the task it came from. */
const RELATED_TASK = "io.modelcontextprotocol/related-task";

function outcome(name, problems, saw) {
  if (![...TASKS.session, ...TASKS.stateless].some((check) => check.name === name)) throw new Error(`tasks.json has no check ${name}`);
  return problems.length === 0 ? { name, passed: true } : { name, passed: false, problems, saw };
}

/** The message types of a stream, a run of the same type written once: what the report shows. */
export function shape(messages) {
  return messages.map((m) => m.type).filter((type, i, types) => i === 0 || types[i - 1] !== type);
}

/** Problems of an export's CallToolResult: not an error, one text block, the CSV of the six invoices. */
function exportProblems(result) {
  const problems = [];
  if ((result?.isError ?? false) !== false) problems.push(`result.isError: expected false, got ${show(result?.isError)}`);
  const content = Array.isArray(result?.content) ? result.content : [];
  if (content.length !== 1 || content[0]?.type !== "text" || typeof content[0].text !== "string") {
    problems.push(`result.content: expected one text block, got ${show(result?.content)}`);
    return problems;
  }
  const [header, ...rows] = content[0].text.split("\n").filter((line) => line !== "");
  if (header !== TASKS.header) problems.push(`CSV header: expected ${show(TASKS.header)}, got ${show(header)}`);
  const ids = rows.map((row) => row.split(",")[0]);
  if (!isDeepStrictEqual(ids, TASKS.invoice_ids)) {
    problems.push(`CSV rows: expected the invoices ${show(TASKS.invoice_ids)}, got ${show(ids)}`);
  }
  return problems;
}

/** The experimental form offered: `capabilities` from getServerCapabilities(), `tools` from tools/list. */
export function checkOffered(capabilities, tools) {
  const problems = [];
  if (!isDeepStrictEqual(capabilities?.tasks, TASKS.capability)) {
    problems.push(`capabilities.tasks: expected ${show(TASKS.capability)}, got ${show(capabilities?.tasks)}`);
  }
  const tool = tools?.tools?.find((t) => t.name === TASKS.call.name);
  if (tool?.execution?.taskSupport !== "optional") {
    problems.push(`tools/list: expected ${TASKS.call.name} with execution.taskSupport "optional", got ${show(tool?.execution)}`);
  }
  return outcome("tasks_offered", problems, { tasks: capabilities?.tasks, execution: tool?.execution });
}

/** `messages`: everything callToolStream yielded for the export, in order. */
export function checkExport(messages) {
  const problems = [];
  const [created, ...rest] = messages;
  const last = rest.at(-1);
  const statuses = rest.slice(0, -1);
  const id = created?.task?.taskId;
  if (created?.type !== "taskCreated" || created.task?.status !== "working" || typeof id !== "string") {
    problems.push(`first message: expected taskCreated with a task "working", got ${show(created)}`);
  }
  if (statuses.length === 0 || statuses.some((m) => m.type !== "taskStatus" || m.task?.taskId !== id)) {
    problems.push(`between: expected at least one taskStatus of task ${show(id)}, got ${show(shape(statuses))}`);
  } else if (statuses.at(-1).task.status !== "completed") {
    problems.push(`last taskStatus: expected "completed", got ${show(statuses.at(-1).task.status)}`);
  }
  if (last?.type !== "result") {
    problems.push(`last message: expected a result, got ${show(last && saw([last])[0])}`);
  } else {
    const related = last.result?._meta?.[RELATED_TASK];
    if (related?.taskId !== id) problems.push(`result._meta["${RELATED_TASK}"]: expected {"taskId": ${show(id)}}, got ${show(related)}`);
    problems.push(...exportProblems(last.result));
  }
  return outcome("task_export", problems, { messages: saw(messages) });
}

/** `listed`: what listTasks() answered after the export of task `id`. */
export function checkListed(listed, id) {
  const tasks = Array.isArray(listed?.tasks) ? listed.tasks : [];
  const problems = [];
  if (tasks.length !== 1 || tasks[0]?.taskId !== id || tasks[0]?.status !== "completed") {
    const got = tasks.map((t) => ({ taskId: t?.taskId, status: t?.status }));
    problems.push(`tasks: expected exactly ${show([{ taskId: id, status: "completed" }])}, got ${show(got)}`);
  }
  return outcome("tasks_list", problems, listed);
}

/**
 * `created`: the first message callToolStream yielded for the second export; `cancelled`: what
 * cancelTask(id) answered; `read`: what getTask(id) answered afterwards.
 */
export function checkCancel(created, cancelled, read) {
  const problems = [];
  const id = created?.task?.taskId;
  if (created?.type !== "taskCreated" || created.task?.status !== "working" || typeof id !== "string") {
    problems.push(`first message: expected taskCreated with a task "working", got ${show(created)}`);
  }
  if (cancelled?.taskId !== id || cancelled?.status !== "cancelled") {
    problems.push(`cancelTask: expected task ${show(id)} "cancelled", got ${show(cancelled)}`);
  }
  if (read?.taskId !== id || read?.status !== "cancelled") {
    problems.push(`getTask afterwards: expected task ${show(id)} "cancelled", got ${show(read)}`);
  }
  return outcome("task_cancel", problems, { created, cancelled, read });
}

/** `capabilities` from getServerCapabilities() of a stateless server. */
export function checkNotOffered(capabilities) {
  const problems = capabilities?.tasks === undefined ? [] : [`capabilities.tasks: expected none, got ${show(capabilities.tasks)}`];
  return outcome("tasks_not_offered", problems, { capabilities });
}

/** `messages`: everything callToolStream yielded for the export where no task is offered. */
export function checkPlainExport(messages) {
  const problems = [];
  if (messages.length !== 1 || messages[0].type !== "result") {
    problems.push(`messages: expected only a result, got ${show(shape(messages))}`);
  }
  const result = messages.find((m) => m.type === "result")?.result;
  if (result !== undefined) {
    if (result._meta?.[RELATED_TASK] !== undefined) {
      problems.push(`result._meta["${RELATED_TASK}"]: expected none, got ${show(result._meta[RELATED_TASK])}`);
    }
    problems.push(...exportProblems(result));
  }
  return outcome("plain_export", problems, { messages: saw(messages) });
}

/** Messages as a failure report shows them (an error as its text). */
function saw(messages) {
  return messages.map((m) => (m.type === "error" ? { type: "error", error: `${m.error}` } : m));
}
