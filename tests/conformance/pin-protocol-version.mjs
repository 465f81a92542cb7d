// Preloaded into the conformance CLI (`node --import`) by run.sh so that its MCP client
// negotiates one protocol version.
//
// The suite's `--spec-version` only selects scenarios; its client (the TypeScript SDK) always
// asks for its latest version at `initialize`. This wraps `globalThis.fetch`, which the SDK's
// Streamable HTTP transport calls for every request, and sets `params.protocolVersion` of each
// `initialize` to CONFORMANCE_PROTOCOL_VERSION. The server answers with the version it accepts;
// the SDK accepts any version it supports and sends it as `MCP-Protocol-Version` from then on.
// Nothing else is changed: requests the scenarios build by hand keep their own headers and bodies
// (and the DNS-rebinding scenario does not use fetch at all).
//
// Every rewrite and the version the server answered are appended to CONFORMANCE_PIN_LOG (JSON
// lines), which run.sh checks, so a run that did not negotiate the pinned version fails.

import { appendFileSync } from 'node:fs';

const pinned = process.env.CONFORMANCE_PROTOCOL_VERSION;
const logFile = process.env.CONFORMANCE_PIN_LOG;

function log(entry) {
  if (logFile) appendFileSync(logFile, `${JSON.stringify(entry)}\n`);
}

function initializeRequest(init) {
  if (typeof init?.body !== 'string') return undefined;
  try {
    const message = JSON.parse(init.body);
    return message?.method === 'initialize' && message.params ? message : undefined;
  } catch {
    return undefined;
  }
}

// The first `"protocolVersion":"..."` of an initialize response, JSON or SSE.
function answeredVersion(text) {
  return /"protocolVersion"\s*:\s*"([^"]+)"/.exec(text)?.[1] ?? null;
}

if (pinned) {
  const original = globalThis.fetch;
  globalThis.fetch = async function pinnedFetch(input, init) {
    const message = initializeRequest(init);
    if (!message) return original(input, init);
    const requested = message.params.protocolVersion;
    message.params.protocolVersion = pinned;
    const response = await original(input, { ...init, body: JSON.stringify(message) });
    const id = message.id;
    // Read a copy of the answer in the background; the client reads the original.
    response
      .clone()
      .text()
      .then(
        (text) => log({ event: 'initialize', id, requested, sent: pinned, status: response.status, answered: answeredVersion(text) }),
        (error) => log({ event: 'initialize', id, requested, sent: pinned, status: response.status, error: String(error) }),
      );
    return response;
  };
}
