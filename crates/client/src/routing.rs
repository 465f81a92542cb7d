//! From a qualified action (`billing.get_invoice`) to the tool and arguments that reach it,
//! whether the server exposes groups (one tool, a discriminator) or flat tools.
//!
//! A tool that publishes its route in `_meta` is routed exactly as it says; only a tool that
//! publishes nothing (an older server of this framework, or another implementation) has its
//! route guessed from its schema and name.

use mcp_fusion_contract::{Exposition, PublishedRoute, published_route, split_qualified};
use rmcp::model::Tool;
use serde_json::{Map, Value};

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

/// The tools of a server, read from `tools/list`, with the route each publishes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Routes {
    tools: Vec<Tool>,
    /// `published[i]` is the route `tools[i]` publishes, if any.
    published: Vec<Option<PublishedRoute>>,
}

impl Routes {
    pub(crate) fn new(tools: Vec<Tool>) -> Routes {
        let published = tools.iter().map(published_route).collect();
        Routes { tools, published }
    }

    pub(crate) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|t| t.name.to_string()).collect()
    }

    fn listed(&self) -> impl Iterator<Item = (&Tool, Option<&PublishedRoute>)> {
        self.tools.iter().zip(self.published.iter().map(Option::as_ref))
    }

    /// The tools that publish no route: the only ones whose route is guessed.
    fn unpublished(&self) -> impl Iterator<Item = &Tool> {
        self.listed().filter(|(_, published)| published.is_none()).map(|(tool, _)| tool)
    }

    /// How the server exposes its actions: what its tools publish (grouped first, then flat
    /// with the separator its tool names use), else a grouped tool recognised by its schema;
    /// `None` when its tools say neither.
    pub(crate) fn exposition(&self) -> Option<Exposition> {
        let published = || self.listed().filter_map(|(tool, route)| Some((tool, route?)));
        published()
            .find_map(|(_, route)| match route {
                PublishedRoute::Grouped { discriminator, .. } => {
                    Some(Exposition::Grouped { discriminator: discriminator.clone() })
                }
                PublishedRoute::Flat { .. } => None,
            })
            .or_else(|| {
                published().find_map(|(tool, route)| match route {
                    PublishedRoute::Flat { action } => {
                        let (group, name) = split_qualified(action)?;
                        let separator = tool.name.strip_prefix(group)?.strip_suffix(name)?;
                        Some(Exposition::Flat { separator: separator.to_owned() })
                    }
                    PublishedRoute::Grouped { .. } => None,
                })
            })
            .or_else(|| {
                self.unpublished()
                    .find_map(|tool| discriminator_of(tool, None))
                    .map(|discriminator| Exposition::Grouped { discriminator })
            })
    }

    /// The route of `action`: a tool of that exact name; else the flat tool that publishes
    /// `action`; else, for `group.name`, tool `group` with its discriminator set to `name`;
    /// else a flat tool that publishes nothing, named `group{sep}name`; else, for a group
    /// whose own name has dots (`crm.billing.get_invoice`, an upstream's group `billing`
    /// mounted as `crm`), the longest such tool `crm.billing` with its discriminator set to
    /// the rest.
    pub(crate) fn resolve(&self, action: &str) -> Option<Route> {
        if self.tools.iter().any(|t| t.name == action) {
            return Some(Route { tool: action.to_owned(), discriminator: None });
        }
        let served =
            self.listed().find(|(_, route)| matches!(route, Some(PublishedRoute::Flat { action: a }) if a == action));
        if let Some((tool, _)) = served {
            return Some(Route { tool: tool.name.to_string(), discriminator: None });
        }
        let (group, name) = split_qualified(action)?;
        if let Some(route) = self.grouped(group, name) {
            return Some(route);
        }
        let guessed_flat = self.unpublished().find(|t| {
            t.name
                .strip_prefix(group)
                .and_then(|rest| rest.strip_suffix(name))
                .is_some_and(|sep| (1..=2).contains(&sep.len()) && sep.chars().all(|c| !c.is_alphanumeric()))
        });
        if let Some(tool) = guessed_flat {
            return Some(Route { tool: tool.name.to_string(), discriminator: None });
        }
        // Last, so that no name the rules above already route changes its route. The tool's
        // name ends at a later dot, tried from the last: an action's own name may hold dots
        // too (`crm.files.read.v2` reaches `crm.files` when there is no `crm.files.read`).
        let after_first_dot = group.len() + 1;
        action[after_first_dot..]
            .rmatch_indices('.')
            .map(|(at, _)| action.split_at(after_first_dot + at))
            .find_map(|(group, dot_name)| self.grouped(group, &dot_name[1..]))
    }

    /// Tool `group` with its discriminator set to `name`, when `group` is a grouped tool.
    fn grouped(&self, group: &str, name: &str) -> Option<Route> {
        if name.is_empty() {
            return None;
        }
        let (tool, route) = self.listed().find(|(t, _)| t.name == group)?;
        // A name the tool does not list still goes to it: its server says what exists (an
        // UNKNOWN_ACTION envelope with a did-you-mean).
        let field = match route {
            Some(PublishedRoute::Grouped { discriminator, .. }) => discriminator.clone(),
            Some(PublishedRoute::Flat { .. }) => return None,
            None => discriminator_of(tool, Some(name)).or_else(|| discriminator_of(tool, None))?,
        };
        Some(Route { tool: group.to_owned(), discriminator: Some((field, name.to_owned())) })
    }
}

