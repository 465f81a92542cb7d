// A TypeScript SDK server whose tools are declared the way SDK users declare them: Zod shapes,
// the same shapes as fastmcp_server.py's pydantic models, so its inputSchemas are the ones
// the SDK writes with Zod's toJSONSchema.
//
// Every tool answers with exactly the arguments it received after Zod parsed them (JSON text
// and structured content), so a test sees both that the call arrived and how it was read: an
// unknown key z.object() stripped is missing from the echo.
//
//     node ts_server.mjs        # serves MCP over stdio
//
// If CALL_LOG names a file, each tools/call is appended to it (the tool's name, one line)
// before Zod sees the arguments: the proof that a call the gateway refused never got here.
import { appendFileSync } from "node:fs";

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const server = new McpServer({ name: "schemas-ts", version: "1.0.0" });

// McpServer publishes a tool's Zod schema as Zod's JSON Schema (with "$schema" and
// "properties"), or {"type":"object","properties":{}} for a tool without one: it has no way to
// publish a bare {"type":"object"}. So its tools/list answer is amended on the low-level Server,
// for the one tool listed in ROOT_SCHEMAS, and its tools/call handler is wrapped for CALL_LOG.
const ROOT_SCHEMAS = { raw: { type: "object" } };
const callLog = process.env.CALL_LOG;
const setRequestHandler = server.server.setRequestHandler.bind(server.server);
server.server.setRequestHandler = (schema, handler) => {
  if (schema === ListToolsRequestSchema) {
    return setRequestHandler(schema, async (request, extra) => {
      const listed = await handler(request, extra);
      for (const tool of listed.tools) tool.inputSchema = ROOT_SCHEMAS[tool.name] ?? tool.inputSchema;
      return listed;
    });
  }
  if (schema === CallToolRequestSchema && callLog) {
    return setRequestHandler(schema, (request, extra) => {
      appendFileSync(callLog, `${request.params.name}\n`);
      return handler(request, extra);
    });
  }
  return setRequestHandler(schema, handler);
};

/** A result echoing what the handler received, as text and as structured content. */
const echo = (args) => ({ content: [{ type: "text", text: JSON.stringify(args) }], structuredContent: args });
const tool = (name, description, inputSchema) =>
  server.registerTool(name, { description, inputSchema }, async (args) => echo(args ?? {}));

// ---- nested objects and an optional (nullable) object --------------------------------------
const Geo = z.object({ lat: z.number(), lon: z.number() });
const Address = z.object({ street: z.string(), zip_code: z.string(), geo: Geo });
tool("ship", "Ship to an address (an object two levels deep), billed to an optional one.", {
  address: Address,
  billing: Address.nullable().optional(),
  gift_note: z.string().nullable().optional(),
});

// ---- an array of objects, z.enum and z.literal ---------------------------------------------
tool("order", "Order items; priority and channel are optional, but not nullable.", {
  items: z.array(z.object({ sku: z.string(), qty: z.number().int() })),
  priority: z.enum(["low", "normal", "high"]).optional(),
  channel: z.literal("web").optional(),
});

// ---- a discriminated union -----------------------------------------------------------------
tool("adopt", "Adopt a cat or a dog, told apart by `kind`.", {
  pet: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("cat"), name: z.string(), meows: z.boolean() }),
    z.object({ kind: z.literal("dog"), name: z.string(), barks: z.number().int() }),
  ]),
});

// ---- plain unions (no discriminator) -------------------------------------------------------
tool("pick", "A scalar union and a union of two objects, told apart only by their keys.", {
  value: z.union([z.number().int(), z.string()]),
  shape: z.union([z.object({ radius: z.number() }), z.object({ side: z.number() })]),
});

// ---- an object that keeps unknown keys -----------------------------------------------------
tool("annotate", "A note that keeps whatever keys it is given besides `text`.", {
  note: z.looseObject({ text: z.string() }),
});

// ---- a recursive object --------------------------------------------------------------------
const Node = z.object({
  name: z.string(),
  get children() {
    return z.array(Node).optional();
  },
});
tool("grow", "A tree: each node has a name and children, nodes again.", { tree: Node });

// ---- formats: email, date-time, UUID ------------------------------------------------------
tool("contact", "Formats: an email address, a date-time, a UUID, and a list of email addresses.", {
  email: z.email(),
  when: z.iso.datetime(),
  id: z.uuid(),
  cc: z.array(z.email()).optional(),
});

// ---- free-form maps -----------------------------------------------------------------------
tool("store", "A map of anything under any keys, and a map of integers under any keys.", {
  data: z.record(z.string(), z.any()),
  counts: z.record(z.string(), z.number().int()).optional(),
});

// ---- no parameters, and a root schema of exactly {"type": "object"} ------------------------
server.registerTool("ping", { description: "No parameters at all." }, async () => echo({}));
tool("raw", "Any object at all.", z.looseObject({}));

await server.connect(new StdioServerTransport());
