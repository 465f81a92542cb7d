// Baseline bookkeeping for run.sh (Node 22, no dependencies).
//
//   node compare.mjs prepare   BASELINE SCENARIOS_TXT VERSION DIR
//       Checks the baseline (every entry names a server scenario the suite has, has a reason,
//       appears once) and writes DIR/expected-failures.yml, the suite's own baseline format,
//       with the entries that apply to VERSION.
//   node compare.mjs evaluate  BASELINE VERSION DIR SUITE_EXIT SCORED_TXT SELECTION [EXTENSIONS_TXT]
//       Reads the scenarios the suite ran (DIR/suite.log), their checks (DIR/checks/*/checks.json)
//       and the protocol versions negotiated (DIR/pin.log); writes DIR/results.json; prints a
//       summary. SCORED_TXT lists the scenarios that count (`conformance list` output); one the
//       suite ran beyond them is "not scored" (a requirement run adds extensions and pending
//       scenarios) and fails nothing, unless EXTENSIONS_TXT lists it (extensions.txt: features
//       the framework ships, scored where the suite runs them). SELECTION (`--requirements` or
//       `--suite`) is recorded. Exits
//       1 on a failing scored scenario not in the baseline, a baseline entry that passed, a
//       negotiated version other than VERSION (unless CONFORMANCE_SESSIONLESS=1: the version has no
//       initialize), or a verdict that differs from the suite's own (SUITE_EXIT, its exit status
//       with --expected-failures).
//   node compare.mjs extra     EXTENSIONS_TXT SCENARIOS_TXT SUITE_LOG
//       Prints, one a line, the scenarios EXTENSIONS_TXT lists that the suite has as extension
//       scenarios (SCENARIOS_TXT, `conformance list --server`: "[extension]") and did not run in
//       SUITE_LOG: those run.sh runs alone.
//   node compare.mjs summarize BASELINE OUT VERSION...
//       The table of every scenario by version, and OUT/summary.json. Exits 1 if a run failed
//       or, unless CONFORMANCE_PARTIAL=1 (run.sh given a subset of versions), if a baseline entry
//       ran under no version (it would never go stale otherwise).
//
// A scenario fails when one of its checks is FAILURE or WARNING (as the suite's own baseline
// comparison counts it), or when it left no checks.json (it crashed).

import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [command, ...args] = process.argv.slice(2);

function fail(message) {
  console.error(`compare.mjs: ${message}`);
  process.exit(2);
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    fail(`cannot read ${path}: ${error.message}`);
  }
}

function loadBaseline(path) {
  const baseline = readJson(path);
  const entries = baseline?.expected_failures;
  if (!Array.isArray(entries)) fail(`${path}: "expected_failures" must be an array`);
  const seen = new Set();
  for (const [i, entry] of entries.entries()) {
    const where = `${path}: expected_failures[${i}]`;
    if (typeof entry?.scenario !== 'string' || entry.scenario === '') fail(`${where}: "scenario" must be a non-empty string`);
    if (typeof entry.reason !== 'string' || entry.reason.trim() === '') fail(`${where} (${entry.scenario}): "reason" must say why it fails`);
    if (entry.versions !== undefined && !(Array.isArray(entry.versions) && entry.versions.every((v) => typeof v === 'string'))) {
      fail(`${where} (${entry.scenario}): "versions" must be an array of protocol versions`);
    }
    if (seen.has(entry.scenario)) fail(`${where}: "${entry.scenario}" is listed twice`);
    seen.add(entry.scenario);
  }
  return entries;
}

const appliesTo = (entry, version) => entry.versions === undefined || entry.versions.includes(version);

// `conformance list --server` prints "  - name [v1,v2]".
function knownScenarios(path) {
  const names = readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => /^\s+- (\S+)/.exec(line)?.[1])
    .filter(Boolean);
  if (names.length === 0) fail(`${path}: no scenarios listed`);
  return new Set(names);
}

