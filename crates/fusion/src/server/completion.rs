//! `completion/complete`: the values an argument of a prompt, or a parameter of a resource
//! template, may take — from the completer its author gave, else from the values its schema
//! allows (an enum's).

use std::collections::HashMap;
use std::sync::Arc;

use mcp_fusion_wire::Sent;
use rmcp::ErrorData;
use rmcp::model::CompletionInfo;
use serde_json::{Map, Value, json};

pub(crate) use crate::completer::{Completer, StateCompleter};
use crate::validation::property_names;

/// The completers of one prompt or template, and the schema of its arguments.
#[derive(Default)]
pub(crate) struct Completions {
    completers: HashMap<String, Completer>,
    schema: Map<String, Value>,
}

impl Completions {
    /// Binds `completers` to `state`.
    pub(crate) fn new<S: Send + Sync + 'static>(
        completers: Vec<(String, StateCompleter<S>)>,
        schema: &Map<String, Value>,
        state: &Arc<S>,
    ) -> Completions {
        let completers = completers
            .into_iter()
            .map(|(argument, completer)| {
                let state = Arc::clone(state);
                let bound: Completer = Arc::new(move |prefix| completer(Arc::clone(&state), prefix));
                (argument, bound)
            })
            .collect();
        Completions { completers, schema: schema.clone() }
    }

    /// The argument names a completer is given for that the schema does not have.
    pub(crate) fn unknown_arguments(&self) -> Vec<&str> {
        let fields = property_names(&self.schema);
        self.completers.keys().map(String::as_str).filter(|name| !fields.iter().any(|f| f == name)).collect()
    }

    /// The values `argument` may take that start with `prefix` (ignoring case), at most 100,
    /// with how many there are. `of` names the prompt or template, for an unknown argument.
    pub(crate) async fn complete(&self, of: &str, argument: &str, prefix: &str) -> Result<CompletionInfo, ErrorData> {
        let fields = property_names(&self.schema);
        if !fields.iter().any(|field| field == argument) {
            return Err(ErrorData::invalid_params(
                format!(
                    "{of} has no argument {}. Its arguments: {}.",
                    Sent::text(argument),
                    if fields.is_empty() { "none".to_owned() } else { fields.join(", ") }
                ),
                Some(json!({"argument": super::resources::echoed(argument), "arguments": fields})),
            ));
        }
        let values = match self.completers.get(argument) {
            Some(completer) => completer(prefix.to_owned()).await,
            None => allowed_values(&self.schema, argument),
        };
        let prefix = prefix.to_lowercase();
        let matching: Vec<String> =
            values.into_iter().filter(|value| value.to_lowercase().starts_with(&prefix)).collect();
        let total = matching.len();
        let shown: Vec<String> = matching.into_iter().take(CompletionInfo::MAX_VALUES).collect();
        let has_more = total > shown.len();
        CompletionInfo::with_pagination(shown, Some(u32::try_from(total).unwrap_or(u32::MAX)), has_more)
            .map_err(|reason| ErrorData::internal_error(reason, None))
    }
}

/// The string values the schema of `field` allows, when it lists them (`enum`, or `const`s
/// in `oneOf`/`anyOf`); none otherwise.
fn allowed_values(schema: &Map<String, Value>, field: &str) -> Vec<String> {
    let Some(field) = schema.get("properties").and_then(|p| p.get(field)) else { return Vec::new() };
    if let Some(values) = field.get("enum").and_then(Value::as_array) {
        return values.iter().filter_map(Value::as_str).map(str::to_owned).collect();
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|key| field.get(*key).and_then(Value::as_array))
        .flatten()
        .filter_map(|branch| branch.get("const").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_enums_values_complete_by_prefix() {
        let schema = json!({"type": "object", "properties": {
            "tone": {"type": "string", "enum": ["friendly", "firm"]},
            "kind": {"oneOf": [{"const": "a", "description": "A"}, {"const": "b"}]},
            "id": {"type": "string"},
        }});
        let completions = Completions { completers: HashMap::new(), schema: schema.as_object().unwrap().clone() };
        let run = |argument: &'static str, prefix: &'static str| {
            let completions = &completions;
            async move { completions.complete("The prompt 'x'", argument, prefix).await }
        };
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            assert_eq!(run("tone", "f").await.unwrap().values, ["friendly", "firm"]);
            assert_eq!(run("tone", "FI").await.unwrap().values, ["firm"]);
            assert_eq!(run("kind", "").await.unwrap().values, ["a", "b"]);
            assert!(run("id", "inv").await.unwrap().values.is_empty());
            let error = run("mood", "").await.unwrap_err();
            assert_eq!(error.message, "The prompt 'x' has no argument 'mood'. Its arguments: tone, kind, id.");
        });
    }
}