/// The discriminator of a grouped tool that publishes none: a required string property with
/// an `enum` (listing `action`, when given), `action` preferred.
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
    use mcp_fusion_contract::{ACTION_META_KEY, ACTIONS_META_KEY, DISCRIMINATOR_META_KEY};
    use rmcp::model::MetaObject;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(name.to_owned(), "d", Arc::new(schema.as_object().cloned().unwrap()))
    }

    fn with_meta(mut tool: Tool, meta: Value) -> Tool {
        tool.meta = Some(MetaObject(meta.as_object().cloned().unwrap()));
        tool
    }

    /// A grouped tool as a server of this framework publishes it.
    fn published_group(name: &str, discriminator: &str, actions: &[&str], schema: Value) -> Tool {
        let contracts: Map<String, Value> =
            actions.iter().map(|a| ((*a).to_owned(), json!({"inputSchema": {"type": "object"}}))).collect();
        with_meta(tool(name, schema), json!({DISCRIMINATOR_META_KEY: discriminator, ACTIONS_META_KEY: contracts}))
    }

    /// A flat tool as a server of this framework publishes it.
    fn published_action(name: &str, qualified: &str) -> Tool {
        with_meta(tool(name, json!({"type": "object"})), json!({ACTION_META_KEY: qualified}))
    }

    fn grouped() -> Routes {
        Routes::new(vec![tool(
            "billing",
            json!({"type": "object", "required": ["op"], "properties": {"op": {"type": "string", "enum": ["get", "list"]}}}),
        )])
    }

    fn route(tool: &str, discriminator: Option<(&str, &str)>) -> Option<Route> {
        Some(Route { tool: tool.into(), discriminator: discriminator.map(|(f, a)| (f.into(), a.into())) })
    }

    #[test]
    fn a_published_group_routes_by_its_own_discriminator() {
        // `currency` is a required enum too: the schema alone would not tell which field picks
        // the action, and `mode` lists no enum at all.
        let schema = json!({
            "type": "object",
            "required": ["mode", "currency"],
            "properties": {"mode": {"type": "string"}, "currency": {"type": "string", "enum": ["EUR", "USD"]}},
        });
        let routes = Routes::new(vec![published_group("billing", "mode", &["get_invoice", "pay"], schema)]);
        assert_eq!(routes.exposition(), Some(Exposition::Grouped { discriminator: "mode".into() }));
        let pay = routes.resolve("billing.pay").unwrap();
        assert_eq!(Some(pay.clone()), route("billing", Some(("mode", "pay"))));
        let args = pay.arguments(json!({"currency": "EUR"}).as_object().cloned().unwrap());
        assert_eq!(Value::Object(args), json!({"currency": "EUR", "mode": "pay"}));
        // An action the tool does not list still reaches it: its server answers UNKNOWN_ACTION.
        assert_eq!(routes.resolve("billing.EUR"), route("billing", Some(("mode", "EUR"))));
        assert_eq!(routes.resolve("crm.get"), None);
    }

    #[test]
    fn published_flat_tools_route_by_the_action_they_serve() {
        let routes = Routes::new(vec![
            published_action("billing--get_invoice", "billing.get_invoice"),
            // A name that follows no pattern at all: the published action is what counts.
            published_action("pay", "billing.pay_invoice"),
            // Named like another action, but publishing its own: no guess from the name.
            published_action("billing_void", "billing.cancel"),
        ]);
        assert_eq!(routes.exposition(), Some(Exposition::Flat { separator: "--".into() }));
        assert_eq!(routes.resolve("billing.get_invoice"), route("billing--get_invoice", None));
        assert_eq!(routes.resolve("billing.pay_invoice"), route("pay", None));
        assert_eq!(routes.resolve("billing.cancel"), route("billing_void", None));
        assert_eq!(routes.resolve("billing.void"), None);
        // The exact tool name still wins.
        assert_eq!(routes.resolve("pay"), route("pay", None));
    }

    #[test]
    fn the_exact_tool_name_wins() {
        let routes = Routes::new(vec![
            tool("billing.get", json!({"type": "object"})),
            published_group("billing", "action", &["get"], json!({"type": "object"})),
        ]);
        assert_eq!(routes.resolve("billing.get"), route("billing.get", None));
        assert_eq!(routes.resolve("billing.list"), route("billing", Some(("action", "list"))));
    }

    #[test]
    fn garbage_meta_falls_back_to_the_schema() {
        let schema = json!({"type": "object", "required": ["op"], "properties": {"op": {"enum": ["get"]}}});
        let broken = with_meta(tool("billing", schema), json!({DISCRIMINATOR_META_KEY: 3, ACTION_META_KEY: []}));
        let routes = Routes::new(vec![broken]);
        assert_eq!(routes.exposition(), Some(Exposition::Grouped { discriminator: "op".into() }));
        assert_eq!(routes.resolve("billing.get"), route("billing", Some(("op", "get"))));
    }

    #[test]
    fn grouped_tools_get_the_discriminator() {
        let routes = grouped();
        assert_eq!(routes.exposition(), Some(Exposition::Grouped { discriminator: "op".into() }));
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
        // Unpublished flat names tell no separator for sure.
        assert_eq!(routes.exposition(), None);
        assert_eq!(routes.resolve("billing.get").unwrap().tool, "billing_get");
        assert_eq!(routes.resolve("ping").unwrap().discriminator, None);
        assert_eq!(routes.resolve("billing.list"), None);
        assert_eq!(routes.resolve("billingxget"), None);
    }

    /// The tools of a server that mounts an upstream as `crm`: the upstream's group `billing`
    /// (as this framework publishes it), a flat tool of its own, and a local group.
    fn mounted() -> Routes {
        Routes::new(vec![
            published_group("local", "action", &["ping"], json!({"type": "object"})),
            published_group("crm.billing", "action", &["get_invoice", "pay"], json!({"type": "object"})),
            tool("crm.search", json!({"type": "object"})),
            tool(
                "crm.files",
                json!({"type": "object", "required": ["op"], "properties": {"op": {"enum": ["read.v2", "list"]}}}),
            ),
        ])
    }

    #[test]
    fn a_mounted_group_routes_at_a_later_dot() {
        let routes = mounted();
        assert_eq!(routes.resolve("crm.billing.get_invoice"), route("crm.billing", Some(("action", "get_invoice"))));
        // An action the upstream does not list still reaches it, as for any group.
        assert_eq!(routes.resolve("crm.billing.refund"), route("crm.billing", Some(("action", "refund"))));
        // A group that publishes nothing: its discriminator is read off its schema, and an
        // action's own dots stay in the action.
        assert_eq!(routes.resolve("crm.files.read.v2"), route("crm.files", Some(("op", "read.v2"))));
        assert_eq!(routes.resolve("local.ping"), route("local", Some(("action", "ping"))));
        assert_eq!(routes.resolve("crm.billing."), None);
        assert_eq!(routes.resolve("crm.nothing.get"), None);
        // A flat tool is not a group: no action of its own name reaches it.
        assert_eq!(routes.resolve("crm.search.all"), None);
    }

    #[test]
    fn a_mounted_flat_tool_routes_to_itself_by_its_exact_name() {
        let routes = mounted();
        assert_eq!(routes.resolve("crm.search"), route("crm.search", None));
        assert_eq!(routes.resolve("crm.billing"), route("crm.billing", None));
        // An exact name with a dot later still wins over a group at that dot.
        let routes = Routes::new(vec![
            tool("crm.billing.get_invoice", json!({"type": "object"})),
            published_group("crm.billing", "action", &["get_invoice"], json!({"type": "object"})),
        ]);
        assert_eq!(routes.resolve("crm.billing.get_invoice"), route("crm.billing.get_invoice", None));
        assert_eq!(routes.resolve("crm.billing.pay"), route("crm.billing", Some(("action", "pay"))));
    }

    #[test]
    fn the_first_dot_still_wins_over_a_later_one() {
        // `crm` is a group of its own: `crm.billing.get` is its action `billing.get`, as before.
        let routes = Routes::new(vec![
            published_group("crm", "action", &["billing.get"], json!({"type": "object"})),
            published_group("crm.billing", "action", &["get"], json!({"type": "object"})),
        ]);
        assert_eq!(routes.resolve("crm.billing.get"), route("crm", Some(("action", "billing.get"))));
        // A flat tool named for `crm.billing` with a separator, as the earlier rules guess.
        let routes = Routes::new(vec![
            tool("crm_billing.get", json!({"type": "object"})),
            published_group("crm.billing", "action", &["get"], json!({"type": "object"})),
        ]);
        assert_eq!(routes.resolve("crm.billing.get"), route("crm_billing.get", None));
    }

    #[test]
    fn a_tool_named_like_the_group_without_a_discriminator_is_not_a_group() {
        let routes = Routes::new(vec![tool("billing", json!({"type": "object"})), tool("billing_get", json!({}))]);
        assert_eq!(routes.resolve("billing.get"), route("billing_get", None));
        assert_eq!(routes.resolve("billing"), route("billing", None));
    }
}