function prepare([baselinePath, scenariosPath, version, dir]) {
  const entries = loadBaseline(baselinePath);
  const known = knownScenarios(scenariosPath);
  const unknown = entries.filter((e) => !known.has(e.scenario)).map((e) => e.scenario);
  if (unknown.length > 0) fail(`${baselinePath}: not server scenarios of this suite: ${unknown.join(', ')}`);
  const names = entries.filter((e) => appliesTo(e, version)).map((e) => e.scenario);
  const yaml = names.length === 0 ? 'server: []\n' : `server:\n${names.map((n) => `  - ${JSON.stringify(n)}\n`).join('')}`;
  writeFileSync(join(dir, 'expected-failures.yml'), yaml);
}

// The scenarios the suite announced, in order.
function ranScenarios(dir) {
  const log = readFileSync(join(dir, 'suite.log'), 'utf8');
  return [...log.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]);
}

// checks/server-<scenario>-<ISO timestamp with : and . as ->/checks.json
function checksByScenario(dir) {
  const root = join(dir, 'checks');
  const found = new Map();
  if (!existsSync(root)) return found;
  for (const name of readdirSync(root)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(name);
    const file = join(root, name, 'checks.json');
    if (m && existsSync(file)) found.set(m[1], readJson(file));
  }
  return found;
}

function negotiation(dir, version) {
  const path = join(dir, 'pin.log');
  const lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
  const entries = lines.map((line) => JSON.parse(line));
  const wrong = entries.filter((e) => e.status !== 200 || e.answered !== version);
  return { initializes: entries.length, wrong };
}

function evaluate([baselinePath, version, dir, suiteExit, scoredPath, selection, extensionsPath]) {
  const baseline = new Map(loadBaseline(baselinePath).filter((e) => appliesTo(e, version)).map((e) => [e.scenario, e]));
  const scenarios = ranScenarios(dir);
  const required = knownScenarios(scoredPath);
  // Extensions count where the suite ran them: a tasks scenario is not missing from 2025-11-25.
  const extensions = new Set(extensionsPath ? [...knownScenarios(extensionsPath)].filter((name) => scenarios.includes(name) && !required.has(name)) : []);
  const scored = new Set([...required, ...extensions]);
  const sessionless = process.env.CONFORMANCE_SESSIONLESS === '1';
  const checks = checksByScenario(dir);
  const results = scenarios.map((scenario) => {
    const list = checks.get(scenario);
    const problems = list
      ? list
          .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
          .map((c) => ({ id: c.id, status: c.status, message: c.errorMessage ?? c.description }))
      : [{ id: scenario, status: 'FAILURE', message: 'the scenario left no checks.json (it crashed; see suite.log)' }];
    const failed = problems.length > 0;
    const entry = baseline.get(scenario);
    if (!scored.has(scenario)) return { scenario, status: failed ? 'not scored, fails' : 'not scored, passes', ...(failed && { problems }) };
    const status = failed ? (entry ? 'baselined' : 'failed') : entry ? 'stale' : 'passed';
    return { scenario, status, ...(extensions.has(scenario) && { extension: true }), ...(entry && { reason: entry.reason }), ...(failed && { problems }) };
  });
  const count = (s) => results.filter((r) => r.status === s).length;
  const { initializes, wrong } = negotiation(dir, version);
  const errors = [];
  for (const r of results) {
    if (r.status === 'failed') errors.push(`${r.scenario} failed: ${r.problems.map((p) => `[${p.id}] ${p.message}`).join('; ')}`);
    if (r.status === 'stale') errors.push(`${r.scenario} passed but is in the baseline: remove its entry`);
  }
  for (const name of scored) if (!scenarios.includes(name)) errors.push(`${name} is required but the suite did not run it`);
  if (!sessionless && scenarios.length > 0 && initializes === 0) errors.push('no initialize went through the protocol-version pin (pin.log is empty)');
  // Without a handshake an initialize is a probe of its removal, answered 404 by design.
  for (const w of sessionless ? [] : wrong) errors.push(`initialize asked for ${version} but the server answered ${w.answered ?? w.error} (HTTP ${w.status})`);
  const ours = count('failed') + count('stale') === 0;
  const theirs = Number(suiteExit) === 0;
  if (ours !== theirs) errors.push(`the suite's own baseline check exited ${suiteExit}, but this comparison says ${ours ? 'pass' : 'fail'}`);

  const summary = {
    version,
    selection,
    scenarios: results.length - count('not scored, passes') - count('not scored, fails'),
    not_scored: count('not scored, passes') + count('not scored, fails'),
    passed: count('passed'),
    failed: count('failed'),
    baselined: count('baselined'),
    stale: count('stale'),
    initializes,
    suite_exit: Number(suiteExit),
    ok: errors.length === 0,
  };
  writeFileSync(join(dir, 'results.json'), `${JSON.stringify({ ...summary, errors, results }, null, 2)}\n`);
  console.log(
    `${version}: ${summary.scenarios} scenarios: ${summary.passed} passed, ${summary.failed} failed, ` +
      `${summary.baselined} baselined, ${summary.stale} stale, ${summary.not_scored} not scored` +
      (sessionless ? ' (no initialize: each request names the version)' : ` (negotiated ${version} in ${initializes} sessions)`),
  );
  for (const e of errors) console.log(`  ✗ ${e}`);
  process.exit(errors.length === 0 ? 0 : 1);
}

