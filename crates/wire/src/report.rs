//! The parsed envelope as one JSON object: the output of `fusion parse --json` and of a failed
//! `fusion call --json`.

use serde_json::{Value, json};

use crate::parse::Envelope;

impl Envelope {
    /// The envelope as one JSON object: `is_error`, `code`, `severity`, `message`,
    /// `recovery`, `available_actions`, `details` (`[[key, value]]`), `retry_after`, `fields`
    /// (`[{name, text}]`), `contract_changes` and `action`. `is_error` is the result's flag
    /// when known, else `severity != "warning"`.
    ///
    /// Each contract change is written by the serde derive of
    /// [`ContractChange`](crate::ContractChange) (`before` and `after` null when absent), the
    /// same shape as the deltas of a contract diff.
    ///
    /// ```
    /// let envelope = mcp_fusion_wire::parse("<tool_error code=\"RATE_LIMITED\">\n<message>slow</message>\n<retry_after>3 seconds</retry_after>\n</tool_error>");
    /// let json = envelope.to_json(None);
    /// assert_eq!(json["code"], "RATE_LIMITED");
    /// assert_eq!(json["retry_after"], 3);
    /// assert_eq!(json["is_error"], true);
    /// ```
    pub fn to_json(&self, is_error: Option<bool>) -> Value {
        let error = &self.error;
        let changes = self.contract_awareness.as_ref().map_or(&[][..], |a| &a.changes);
        json!({
            "is_error": is_error.unwrap_or_else(|| self.is_error()),
            "code": error.code.as_str(),
            "severity": error.severity.as_str(),
            "message": error.message,
            "recovery": error.recovery,
            "available_actions": error.available_actions,
            "details": error.details.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
            "retry_after": error.retry_after,
            "fields": self.fields.iter().map(|f| json!({"name": f.name, "text": f.text})).collect::<Vec<_>>(),
            "contract_changes": changes,
            "action": self.action,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::{ChangeSeverity, ContractAwareness, ContractChange, Envelope, FieldProblem, ValidationError, parse};
    use serde_json::json;

    #[test]
    fn validation_error_with_contract_changes() {
        let error = ValidationError::new("billing.get_invoice")
            .field(FieldProblem { name: "id".into(), text: "bad.".into() })
            .with_contract_awareness(ContractAwareness {
                tool: "billing".into(),
                action: "billing.get_invoice".into(),
                changes: vec![ContractChange {
                    severity: ChangeSeverity::Breaking,
                    field: "f".into(),
                    description: "d".into(),
                    before: None,
                    after: Some("[]".into()),
                }],
            });
        assert_eq!(
            parse(&error.render()).to_json(None),
            json!({
                "is_error": true, "code": "VALIDATION_ERROR", "severity": "error",
                "message": "Invalid arguments for billing.get_invoice.",
                "recovery": "Fix the fields above and call the tool again. Do not explain the error.",
                "available_actions": [], "details": [], "retry_after": null,
                "fields": [{"name": "id", "text": "bad."}],
                "contract_changes": [{"severity": "BREAKING", "field": "f", "description": "d", "before": null, "after": "[]"}],
                "action": "billing.get_invoice",
            })
        );
        let _ = Envelope::from(error);
    }

    #[test]
    fn a_custom_severity_prints_as_sent_and_is_an_error() {
        let printed =
            parse("<tool_error code=\"X\" severity=\"fatal&amp;\">\n<message>m</message>\n</tool_error>").to_json(None);
        assert_eq!((&printed["severity"], &printed["is_error"]), (&json!("fatal&"), &json!(true)));
        // The result's flag, when known, still wins.
        assert_eq!(
            parse("<tool_error severity=\"fatal\"><message>m</message></tool_error>").to_json(Some(false))["is_error"],
            false
        );
    }

    #[test]
    fn contract_changes_print_as_they_did_by_hand() {
        let changes: Vec<ContractChange> = [
            (ChangeSeverity::Breaking, Some("[\"id\"]"), None),
            (ChangeSeverity::Risky, None, Some("{\"type\":\"object\"}")),
            (ChangeSeverity::Safe, None, None),
            (ChangeSeverity::Cosmetic, Some("\"a\""), Some("\"b <&> \\\"c\\\"\"")),
        ]
        .into_iter()
        .map(|(severity, before, after)| ContractChange {
            severity,
            field: format!("actions.x.{severity}"),
            description: format!("Changed \"{severity}\"."),
            before: before.map(str::to_owned),
            after: after.map(str::to_owned),
        })
        .collect();
        let envelope = Envelope::from(ValidationError::new("g.x").with_contract_awareness(ContractAwareness {
            tool: "g".into(),
            action: "g.x".into(),
            changes: changes.clone(),
        }));
        let by_hand: Vec<_> = changes
            .iter()
            .map(|c| {
                json!({
                    "severity": c.severity.as_str(),
                    "field": c.field,
                    "description": c.description,
                    "before": c.before,
                    "after": c.after,
                })
            })
            .collect();
        let printed = envelope.to_json(None);
        assert_eq!(
            serde_json::to_string(&printed["contract_changes"]).unwrap(),
            serde_json::to_string(&by_hand).unwrap()
        );
        assert_eq!(
            printed["contract_changes"][2],
            json!({"severity": "SAFE", "field": "actions.x.SAFE", "description": "Changed \"SAFE\".", "before": null, "after": null})
        );
        let none = parse("plain text").to_json(Some(true));
        assert_eq!(none["contract_changes"], json!([]));
    }
}
