//! Rendering and parsing against each other: whatever is rendered parses back to the same
//! value, and no string makes the parser panic.

use mcp_fusion_wire::{
    ChangeSeverity, ContractAwareness, ContractChange, Envelope, EnvelopeKind, ErrorCode, FieldProblem, Severity,
    ToolError, ValidationError, parse,
};
use proptest::prelude::*;

/// Characters that stress the escaping and the parser, mixed with arbitrary unicode.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => any::<char>(),
        2 => prop::sample::select(vec!['<', '>', '&', '"', '\'', ';', '#', '/', '=', ',', ' ', '\n', '\r', '\t', '\0', '\u{7f}', '\u{feff}', '\u{2028}']),
        1 => prop::sample::select(vec!['é', '日', '🚀', '👨', '\u{200d}', '\u{301}']),
        2 => prop::char::range('a', 'z'),
    ]
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(any_char(), 0..40).prop_map(String::from_iter),
        1 => prop::sample::select(vec![
            String::new(),
            "&amp;".to_owned(),
            "&#60;".to_owned(),
            "</message>".to_owned(),
            "<tool_error code=\"X\">".to_owned(),
            "a, b".to_owned(),
            " padded ".to_owned(),
        ]),
    ]
}

fn any_code() -> impl Strategy<Value = ErrorCode> {
    // An empty code reads back as UNKNOWN by the contract, so codes are non-empty.
    prop_oneof![
        prop::sample::select(ErrorCode::CANONICAL.to_vec()),
        any_text()
            .prop_filter("the contract reads an empty code as UNKNOWN", |c| !c.is_empty())
            .prop_map(ErrorCode::from),
    ]
}

fn any_severity() -> impl Strategy<Value = Severity> {
    // An empty severity reads back as `error` by the contract, so custom ones are non-empty.
    prop_oneof![
        3 => prop::sample::select(vec![Severity::Error, Severity::Critical, Severity::Warning]),
        1 => any_text().prop_filter("the contract reads an empty severity as error", |s| !s.is_empty()).prop_map(Severity::from),
    ]
}

prop_compose! {
    fn any_tool_error()(
        code in any_code(),
        message in any_text(),
        recovery in any_text(),
        actions in prop::collection::vec(any_text(), 0..4),
        details in prop::collection::vec((any_text(), any_text()), 0..4),
        severity in any_severity(),
        retry_after in prop_oneof![Just(0u64), 1..100u64, Just(u64::MAX)],
    ) -> ToolError {
        ToolError::new(code, message)
            .suggest(recovery)
            .actions(actions)
            .details(details)
            .severity(severity)
            .retry_after(retry_after)
    }
}

fn any_change_severity() -> impl Strategy<Value = ChangeSeverity> {
    prop::sample::select(vec![
        ChangeSeverity::Breaking,
        ChangeSeverity::Risky,
        ChangeSeverity::Safe,
        ChangeSeverity::Cosmetic,
    ])
}

prop_compose! {
    fn any_change()(
        severity in any_change_severity(),
        field in any_text(),
        description in any_text(),
        before in proptest::option::of(any_text()),
        after in proptest::option::of(any_text()),
    ) -> ContractChange {
        ContractChange { severity, field, description, before, after }
    }
}

prop_compose! {
    fn any_awareness()(
        tool in any_text(),
        action in any_text(),
        changes in prop::collection::vec(any_change(), 0..4),
    ) -> ContractAwareness {
        ContractAwareness { tool, action, changes }
    }
}

prop_compose! {
    fn any_validation_error()(
        action in any_text(),
        fields in prop::collection::vec((any_text(), any_text()), 0..5),
        awareness in proptest::option::of(any_awareness()),
    ) -> ValidationError {
        ValidationError {
            action,
            fields: fields.into_iter().map(|(name, text)| FieldProblem { name, text }).collect(),
            contract_awareness: awareness,
        }
    }
}

