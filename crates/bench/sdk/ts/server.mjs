// The benchmark's tool on the official TypeScript MCP SDK, over stdio: `billing` with the
// action `get_invoice`, its arguments checked by the SDK against a zod schema.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "bench-ts-sdk", version: "0.1.0" });

server.registerTool(
  "billing",
  {
    description: "Invoices.",
    inputSchema: { action: z.literal("get_invoice"), id: z.string().min(1) },
  },
  async ({ id }) => {
    const invoice = {
      id,
      customer_email: "ada@example.com",
      amount_cents: 12500,
      currency: "EUR",
      status: "open",
      due_date: "2026-12-31",
    };
    return { content: [{ type: "text", text: JSON.stringify(invoice) }], structuredContent: invoice };
  },
);

await server.connect(new StdioServerTransport());
