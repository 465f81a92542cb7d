//! The deprecation guard: a deprecated action, or a deprecated field that was sent, still
//! runs, and its result carries a `DEPRECATED` warning naming the replacement.

use futures_util::future::BoxFuture;
use mcp_fusion_wire::ToolError;
use serde_json::{Map, Value};

use super::entry::GuardedEntry;
use crate::error::BuildError;
use crate::middleware::{Call, Middleware, Next, Outcome};
use std::sync::Arc;

/// The warnings of one action.
pub(crate) struct Deprecation {
    action: Option<ToolError>,
    fields: Vec<(String, ToolError)>,
}

impl Deprecation {
    /// The guard of `qualified`, when it or any field of its input is deprecated.
    /// `replacement` is `Some` for a deprecated action (naming its replacement, if any);
    /// `declared` are the fields declared deprecated on the action, which win over those the
    /// schema marks `deprecated: true`.
    pub(crate) fn new(
        qualified: &str,
        replacement: Option<Option<&str>>,
        input: &Map<String, Value>,
        declared: &[(String, Option<String>)],
    ) -> Option<Deprecation> {
        let action = replacement.map(|replacement| action_warning(qualified, replacement));
        let fields: Vec<(String, ToolError)> = deprecated_fields(input, declared)
            .into_iter()
            .map(|(field, replacement)| {
                let warning = field_warning(qualified, &field, replacement.as_deref());
                (field, warning)
            })
            .collect();
        (action.is_some() || !fields.is_empty()).then_some(Deprecation { action, fields })
    }
}

impl Middleware for Deprecation {
    fn call(&self, call: Call, next: Next) -> BoxFuture<'static, Outcome> {
        if let Some(warning) = &self.action {
            call.warn(warning.clone());
        }
        for (field, warning) in &self.fields {
            if call.arguments().get(field).is_some() {
                call.warn(warning.clone());
            }
        }
        next.run(call)
    }

    fn name(&self) -> String {
        "deprecation".to_owned()
    }
}

/// The `DEPRECATED` warning of an action, naming its replacement.
fn action_warning(qualified: &str, replacement: Option<&str>) -> ToolError {
    let warning = ToolError::deprecated(format!("{qualified} is deprecated."));
    match replacement {
        Some(replacement) => warning.suggest(format!("Use {replacement} instead.")).actions([replacement]),
        None => warning.suggest("Stop relying on it: it will be removed."),
    }
}

/// The `DEPRECATED` warning of a field, naming its replacement.
fn field_warning(qualified: &str, field: &str, replacement: Option<&str>) -> ToolError {
    let warning = ToolError::deprecated(format!("The field \"{field}\" of {qualified} is deprecated."));
    let warning = match replacement {
        Some(replacement) => warning.suggest(format!("Send \"{replacement}\" instead of \"{field}\".")),
        None => warning.suggest(format!("Stop sending \"{field}\": it will be removed.")),
    };
    warning.actions([qualified]).detail("field", field)
}

/// The fields to warn about: those the schema marks `deprecated` and those declared with a
/// replacement (which wins).
fn deprecated_fields(
    input: &Map<String, Value>,
    declared: &[(String, Option<String>)],
) -> Vec<(String, Option<String>)> {
    let mut fields: Vec<(String, Option<String>)> = input
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter(|(_, schema)| schema.get("deprecated") == Some(&Value::Bool(true)))
        .map(|(name, _)| (name.clone(), None))
        .collect();
    for (field, replacement) in declared {
        fields.retain(|(name, _)| name != field);
        fields.push((field.clone(), replacement.clone()));
    }
    fields
}

/// The deprecation stage of `entry`, when it or one of its fields is deprecated.
pub(super) fn compile(entry: &GuardedEntry<'_>, layers: &mut Vec<Arc<dyn Middleware>>) -> Result<(), BuildError> {
    let asks = entry.asks;
    if let Some(deprecation) = Deprecation::new(entry.qualified, asks.deprecated, entry.input, asks.deprecated_fields) {
        layers.push(Arc::new(deprecation));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_fusion_wire::{ErrorCode, Severity};
    use serde_json::json;

    #[test]
    fn warnings_are_deprecated_warnings_naming_the_replacement() {
        let action = action_warning("billing.search", Some("billing.list_invoices"));
        assert_eq!((&action.code, &action.severity), (&ErrorCode::Deprecated, &Severity::Warning));
        assert_eq!(action.available_actions, ["billing.list_invoices"]);
        let field = field_warning("billing.list_invoices", "page", Some("cursor"));
        assert_eq!(field.severity, Severity::Warning);
        assert_eq!(field.recovery.as_deref(), Some("Send \"cursor\" instead of \"page\"."));
    }

    #[test]
    fn declared_fields_win_over_the_schema() {
        let input = json!({"properties": {"page": {"deprecated": true}, "q": {}}});
        let declared = [("page".to_owned(), Some("cursor".to_owned()))];
        assert_eq!(
            deprecated_fields(input.as_object().unwrap(), &declared),
            [("page".to_owned(), Some("cursor".to_owned()))]
        );
        assert!(Deprecation::new("a.b", None, &Map::new(), &[]).is_none());
    }
}
