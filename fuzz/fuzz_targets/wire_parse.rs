//! The wire parser on any bytes, and render/parse round trips of envelopes drawn from them.
//!
//! The same input serves both: as text it is parsed (seeds are the golden vectors' envelopes),
//! and as entropy it builds a `ToolError` or a `ValidationError` that must read back exactly.
//!
//! The generated envelopes keep to the domain `crates/wire/tests/roundtrip.rs` asserts to
//! round-trip, no wider: a code and a custom severity are never empty (the contract reads an
//! empty code as `UNKNOWN` and an empty severity as `error`), errors are built through the
//! builders (so an empty recovery is no recovery, a retry delay of 0 is none, and a repeated
//! detail key keeps its first place), and change severities are the four the contract names.
//! Any string is allowed everywhere else.

#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcp_fusion_wire::{
    ChangeSeverity, ContractAwareness, ContractChange, Envelope, EnvelopeKind, ErrorCode, FieldProblem, Severity,
    ToolError, ValidationError, parse,
};

fn code(u: &mut Unstructured<'_>) -> Result<ErrorCode> {
    if u.arbitrary()? {
        return Ok(u.choose(ErrorCode::CANONICAL)?.clone());
    }
    let text: String = u.arbitrary()?;
    Ok(if text.is_empty() { ErrorCode::Conflict } else { ErrorCode::from(text) })
}

fn severity(u: &mut Unstructured<'_>) -> Result<Severity> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => Severity::Error,
        1 => Severity::Critical,
        2 => Severity::Warning,
        _ => {
            let text: String = u.arbitrary()?;
            if text.is_empty() { Severity::Error } else { Severity::from(text) }
        }
    })
}

fn tool_error(u: &mut Unstructured<'_>) -> Result<ToolError> {
    let message: String = u.arbitrary()?;
    let recovery: String = u.arbitrary()?;
    let actions: Vec<String> = u.arbitrary()?;
    let details: Vec<(String, String)> = u.arbitrary()?;
    Ok(ToolError::new(code(u)?, message)
        .suggest(recovery)
        .actions(actions)
        .details(details)
        .severity(severity(u)?)
        .retry_after(u.arbitrary()?))
}

fn change(u: &mut Unstructured<'_>) -> Result<ContractChange> {
    Ok(ContractChange {
        severity: *u.choose(&[
            ChangeSeverity::Breaking,
            ChangeSeverity::Risky,
            ChangeSeverity::Safe,
            ChangeSeverity::Cosmetic,
        ])?,
        field: u.arbitrary()?,
        description: u.arbitrary()?,
        before: u.arbitrary()?,
        after: u.arbitrary()?,
    })
}

fn validation_error(u: &mut Unstructured<'_>) -> Result<ValidationError> {
    let action = u.arbitrary()?;
    let fields: Vec<(String, String)> = u.arbitrary()?;
    let awareness = if u.arbitrary()? {
        let tool = u.arbitrary()?;
        let action = u.arbitrary()?;
        let count = u.int_in_range(0..=3usize)?;
        let changes = (0..count).map(|_| change(u)).collect::<Result<_>>()?;
        Some(ContractAwareness { tool, action, changes })
    } else {
        None
    };
    Ok(ValidationError {
        action,
        fields: fields.into_iter().map(|(name, text)| FieldProblem { name, text }).collect(),
        contract_awareness: awareness,
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let envelope = parse(&text);
    // Whatever the text, the model is told some code: text without an envelope is UNKNOWN.
    assert!(!envelope.error.code.as_str().is_empty(), "{text:?}");

    let mut u = Unstructured::new(data);
    let Ok(tool) = bool::arbitrary(&mut u) else { return };
    if tool {
        let Ok(err) = tool_error(&mut u) else { return };
        let rendered = err.render();
        let envelope = parse(&rendered);
        assert_eq!(envelope, Envelope::from(err.clone()), "{rendered}");
        assert_eq!(envelope.error.render(), rendered);
    } else {
        let Ok(err) = validation_error(&mut u) else { return };
        let rendered = err.render();
        let envelope = parse(&rendered);
        assert_eq!(envelope.kind, EnvelopeKind::ValidationError, "{rendered}");
        assert_eq!(envelope.to_validation_error(), Some(err.clone()), "{rendered}");
        assert_eq!(envelope, Envelope::from(err), "{rendered}");
    }
});
