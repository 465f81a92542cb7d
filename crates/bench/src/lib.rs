//! Side by side: one tool, `billing` with the action `get_invoice`, served by rmcp alone
//! (`bench-raw`, its arguments checked by hand) and by MCP Fusion (`bench-fusion`), and a
//! driver (`bench-drive`) that speaks raw JSON-RPC to either over stdio or Streamable HTTP and
//! reports calls/s, latency, the server's CPU per call and its peak RSS.
//!
//! The driver costs the server nothing it would not pay for any client: it writes
//! pre-rendered requests, keeps a fixed number in flight (pipelined on stdio, one keep-alive
//! connection each on HTTP) and reads only the id and `isError` of each answer.
//! `crates/bench/compare.py` runs the servers round-robin and writes the table in
//! `docs/benchmarks.md`.

pub mod drive;
pub mod serve;

/// The invoice every `get_invoice` answers with: the same on both sides.
pub fn invoice(id: &str) -> serde_json::Value {
    serde_json::json!({
        "id": id,
        "customer_email": "ada@example.com",
        "amount_cents": 12_500,
        "currency": "EUR",
        "status": "open",
        "due_date": "2026-12-31",
    })
}
