//! Render and parse costs of the envelopes: `cargo bench -p mcp-fusion-wire`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_fusion_wire::{Bound, FieldPath, FieldProblem, ProblemKind, Sent, ToolError, ValidationError, parse};
use serde_json::json;

/// A tool error with every element: code, message, recovery, actions, details, retry delay.
fn full_envelope() -> ToolError {
    ToolError::not_found("No invoice with that ID")
        .suggest("List invoices first, then retry with a real ID")
        .actions(["billing.list_invoices"])
        .detail("requestedId", "inv_2026_9999")
        .retry_after(30)
}

/// A typical three-field validation error of the demo's `create_invoice`.
fn three_field_validation() -> ValidationError {
    let args = json!({"customer_email": "not-an-email", "amount_cents": 0, "currency": "eur"});
    ValidationError::new("billing.create_invoice")
        .field(FieldProblem::new(
            &FieldPath::root().key("amount_cents"),
            &ProblemKind::TooSmall(Bound::Number { limit: 1.into(), exclusive: false }),
            &Sent::value(&args["amount_cents"]),
        ))
        .field(FieldProblem::new(
            &FieldPath::root().key("currency"),
            &ProblemKind::InvalidValue { allowed: vec![json!("EUR"), json!("USD"), json!("BRL")] },
            &Sent::value(&args["currency"]),
        ))
        .field(FieldProblem::new(
            &FieldPath::root().key("customer_email"),
            &ProblemKind::InvalidFormat { format: "email".into() },
            &Sent::value(&args["customer_email"]),
        ))
}

fn render(c: &mut Criterion) {
    let full = full_envelope();
    c.bench_function("render/tool_error_full", |b| b.iter(|| black_box(&full).render()));
    let validation = three_field_validation();
    c.bench_function("render/validation_error_3_fields", |b| b.iter(|| black_box(&validation).render()));
}

fn parse_typical(c: &mut Criterion) {
    let full = full_envelope().render();
    c.bench_function("parse/tool_error_full", |b| b.iter(|| parse(black_box(&full))));
    let validation = three_field_validation().render();
    c.bench_function("parse/validation_error_3_fields", |b| b.iter(|| parse(black_box(&validation))));
}

fn parse_large(c: &mut Criterion) {
    // A 1 MiB envelope: a long message with escapes, and many details.
    let message = "Tom & Jerry <b>".repeat(40_000);
    let mut err = ToolError::not_found(message).suggest("Retry with a real ID");
    let mut i = 0;
    while err.render().len() < 1 << 20 {
        err = err.detail(format!("key_{i}"), "value with <angle> & ampersand ".repeat(8));
        i += 1;
    }
    let text = err.render();
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(30);
    group.bench_function("envelope_1MiB", |b| b.iter(|| parse(black_box(&text))));
    group.finish();
}

criterion_group!(benches, render, parse_typical, parse_large);
criterion_main!(benches);
