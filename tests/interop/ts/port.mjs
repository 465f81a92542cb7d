// The official TypeScript MCP SDK lists a port and its original over stdio and compares them:
// the same tool names, each with the same hints. Exits 1 on any difference.
//
//   node port.mjs ORIGINAL_BINARY PORT_BINARY FILE_DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];

async function listed(command, file) {
  const client = new Client({ name: "port-check", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command, args: ["--file", file], stderr: "inherit" }));
  const { tools } = await client.listTools();
  await client.close();
  return Object.fromEntries(
    tools.map((tool) => [tool.name, Object.fromEntries(HINTS.map((hint) => [hint, tool.annotations?.[hint] ?? null]))]),
  );
}

const [originalBin, portBin, directory] = process.argv.slice(2);
const original = await listed(originalBin, `${directory}/original.json`);
const port = await listed(portBin, `${directory}/port.json`);
const sorted = (listing) => JSON.stringify(Object.keys(listing).sort().map((name) => [name, listing[name]]));
if (sorted(original) !== sorted(port) || Object.keys(port).length !== 7) {
  console.log(`the port lists ${JSON.stringify(port, null, 2)}\nits original ${JSON.stringify(original, null, 2)}`);
  process.exit(1);
}
console.log(`typescript sdk: ${Object.keys(port).length} tools, the same names and hints`);
