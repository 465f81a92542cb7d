// Lists per caller do not change what contracts describe: the lockfile `fusion lock` makes
// over HTTP with a token holding every scope is the one it makes from the same server over
// stdio (no authorization: the whole server, as the builder has it), and a token with fewer
// scopes is shown — and so locks — fewer actions.
//
//   node lock.mjs --issuer URL --server URL --fusion PATH --billing-server PATH --dir DIR
//
// Prints one `ok - …` / `not ok - …` line per check; exits 1 if any failed.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ALL_ACTIONS } from "./lib.mjs";

const options = {};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) options[argv[i].replace(/^--/, "")] = argv[i + 1];
for (const name of ["issuer", "server", "fusion", "billing-server", "dir"]) {
  if (!options[name]) {
    console.error(`lock.mjs: --${name} is missing`);
    process.exit(2);
  }
}

let failed = 0;
function check(name, fn) {
  try {
    const detail = fn();
    console.log(`ok - ${name}${detail ? `: ${detail}` : ""}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok - ${name}: ${error.message}`);
  }
}

async function token(id, secret, scope) {
  const discovery = await (await fetch(`${options.issuer}/.well-known/openid-configuration`)).json();
  const form = new URLSearchParams({ grant_type: "client_credentials", scope, resource: options.server });
  const authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
  const response = await fetch(discovery.token_endpoint, { method: "POST", headers: { authorization }, body: form });
  const body = await response.json();
  if (!response.ok || !body.access_token) throw new Error(`token of ${id}: HTTP ${response.status}`);
  return body.access_token;
}

/** `fusion lock` with `args`, into `name` under the directory: the lockfile's text. */
function lock(name, args, env = {}) {
  const lockfile = join(options.dir, name);
  execFileSync(options.fusion, ["lock", ...args, "--lockfile", lockfile], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
  return readFileSync(lockfile, "utf8");
}

/** The demo's actions a lockfile names. */
const actions = (text) => ALL_ACTIONS.filter((action) => text.includes(`"${action}"`));

const full = await token("billing-writer", "writer-secret", "billing:read billing:write");
const reader = await token("billing-reader", "reader-secret", "billing:read");
const stdio = `'${options["billing-server"]}' --db '${join(options.dir, "lock-stdio.db")}'`;
const whole = lock("stdio.lock", ["--stdio", stdio]);
check("13 lockfile: a full-scope token locks the whole server, byte for byte what stdio locks", () => {
  const http = lock("full.lock", ["--url", options.server], { FUSION_TOKEN: full });
  if (http !== whole) throw new Error(`the lockfiles differ (${http.length} and ${whole.length} bytes)`);
  return `${whole.length} bytes, actions ${actions(whole).join(", ")}`;
});
check("13 lockfile: a billing:read token is shown, and locks, the read actions only", () => {
  const partial = lock("reader.lock", ["--url", options.server], { FUSION_TOKEN: reader });
  const found = actions(partial);
  if (partial === whole || found.some((action) => /create|pay|void/.test(action))) {
    throw new Error(`it locked ${found.join(", ")}`);
  }
  return found.join(", ");
});
process.exit(failed === 0 ? 0 : 1);
