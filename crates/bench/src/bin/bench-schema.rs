//! `bench-schema`: what compiling one input schema costs a process in memory. It prints the
//! peak RSS (and its anonymous and file-backed parts) at start, after `jsonschema` compiles
//! `{}` — which it takes without the draft 2020-12 meta-schema check — and after it compiles
//! the benchmark tool's input schema as the framework does (the meta-schema check first).
//! Nothing else runs in between, so each step's growth is that step's own.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

/// The benchmark tool's input, as `bench-fusion` declares it.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct GetInvoice {
    /// The invoice's id.
    #[schemars(length(min = 1))]
    id: String,
}

/// `VmHWM`, `RssAnon` and `RssFile` of this process, in KiB.
fn memory() -> anyhow::Result<Value> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib = |key: &str| -> Option<u64> {
        let line = status.lines().find(|line| line.starts_with(key))?;
        line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()
    };
    Ok(json!({ "peak_rss_kib": kib("VmHWM:"), "anon_kib": kib("RssAnon:"), "file_kib": kib("RssFile:") }))
}

fn compile(schema: &Value) -> anyhow::Result<jsonschema::Validator> {
    Ok(jsonschema::draft202012::options().should_validate_formats(true).build(schema)?)
}

fn main() -> anyhow::Result<()> {
    let tool = serde_json::to_value(schemars::schema_for!(GetInvoice))?;
    println!("{}", json!({ "step": "start", "memory": memory()? }));
    let empty = compile(&json!({}))?;
    println!("{}", json!({ "step": "{} compiled", "memory": memory()? }));
    let checked = compile(&tool)?;
    println!("{}", json!({ "step": "tool schema compiled", "memory": memory()? }));
    // Both used, so neither is dropped (nor optimised away) before the figures are read.
    let valid = empty.is_valid(&json!({"id": "inv_1"})) && checked.is_valid(&json!({"id": "inv_1"}));
    println!("{}", json!({ "step": "both used", "valid": valid, "memory": memory()? }));
    Ok(())
}
