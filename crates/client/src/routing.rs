//! From a qualified action (`billing.get_invoice`) to the tool and arguments that reach it,
//! whether the server exposes groups (one tool, a discriminator) or flat tools.

use rmcp::model::Tool;
use serde_json::{Map, Value};

/// How a server exposes its actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposition {
    /// One tool per group; a discriminator field names the action.
    Grouped,
    /// One tool per action.
    Flat,
}

/// Where one call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    pub tool: String,
    /// The discriminator field and the action name to put in it.
    pub discriminator: Option<(String, String)>,
}

impl Route {
    /// The arguments to send: the given ones, with the discriminator set.
    pub(crate) fn arguments(&self, mut arguments: Map<String, Value>) -> Map<String, Value> {
        if let Some((field, action)) = &self.discriminator {
            arguments.insert(field.clone(), Value::String(action.clone()));
        }
        arguments
    }
}

/// The tools of a server, read from `tools/list`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Routes {
    tools: Vec<Tool>,
}

impl Routes {
    pub(crate) fn new(tools: Vec<Tool>) -> Routes {
        Routes { tools }
    }

    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name.to_string()).collect()
    }

    /// Grouped when any tool picks its action with a discriminator.
    pub(crate) fn exposition(&self) -> Exposition {
        if self.tools.iter().any(|t| discriminator_of(t, None).is_some()) {
            Exposition::Grouped
        } else {
            Exposition::Flat
        }
    }

    /// The route of `action`: a tool of that exact name; else `group.name` as the
    /// discriminator value of tool `group`; else a flat tool `group{sep}name`.
    pub(crate) fn resolve(&self, action: &str) -> Option<Route> {
        if self.tools.iter().any(|t| t.name == action) {
            return Some(Route { tool: action.to_owned(), discriminator: None });
        }
        let (group, name) = action.split_once('.')?;
        if let Some(tool) = self.tools.iter().find(|t| t.name == group) {
            // A name the enum does not list still goes to the tool: its server says what
            // exists (an UNKNOWN_ACTION envelope with a did-you-mean).
            let field = discriminator_of(tool, Some(name)).or_else(|| discriminator_of(tool, None))?;
            return Some(Route { tool: group.to_owned(), discriminator: Some((field, name.to_owned())) });
        }
        self.tools
            .iter()
            .find(|t| {
                t.name
                    .strip_prefix(group)
                    .and_then(|rest| rest.strip_suffix(name))
                    .is_some_and(|sep| (1..=2).contains(&sep.len()) && sep.chars().all(|c| !c.is_alphanumeric()))
            })
            .map(|t| Route { tool: t.name.to_string(), discriminator: None })
    }
}

/// The discriminator of a grouped tool: a required string property with an `enum` (listing
/// `action`, when given), `action` preferred.
fn discriminator_of(tool: &Tool, action: Option<&str>) -> Option<String> {
    let schema = &tool.input_schema;
    let required: Vec<&str> =
        schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let properties = schema.get("properties").and_then(Value::as_object)?;
    let mut candidates: Vec<&str> = required
        .into_iter()
        .filter(|name| {
            let Some(enum_values) = properties.get(*name).and_then(|p| p.get("enum")).and_then(Value::as_array) else {
                return false;
            };
            action.is_none_or(|action| enum_values.iter().any(|v| v == action))
        })
        .collect();
    candidates.sort_by_key(|name| *name != "action");
    candidates.first().map(|name| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(name.to_owned(), "d", Arc::new(schema.as_object().cloned().unwrap()))
    }

    fn grouped() -> Routes {
        Routes::new(vec![tool(
            "billing",
            json!({"type": "object", "required": ["op"], "properties": {"op": {"type": "string", "enum": ["get", "list"]}}}),
        )])
    }

    #[test]
    fn grouped_tools_get_the_discriminator() {
        let routes = grouped();
        assert_eq!(routes.exposition(), Exposition::Grouped);
        let route = routes.resolve("billing.get").unwrap();
        assert_eq!(route, Route { tool: "billing".into(), discriminator: Some(("op".into(), "get".into())) });
        let args = route.arguments(json!({"id": 1}).as_object().cloned().unwrap());
        assert_eq!(Value::Object(args), json!({"id": 1, "op": "get"}));
        // Unknown actions still reach the tool, whose server knows better.
        assert_eq!(routes.resolve("billing.gte").unwrap().discriminator, Some(("op".into(), "gte".into())));
        assert_eq!(routes.resolve("crm.get"), None);
    }

    #[test]
    fn flat_tools_by_name_or_separator() {
        let routes =
            Routes::new(vec![tool("billing_get", json!({"type": "object"})), tool("ping", json!({"type": "object"}))]);
        assert_eq!(routes.exposition(), Exposition::Flat);
        assert_eq!(routes.resolve("billing.get").unwrap().tool, "billing_get");
        assert_eq!(routes.resolve("ping").unwrap().discriminator, None);
        assert_eq!(routes.resolve("billing.list"), None);
        assert_eq!(routes.resolve("billingxget"), None);
    }
}
