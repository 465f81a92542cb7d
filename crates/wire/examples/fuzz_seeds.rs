//! Writes the seed corpus of the `wire_parse` fuzz target: the expected envelope text of every
//! golden vector that has one, and a few validation errors (the vectors hold none), one file
//! each.
//!
//! ```text
//! cargo run -q -p mcp-fusion-wire --example fuzz_seeds -- VECTORS.jsonl OUT_DIR
//! ```
//!
//! Seeds are generated rather than committed so that they follow the vectors.

use std::process::ExitCode;
use std::{env, fs, path::PathBuf};

use mcp_fusion_wire::{
    ChangeSeverity, ContractAwareness, ContractChange, FieldPath, FieldProblem, ProblemKind, Sent, ValidationError,
};
use serde_json::{Value, json};

fn validation_errors() -> Vec<String> {
    let args = json!({"customer_email": "not-an-email\u{202e}", "amount_cents": 0});
    let plain = ValidationError::new("billing.create_invoice")
        .field(FieldProblem::new(
            &FieldPath::root().key("customer_email"),
            &ProblemKind::InvalidFormat { format: "email".into() },
            &Sent::value(&args["customer_email"]),
        ))
        .field(FieldProblem { name: "a\"b&c".into(), text: "x < y & 'z'.".into() });
    let aware = plain.clone().with_contract_awareness(ContractAwareness {
        tool: "billing".into(),
        action: "billing.create_invoice".into(),
        changes: vec![ContractChange {
            severity: ChangeSeverity::Breaking,
            field: "actions.create_invoice.required".into(),
            description: "Action \"create_invoice\" now requires new fields: [currency]".into(),
            before: Some(r#"["amount_cents"]"#.into()),
            after: None,
        }],
    });
    vec![ValidationError::new("a.b").render(), plain.render(), aware.render()]
}

fn main() -> ExitCode {
    let args: Vec<PathBuf> = env::args_os().skip(1).map(PathBuf::from).collect();
    let [vectors, out] = &args[..] else {
        eprintln!("usage: fuzz_seeds VECTORS.jsonl OUT_DIR");
        return ExitCode::from(2);
    };
    let text = match fs::read_to_string(vectors) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", vectors.display());
            return ExitCode::from(2);
        }
    };
    let mut seeds: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|case| case["expected"]["text"].as_str().map(str::to_owned))
        .collect();
    seeds.extend(validation_errors());
    if let Err(e) = fs::create_dir_all(out) {
        eprintln!("error: cannot create {}: {e}", out.display());
        return ExitCode::from(2);
    }
    for (n, seed) in seeds.iter().enumerate() {
        let path = out.join(format!("seed-{n:03}"));
        if let Err(e) = fs::write(&path, seed) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    println!("{} seeds in {}", seeds.len(), out.display());
    ExitCode::SUCCESS
}
