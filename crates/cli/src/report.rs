//! Envelopes as a person reads them.

use std::fmt::Write as _;

use mcp_fusion_wire::{Envelope, Severity};

/// The envelope as `fusion call` prints one: `warning: ` or `error: ` by its severity, then
/// its [`envelope`] report.
pub fn labelled(envelope: &Envelope) -> String {
    let label = if envelope.error.severity == Severity::Warning { "warning" } else { "error" };
    format!("{label}: {}", self::envelope(envelope))
}

/// The error as readable text, in the envelope's own order: code and message, the fields
/// (what is wrong), then recovery (what to do), actions, details, retry delay and contract
/// changes, each on its own lines.
pub fn envelope(envelope: &Envelope) -> String {
    let error = &envelope.error;
    let mut out = format!("{} ({}): {}\n", error.code, error.severity, error.message.trim());
    if !envelope.fields.is_empty() {
        out.push_str("  fields:\n");
        for field in &envelope.fields {
            let _ = writeln!(out, "    {}: {}", field.name, field.text);
        }
    }
    if let Some(recovery) = &error.recovery {
        let _ = writeln!(out, "  recovery: {}", recovery.trim());
    }
    if !error.available_actions.is_empty() {
        let _ = writeln!(out, "  available actions: {}", error.available_actions.join(", "));
    }
    for (key, value) in &error.details {
        let _ = writeln!(out, "  detail {key}: {value}");
    }
    if let Some(seconds) = error.retry_after {
        let _ = writeln!(out, "  retry after: {seconds} s");
    }
    if let Some(awareness) = &envelope.contract_awareness {
        let _ = writeln!(out, "  contract changes of {}:", awareness.action);
        for change in &awareness.changes {
            let _ = writeln!(out, "    {} {}: {}", change.severity, change.field, change.description);
        }
    }
    out
}
