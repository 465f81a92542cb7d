//! Streamable HTTP on a loopback port: as a client uses it, and as an attacker or a careless
//! client would. One test binary, one module per area.

mod hostile_http;
mod http;
mod mcp_2026;
mod scopes;
mod tasks;
mod tasks_2025;
mod tasks_experimental;