function summarize([baselinePath, out, ...versions]) {
  const entries = loadBaseline(baselinePath);
  const runs = versions.map((v) => ({ version: v, ...readJson(join(out, v, 'results.json')) }));
  const names = [];
  for (const run of runs) for (const r of run.results) if (!names.includes(r.scenario)) names.push(r.scenario);
  const cell = (run, name) => run.results.find((r) => r.scenario === name)?.status ?? '-';
  const width = Math.max(8, ...names.map((n) => n.length));
  const label = { passed: 'pass', failed: 'FAIL', baselined: 'baseline', stale: 'STALE', 'not scored, passes': '(pass)', 'not scored, fails': '(fail)', '-': '-' };
  console.log(`\n${'scenario'.padEnd(width)}  ${versions.map((v) => v.padEnd(10)).join('  ')}`);
  for (const name of names) console.log(`${name.padEnd(width)}  ${runs.map((run) => label[cell(run, name)].padEnd(10)).join('  ')}`);

  const errors = [];
  const partial = process.env.CONFORMANCE_PARTIAL === '1';
  const neverRan = partial ? [] : entries.filter((e) => !runs.some((run) => run.results.some((r) => r.scenario === e.scenario && appliesTo(e, run.version))));
  for (const e of neverRan) errors.push(`baseline entry ${e.scenario} ran under no protocol version: remove it`);
  console.log('');
  for (const run of runs) {
    console.log(`${run.version}: ${run.passed} passed, ${run.failed} failed, ${run.baselined} baselined, ${run.stale} stale${run.ok ? '' : '  ✗'}`);
  }
  for (const e of errors) console.log(`✗ ${e}`);
  const ok = errors.length === 0 && runs.every((r) => r.ok);
  const summary = {
    ok,
    versions: runs.map(({ results, ...rest }) => rest),
    scenarios: names.map((name) => ({ scenario: name, ...Object.fromEntries(runs.map((run) => [run.version, cell(run, name)])) })),
    extensions: names.filter((name) => runs.some((run) => run.results.some((r) => r.scenario === name && r.extension))),
    errors,
  };
  writeFileSync(join(out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  process.exit(ok ? 0 : 1);
}

function extra([extensionsPath, scenariosPath, logPath]) {
  const extensionScenarios = new Set(
    readFileSync(scenariosPath, 'utf8')
      .split('\n')
      .map((line) => /^\s+- (\S+) \[extension\]$/.exec(line)?.[1])
      .filter(Boolean),
  );
  const ran = new Set([...readFileSync(logPath, 'utf8').matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]));
  for (const name of knownScenarios(extensionsPath)) if (extensionScenarios.has(name) && !ran.has(name)) console.log(name);
}

switch (command) {
  case 'prepare':
    prepare(args);
    break;
  case 'evaluate':
    evaluate(args);
    break;
  case 'extra':
    extra(args);
    break;
  case 'summarize':
    summarize(args);
    break;
  default:
    fail(`unknown command ${command ?? '(none)'}; use prepare, evaluate, extra or summarize`);
}
