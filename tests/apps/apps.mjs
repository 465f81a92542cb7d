#!/usr/bin/env node
// MCP Apps on billing-server, checked with the official pieces (tests/apps/run.sh runs it):
//
//   node apps.mjs --url http://127.0.0.1:PORT/mcp --flat-url http://127.0.0.1:PORT2/mcp \
//                 --chromium /usr/bin/chromium [--out target/apps] [--user-data-dir DIR]
//
// For each exposition (grouped: the `billing` tool; flat: `billing_get_invoice`):
//  1. the TypeScript SDK v2 client: the server advertises io.modelcontextprotocol/ui to a client
//     that declares it; ext-apps' getToolUiResourceUri finds ui://billing/invoice-view on the
//     tool; resources/read gives the page (RESOURCE_MIME_TYPE, _meta.ui) with fusion-app.js in
//     place of its marker.
//  2. headless Chromium plays the host: ext-apps' AppBridge (bundled here with esbuild) over
//     PostMessageTransport to a sandboxed iframe holding that page under the spec's CSP; the
//     view's tools/call go through Node to the real server. The host hands the view a real
//     get_invoice call and its result: the invoice renders. An unknown id typed into the view:
//     the server's NOT_FOUND envelope renders, with its recovery and actions. A real id: that
//     invoice renders. Screenshots go to --out.
// Prints what it found against what it expected; exits 1 on any mismatch.

import { mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { getToolUiResourceUri, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";
import * as esbuild from "esbuild";
import puppeteer from "puppeteer-core";

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const VIEW_URI = "ui://billing/invoice-view";
const MARKER = "/*FUSION_APP_JS*/";
const UNKNOWN_ID = "inv_nope";
const ROOT = new URL("../../", import.meta.url);
const PAGE_FILE = new URL("examples/billing/apps/invoice-view.html", ROOT);
const SCRIPT_FILE = new URL("crates/fusion/src/apps/fusion-app.js", ROOT);
const STEP_TIMEOUT_MS = 20_000;

const { values: opts } = parseArgs({
  options: {
    url: { type: "string" },
    "flat-url": { type: "string" },
    chromium: { type: "string" },
    out: { type: "string", default: new URL("target/apps", ROOT).pathname },
    "user-data-dir": { type: "string" },
  },
});
if (!opts.url || !opts["flat-url"] || !opts.chromium) {
  console.error("usage: node apps.mjs --url URL --flat-url URL --chromium PATH [--out DIR] [--user-data-dir DIR]");
  process.exit(2);
}
mkdirSync(opts.out, { recursive: true });

// ---- reporting ----

const failures = [];
const show = (v) => (typeof v === "string" ? JSON.stringify(v) : JSON.stringify(v, null, 0));
function check(label, found, expected, ok = show(found) === show(expected)) {
  if (ok) {
    console.log(`  ok   ${label}`);
  } else {
    console.log(`  FAIL ${label}\n         found:    ${show(found)}\n         expected: ${show(expected)}`);
    failures.push(label);
  }
  return ok;
}
function fail(label, detail) {
  console.log(`  FAIL ${label}: ${detail}`);
  failures.push(label);
}

// ---- the client side: discovery and the resource ----

async function connect(url, declare) {
  const capabilities = declare ? { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {};
  const client = new Client({ name: "mcp-fusion-apps-test", version: "1.0.0" }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

// The element text of an envelope, unescaped as the envelope contract escapes it.
const xmlText = (s) => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&apos;/g, "'").replace(/&amp;/g, "&");
function envelopeParts(result) {
  const text = result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  const one = (tag) => { const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(text); return m && xmlText(m[1]); };
  return {
    code: /<tool_error code="([^"]*)"/.exec(text)?.[1] ?? null,
    message: one("message"),
    recovery: one("recovery"),
    actions: [...text.matchAll(/<action>([\s\S]*?)<\/action>/g)].map((m) => xmlText(m[1])),
  };
}

async function discover(expo) {
  console.log(`\n${expo.label}: discovery over Streamable HTTP (@modelcontextprotocol/client)`);
  const plain = await connect(expo.url, false);
  const plainTools = (await plain.listTools()).tools;
  console.log(`  (a client that does not declare ${UI_EXTENSION}: server extensions ${show(plain.getServerCapabilities()?.extensions ?? null)}, ` +
    `${expo.tool} links ${show(getToolUiResourceUri(plainTools.find((t) => t.name === expo.tool) ?? {}) ?? null)})`);
  await plain.close();

  const client = await connect(expo.url, true);
  const extension = client.getServerCapabilities()?.extensions?.[UI_EXTENSION];
  check(`the server advertises capabilities.extensions["${UI_EXTENSION}"], with the app MIME type, to a client that declares it`,
    extension ?? null, { mimeTypes: [RESOURCE_MIME_TYPE] }, Array.isArray(extension?.mimeTypes) && extension.mimeTypes.includes(RESOURCE_MIME_TYPE));
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === expo.tool);
  check(`tools/list has ${expo.tool}`, tool ? expo.tool : tools.map((t) => t.name), expo.tool);
  check(`getToolUiResourceUri(${expo.tool})`, tool ? getToolUiResourceUri(tool) ?? null : null, VIEW_URI);
  const linked = tools.filter((t) => getToolUiResourceUri(t)).map((t) => t.name);
  console.log(`  (tools linked to a view: ${linked.join(", ")})`);

  const read = await client.readResource({ uri: VIEW_URI });
  const content = read.contents?.[0] ?? {};
  check("resources/read: one content", read.contents?.length, 1);
  check("resources/read: its uri", content.uri, VIEW_URI);
  check("resources/read: mimeType is ext-apps' RESOURCE_MIME_TYPE", content.mimeType, RESOURCE_MIME_TYPE);
  check(`resources/read: _meta.ui is an object (${show(content._meta?.ui ?? null)})`, content._meta?.ui ?? null, "an object",
    typeof content._meta?.ui === "object" && content._meta.ui !== null);
  const html = typeof content.text === "string" ? content.text : content.blob ? Buffer.from(content.blob, "base64").toString("utf8") : "";
  check("resources/read: an HTML5 document", html.slice(0, 15), "<!DOCTYPE html>", /^<!DOCTYPE html>/i.test(html));
  // What the server serves is the page on disk with the script in place of its marker (a
  // build older than either file fails here).
  const page = readFileSync(PAGE_FILE, "utf8");
  const script = readFileSync(SCRIPT_FILE, "utf8");
  const expected = page.split(MARKER).join(script);
  check("resources/read: the page of examples/billing/apps/invoice-view.html with fusion-app.js in place of its marker",
    html === expected ? "identical" : `differs (${html.length} vs ${expected.length} characters; marker left: ${html.includes(MARKER)})`, "identical");
  return { client, tool, html, meta: content._meta?.ui ?? {} };
}

// ---- the host side: a page playing the host, in headless Chromium ----

// The host page: ext-apps' AppBridge and PostMessageTransport (window.ExtApps), and mount(),
// which puts the view in a sandboxed iframe under the CSP the spec has hosts build from
// _meta.ui.csp, connects the bridge, and hands the view the model's call once it is initialized.
const HOST_PAGE = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>MCP Apps test host</title><link rel="icon" href="data:,">
<style>
  body { font: 13px system-ui, sans-serif; margin: 16px; background: #e9e9ee; color: #222; }
  p { margin: 0 0 8px; }
  iframe { display: block; width: 520px; height: 120px; border: 1px solid #b9b9c3; border-radius: 10px; background: #fff; }
</style></head>
<body><p id="caption">MCP Apps test host</p><div id="slot"></div>
<script src="/ext-apps.js"></script>
<script>
  // The spec's CSP construction (Security Implications, Content Security Policy Enforcement).
  function cspFor(csp) {
    const res = (csp && csp.resourceDomains || []).join(" ");
    return [
      "default-src 'none'",
      "script-src 'self' 'unsafe-inline' " + (csp && csp.wasmUnsafeEval ? "'wasm-unsafe-eval' " : "") + res,
      "style-src 'self' 'unsafe-inline' " + res,
      "connect-src 'self' " + (csp && csp.connectDomains || []).join(" "),
      "img-src 'self' data: " + res,
      "font-src 'self' " + res,
      "media-src 'self' data: " + res,
      "frame-src " + ((csp && csp.frameDomains || []).join(" ") || "'none'"),
      "object-src 'none'",
      "base-uri " + ((csp && csp.baseUriDomains || []).join(" ") || "'self'"),
    ].join("; ");
  }
  function withCsp(html, csp) {
    const meta = '<meta http-equiv="Content-Security-Policy" content="' + cspFor(csp) + '">';
    return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (h) => h + meta) : meta + html;
  }
  window.hostLog = { sizes: [], calls: [], logs: [] };
  window.mount = async ({ html, meta, tool, caption, toolInput, toolResult }) => {
    const { AppBridge, PostMessageTransport } = window.ExtApps;
    document.getElementById("caption").textContent = caption;
    const iframe = document.createElement("iframe");
    iframe.setAttribute("sandbox", "allow-scripts");
    iframe.title = "Invoice view";
    document.getElementById("slot").replaceChildren(iframe);
    const bridge = new AppBridge(null, { name: "mcp-fusion-apps-test-host", version: "1.0.0" },
      { serverTools: {}, logging: {} },
      { hostContext: { toolInfo: { id: 1, tool }, theme: "light", locale: "en-US", timeZone: "UTC", platform: "web",
        displayMode: "inline", availableDisplayModes: ["inline"], containerDimensions: { width: 520, maxHeight: 1200 } } });
    bridge.onsizechange = ({ width, height }) => {
      window.hostLog.sizes.push({ width, height });
      if (height) iframe.style.height = height + "px";
    };
    bridge.oncalltool = async (params) => {
      window.hostLog.calls.push(params);
      return window.forwardToolCall(params);
    };
    bridge.onloggingmessage = (params) => window.hostLog.logs.push(params);
    const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
    await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
    iframe.srcdoc = withCsp(html, meta.csp);
    await Promise.race([initialized, new Promise((_, reject) => setTimeout(() => reject(new Error("the view sent no ui/notifications/initialized within 15 s")), 15000))]);
    window.bridge = bridge;
    await bridge.sendToolInput({ arguments: toolInput });
    await bridge.sendToolResult(toolResult);
    return { appInfo: bridge.getAppVersion(), appCapabilities: bridge.getAppCapabilities() };
  };
</script></body></html>`;

async function bundleBridge() {
  const result = await esbuild.build({
    stdin: {
      contents: 'export { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";',
      resolveDir: new URL(".", import.meta.url).pathname,
      loader: "js",
    },
    bundle: true,
    format: "iife",
    globalName: "ExtApps",
    platform: "browser",
    target: "chrome120",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

function serveHost(bundle) {
  const server = createServer((req, res) => {
    const [type, body] = req.url === "/ext-apps.js" ? ["text/javascript", bundle] : req.url === "/" ? ["text/html", HOST_PAGE] : [null, null];
    if (!type) { res.writeHead(404).end(); return; }
    res.writeHead(200, { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store" }).end(body);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

const money = (cents, currency) => new Intl.NumberFormat("en-US", { style: "currency", currency }).format(cents / 100);
// Intl may put a narrow or no-break space between the symbol and the number.
const spaces = (s) => s.replace(/[\u00a0\u202f]/g, " ").replace(/\s+/g, " ").trim();

async function render(browser, hostUrl, expo, found) {
  console.log(`\n${expo.label}: the invoice view in headless Chromium, hosted by ext-apps' AppBridge`);
  const page = await browser.newPage();
  await page.setViewport({ width: 600, height: 560 });
  const consoleLines = [];
  const outside = [];
  page.on("console", (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => consoleLines.push(`[pageerror] ${e.message}`));
  page.on("request", (r) => { if (!r.url().startsWith(hostUrl) && !/^(about|data):/.test(r.url())) outside.push(r.url()); });
  const answers = [];
  await page.exposeFunction("forwardToolCall", async (params) => {
    const result = await found.client.callTool({ name: params.name, arguments: params.arguments ?? {} });
    answers.push({ params, result });
    return result;
  });
  const before = failures.length;
  try {
    await page.goto(hostUrl, { waitUntil: "load" });
    // The model's call: list invoices, then read one for real.
    const listed = await found.client.callTool({ name: expo.list.name, arguments: expo.list.arguments });
    const invoices = listed.structuredContent?.invoices ?? JSON.parse(listed.content[0].text).invoices;
    const [inv, other] = [invoices.find((i) => i.status === "open" && i.paid_cents > 0) ?? invoices[0], invoices.find((i) => i.status === "paid")];
    const toolInput = expo.get(inv.id);
    const toolResult = await found.client.callTool({ name: expo.tool, arguments: toolInput });
    check(`the model's call: ${expo.tool} ${show(toolInput)} succeeds`, toolResult.isError ?? false, false);

    const mounted = await page.evaluate((args) => window.mount(args), {
      html: found.html, meta: found.meta, tool: found.tool, caption: `${expo.label}: the model called ${expo.tool} ${JSON.stringify(toolInput)}`,
      toolInput, toolResult,
    });
    check("ui/initialize: the view's appInfo as the AppBridge read it", mounted.appInfo, { name: "billing-invoice-view", version: "1.0.0" });
    const frame = await (await page.$("iframe")).contentFrame();

    // 1. The model's call renders.
    await frame.waitForSelector('#invoice [data-field="id"]', { timeout: STEP_TIMEOUT_MS });
    const shown = await frame.$eval("#invoice", (el) => ({
      visible: !el.hidden,
      id: el.querySelector('[data-field="id"]')?.textContent,
      amount: el.querySelector('[data-field="amount"]')?.textContent,
      amountCents: el.querySelector('[data-field="amount"]')?.getAttribute("value"),
      paid: el.querySelector('[data-field="paid"]')?.textContent,
      customer: el.querySelector('[data-field="customer"]')?.textContent,
      status: el.querySelector('[data-field="status"]')?.textContent,
      due: el.querySelector('[data-field="due"]')?.textContent,
    }));
    check("#invoice shows the invoice of the tool-result", { ...shown, amount: spaces(shown.amount ?? ""), paid: spaces(shown.paid ?? "") }, {
      visible: true, id: inv.id, amount: spaces(money(inv.amount_cents, inv.currency)), amountCents: String(inv.amount_cents),
      paid: spaces(money(inv.paid_cents, inv.currency)), customer: inv.customer_email, status: inv.status, due: inv.due_date ?? "no due date",
    });
    await page.waitForFunction(() => window.hostLog.sizes.some((s) => s.height > 0), { timeout: STEP_TIMEOUT_MS })
      .catch(() => undefined);
    const sizes = await page.evaluate(() => window.hostLog.sizes);
    check("ui/notifications/size-changed: the view reported its height", sizes.at(-1) ?? null, "a height above 0", sizes.some((s) => s.height > 0));
    await page.screenshot({ path: `${opts.out}/${expo.name}-invoice.png`, fullPage: true });

    // 2. An unknown id typed into the view: its own tools/call fails, and the envelope renders.
    await frame.click("#invoice-id", { clickCount: 3 });
    await frame.type("#invoice-id", UNKNOWN_ID);
    await frame.click("#open");
    await frame.waitForSelector('#error[data-code]:not([hidden])', { timeout: STEP_TIMEOUT_MS });
    const call = answers.at(-1);
    check("the view's tools/call reached the server through the host", call?.params ?? null, { name: expo.tool, arguments: expo.get(UNKNOWN_ID) });
    const server = envelopeParts(call.result);
    check("the server refused it with NOT_FOUND", { isError: call.result.isError, code: server.code }, { isError: true, code: "NOT_FOUND" });
    const error = await frame.$eval("#error", (el) => ({
      code: el.getAttribute("data-code"),
      visible: !el.hidden,
      message: el.querySelector(".message")?.textContent ?? null,
      recovery: el.querySelector(".recovery")?.textContent ?? null,
      actions: [...el.querySelectorAll(".actions li")].map((li) => li.textContent),
    }));
    const invoiceHidden = await frame.$eval("#invoice", (el) => el.hidden);
    check('#error[data-code="NOT_FOUND"] renders the server\'s envelope', error, {
      code: "NOT_FOUND", visible: true, message: server.message, recovery: server.recovery, actions: server.actions,
    });
    check("the envelope has a recovery to render", server.recovery ? "present" : server.recovery, "present");
    check("#invoice is hidden while the error shows", invoiceHidden, true);
    await page.screenshot({ path: `${opts.out}/${expo.name}-error.png`, fullPage: true });

    // 3. A real id typed into the view: that invoice renders, the error goes.
    if (other) {
      await frame.click("#invoice-id", { clickCount: 3 });
      await frame.type("#invoice-id", other.id);
      await frame.click("#open");
      await frame.waitForFunction((id) => document.querySelector('#invoice:not([hidden]) [data-field="id"]')?.textContent === id,
        { timeout: STEP_TIMEOUT_MS }, other.id);
      const after = await frame.$eval("#error", (el) => el.hidden);
      check(`opening ${other.id} from the view renders it and clears the error`, after, true);
    }

    const csp = consoleLines.filter((l) => /Content Security Policy|Refused to/i.test(l));
    check("the view runs under the spec's default CSP without a violation", csp, []);
    check("the view made no request outside the host page", outside, []);
  } catch (e) {
    fail(`${expo.label}: the browser run`, e.stack ?? e.message);
    await page.screenshot({ path: `${opts.out}/${expo.name}-failure.png`, fullPage: true }).catch(() => undefined);
  }
  if (failures.length > before) {
    try {
      const frame = await (await page.$("iframe"))?.contentFrame();
      if (frame) {
        console.log("  the view's #invoice:", await frame.$eval("#invoice", (el) => el.outerHTML).catch((e) => e.message));
        console.log("  the view's #error:  ", await frame.$eval("#error", (el) => el.outerHTML).catch((e) => e.message));
      }
      console.log("  the host's log:", JSON.stringify(await page.evaluate(() => window.hostLog)));
    } catch (e) {
      console.log(`  (could not read the page: ${e.message})`);
    }
    console.log(`  the page's console (${consoleLines.length} lines):`);
    for (const line of consoleLines) console.log(`    ${line}`);
  }
  await page.close();
}

// ---- the run ----

const EXPOSITIONS = [
  {
    name: "grouped", label: "grouped (billing)", url: opts.url, tool: "billing",
    list: { name: "billing", arguments: { action: "list_invoices" } },
    get: (id) => ({ action: "get_invoice", id }),
  },
  {
    name: "flat", label: "flat (billing_get_invoice)", url: opts["flat-url"], tool: "billing_get_invoice",
    list: { name: "billing_list_invoices", arguments: {} },
    get: (id) => ({ id }),
  },
];

const started = Date.now();
let browser;
let host;
const clients = [];
try {
  const found = [];
  for (const expo of EXPOSITIONS) {
    const f = await discover(expo);
    clients.push(f.client);
    found.push(f);
  }
  const bundle = await bundleBridge();
  host = await serveHost(bundle);
  const hostUrl = `http://127.0.0.1:${host.address().port}/`;
  console.log(`\nhost page ${hostUrl} (ext-apps' AppBridge bundled by esbuild ${esbuild.version}: ${Math.round(bundle.length / 1024)} KiB)`);
  const args = ["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"];
  // Chromium's own sandbox needs user namespaces a root container usually lacks.
  if (process.getuid?.() === 0) args.push("--no-sandbox");
  browser = await puppeteer.launch({
    executablePath: opts.chromium, headless: true, args, userDataDir: opts["user-data-dir"], protocolTimeout: 60_000,
  });
  console.log(`browser ${await browser.version()} (puppeteer-core ${JSON.parse(readFileSync(new URL("./node_modules/puppeteer-core/package.json", import.meta.url), "utf8")).version})`);
  for (let i = 0; i < EXPOSITIONS.length; i++) {
    if (found[i].tool && found[i].html) await render(browser, hostUrl, EXPOSITIONS[i], found[i]);
    else fail(`${EXPOSITIONS[i].label}: the browser run`, "skipped: no linked tool or no page to render");
  }
} catch (e) {
  fail("the run", e.stack ?? e.message);
} finally {
  await browser?.close().catch(() => undefined);
  host?.close();
  for (const c of clients) await c.close().catch(() => undefined);
}

console.log(`\n${failures.length ? `${failures.length} check(s) failed` : "every check passed"} in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${opts.out}`);
for (const f of failures) console.log(`  failed: ${f}`);
process.exit(failures.length ? 1 : 0);