/// XML-ish fragments, so random input often gets deep into the parser's structured paths.
fn xmlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "<tool_error",
            "<validation_error",
            " code=\"",
            " severity=\"",
            " action=\"",
            " key=\"",
            " name=\"",
            "\"",
            "'",
            ">",
            "/>",
            "<",
            "</",
            "\n",
            "  ",
            "<message>",
            "</message>",
            "<recovery>",
            "</recovery>",
            "<available_actions>",
            "</available_actions>",
            "<action>",
            "</action>",
            "<details>",
            "</details>",
            "<detail key=\"k\">",
            "</detail>",
            "<retry_after>",
            "</retry_after>",
            "<field name=\"f\">",
            "</field>",
            "<contract_awareness>",
            "</contract_awareness>",
            "<contract_changes>",
            "</contract_changes>",
            "<change severity=\"BREAKING\" field=\"x\">",
            "</change>",
            "<before>",
            "</before>",
            "</tool_error>",
            "</validation_error>",
            "&",
            "&amp;",
            "&#",
            "&#x",
            "&#x1F680;",
            "&#55296;",
            ";",
            ",",
            "30 seconds",
        ])
        .prop_map(str::to_owned),
        any_text(),
    ];
    prop::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn tool_error_round_trips(err in any_tool_error()) {
        let text = err.render();
        let envelope = parse(&text);
        prop_assert_eq!(&envelope, &Envelope::from(err.clone()));
        prop_assert_eq!(envelope.error.render(), text);
    }

    #[test]
    fn validation_error_round_trips(err in any_validation_error()) {
        let text = err.render();
        let envelope = parse(&text);
        prop_assert_eq!(envelope.kind, EnvelopeKind::ValidationError);
        prop_assert_eq!(envelope.to_validation_error(), Some(err.clone()));
        prop_assert_eq!(&envelope, &Envelope::from(err));
    }

    #[test]
    fn parse_never_panics_on_any_string(text in any::<String>()) {
        let _ = parse(&text);
    }

    #[test]
    fn parse_never_panics_on_xmlish_text(text in xmlish()) {
        let envelope = parse(&text);
        prop_assert!(!envelope.error.code.as_str().is_empty());
    }

    #[test]
    fn parse_never_panics_on_cut_or_spliced_envelopes(err in any_validation_error(), tool in any_tool_error(), cut in any::<prop::sample::Index>()) {
        let text = format!("{}\n{}", tool.render(), err.render());
        let mut at = cut.index(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let _ = parse(&text[..at]);
        let _ = parse(&text[at..]);
    }
}

/// Inputs built to make a careless parser quadratic or loop forever. There is no timing
/// assertion: a parser that is linear finishes these in milliseconds, and one that is not
/// does not finish at all.
#[test]
fn adversarial_megabyte_inputs_finish() {
    const MIB: usize = 1 << 20;
    let inputs = [
        "<a x='".repeat(MIB / 6),
        "<a x=\"".repeat(MIB / 6),
        "&".repeat(MIB),
        "&#x".repeat(MIB / 3),
        "</".repeat(MIB / 2),
        "<tool_error\n".repeat(MIB / 12),
        format!("<tool_error code=\"X\">{}", "<message>".repeat(MIB / 9)),
        format!("<tool_error code=\"X\">{}", "<details><detail key=\"k\">".repeat(MIB / 25)),
        format!("<validation_error action=\"a\">{}", "<field name=\"".repeat(MIB / 13)),
        format!("<tool_error code=\"X\"><available_actions>{}", "a,".repeat(MIB / 2)),
        format!("<tool_error {}>", "a=\"b\" ".repeat(MIB / 6)),
        "<".repeat(MIB),
        // Text with no root, where the parser looks for a bare `<message>`.
        "<message>".repeat(MIB / 9),
        "<message x=\"".repeat(MIB / 13),
        "<a><message/>".repeat(MIB / 13),
    ];
    for input in &inputs {
        let envelope = parse(input);
        assert!(!envelope.error.message.is_empty() || envelope.kind != EnvelopeKind::Text);
    }
}
