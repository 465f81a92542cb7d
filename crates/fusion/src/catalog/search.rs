//! Tool search: a server in front of many mounted tools lists, instead of them, two tools —
//! `search_tools`, which finds tools by name and by the words of their descriptions, and
//! `get_tool_details`, which shows one whole — as MCP's progressive discovery describes. Every
//! mounted tool is still called by its name, and an unknown name is still answered with the
//! closest ones.

use std::sync::Arc;

use mcp_fusion_contract::{ACTIONS_META_KEY, DISCRIMINATOR_META_KEY};
use mcp_fusion_wire::{ErrorCode, Sent, ToolError};
use rmcp::model::{ClientCapabilities, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::Catalog;
use super::index::{Found, MAX_QUERY_CHARS, SearchIndex, entry_name};
use crate::auth::Caller;
use crate::similarity::{Named, did_you_mean, likely};

/// The tool that finds tools.
pub const SEARCH_TOOLS: &str = "search_tools";

/// The tool that shows one tool whole.
pub const GET_TOOL_DETAILS: &str = "get_tool_details";

/// How many tools a search returns unless it asks for another number.
pub(crate) const MATCHES: u64 = 10;

/// The most tools a search returns.
const MOST_MATCHES: u64 = 50;

/// The longest a description stays in a search's answer: its first sentence, cut.
const SHORT_DESCRIPTION: usize = 160;

/// The two tools listed in place of the mounted ones.
pub(crate) fn search_tools() -> Vec<Tool> {
    let read_only = |title: &str| {
        let mut hints = ToolAnnotations::new();
        hints.title = Some(title.to_owned());
        hints.read_only_hint = Some(true);
        hints.open_world_hint = Some(false);
        hints
    };
    let schema = |value: Value| Arc::new(value.as_object().cloned().unwrap_or_default());
    let mut search = Tool::new(
        SEARCH_TOOLS,
        "Find the tools that can do something, among all this server serves (most are not listed): \
         describe it in a few words (`create invoice`, `search customers by email`) or give part of \
         a name. Returns each match's name and what it does; call get_tool_details with a name for \
         its arguments, then call that tool by its name.",
        schema(json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": format!("What the tool should do, in your words, or part of its name (the first {MAX_QUERY_CHARS} characters are searched).")},
                "limit": {"type": "integer", "minimum": 1, "maximum": MOST_MATCHES, "description": format!("How many matches at most (default {MATCHES}).")},
            },
            "required": ["query"],
            "additionalProperties": false,
        })),
    );
    search.annotations = Some(read_only("Search tools"));
    let mut details = Tool::new(
        GET_TOOL_DETAILS,
        "Show one tool whole — its description, input schema and hints — by the name search_tools \
         gave (`crm.search_customers`), before calling it.",
        schema(json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "description": "The tool's full name, as search_tools returned it."},
            },
            "required": ["name"],
            "additionalProperties": false,
        })),
    );
    details.annotations = Some(read_only("Get tool details"));
    vec![search, details]
}

impl Catalog {
    /// The tools `tools/list` shows out of `all`: with tool search, those of no mounted
    /// namespace and the two tools that find the rest; else `all`.
    pub(crate) fn listed(&self, all: Vec<Tool>) -> Vec<Tool> {
        if !self.tool_search {
            return all;
        }
        let mut listed: Vec<Tool> = all.into_iter().filter(|tool| !self.is_mounted_tool(&tool.name)).collect();
        listed.extend(search_tools());
        listed
    }

    /// Whether `name` is a tool served from a mount.
    fn is_mounted_tool(&self, name: &str) -> bool {
        name.split_once('.').is_some_and(|(namespace, _)| self.mounts.contains_key(namespace))
    }

    /// Whether a call of `tool` is one of the two tools that find the others (tool search is
    /// on and `tool` names one of them).
    pub(crate) fn searches(&self, tool: &str) -> bool {
        self.tool_search && matches!(tool, SEARCH_TOOLS | GET_TOOL_DETAILS)
    }
}

impl Catalog {
    /// `search_tools` for `caller` from a client with `client`'s capabilities: the tools
    /// `query` finds among those it may see, best first, at most `limit`.
    pub(crate) fn find(
        &self,
        query: &str,
        limit: usize,
        caller: &Caller,
        client: Option<&ClientCapabilities>,
    ) -> Result<Value, ToolError> {
        if self.offers.is_some() {
            // What a caller is shown depends on who it is (a grouped tool lists only the
            // actions it may call): its tools are indexed as it sees them.
            let seen = self.seen_by(Some(caller), client);
            return search(query, limit, &seen, &SearchIndex::new(&seen), |_| true);
        }
        let index = self.search_index.get_or_init(|| SearchIndex::new(&self.tools));
        search(query, limit, &self.tools, index, |tool| crate::apps::model_sees(&self.tools[tool], client))
    }
}

/// `search_tools`: the tools `query` finds in `index` (of `tools`) among those `visible` lets
/// through, best first, at most `limit`, each with its match.
pub(crate) fn search(
    query: &str,
    limit: usize,
    tools: &[Tool],
    index: &SearchIndex,
    visible: impl Fn(usize) -> bool,
) -> Result<Value, ToolError> {
    let query = query.trim();
    if query.is_empty() {
        return Err(ToolError::new(
            ErrorCode::ValidationError,
            format!("{SEARCH_TOOLS} needs \"query\": words saying what the tool should do. You sent only spaces."),
        )
        .suggest(format!("Call {SEARCH_TOOLS} again with \"query\" set so."))
        .detail("field", "query"));
    }
    let served = (0..tools.len()).filter(|&tool| visible(tool)).count();
    let mut found = index.search(query, limit, &visible);
    // A whole name, as written or spelled otherwise (`read_file`, `readFile`), comes first.
    if let Some(named) = index.named(query).filter(|&entry| visible(index.entry(entry).tool)) {
        found.retain(|found| found.entry != named);
        found.insert(0, Found { entry: named, score: 1.0 });
        found.truncate(limit);
    }
    let grouped = found.iter().any(|found| index.entry(found.entry).action.is_some());
    let matches: Vec<Value> = found
        .iter()
        .map(|found| {
            let entry = index.entry(found.entry);
            let tool = &tools[entry.tool];
            let score = (f64::from(found.score) * 100.0).round() / 100.0;
            match &entry.action {
                None => json!({
                    "name": tool.name,
                    "description": short(tool.description.as_deref().unwrap_or_default()),
                    "match": score,
                }),
                Some((discriminator, action)) => json!({
                    "name": entry_name(tool, entry),
                    "description": short(action_said(tool, action, "description").unwrap_or_default()),
                    "match": score,
                    "tool": tool.name,
                    "arguments": {discriminator: action},
                }),
            }
        })
        .collect();
    let how = match grouped {
        true => {
            " A match with \"tool\" is an action of that grouped tool: call the tool, with \"arguments\" among its arguments."
        }
        false => "",
    };
    let next = match matches.is_empty() {
        true => format!(
            "Nothing matched: no tool says any of these words. Try other words (what the tool does, not how), or part of a name; {served} tools are served."
        ),
        false => format!(
            "Each match says how well its words fit the query, from 0 to 1. Call {GET_TOOL_DETAILS} with a name for its arguments, then call the tool by that name.{how}"
        ),
    };
    Ok(json!({"tools": matches, "served": served, "next": next}))
}

/// What a grouped tool publishes of one of its actions under `key`, as a string.
fn action_said<'a>(tool: &'a Tool, action: &str, key: &str) -> Option<&'a str> {
    action_contract(tool, action)?.get(key)?.as_str()
}

/// What a grouped tool publishes of one of its actions.
fn action_contract<'a>(tool: &'a Tool, action: &str) -> Option<&'a serde_json::Map<String, Value>> {
    tool.meta.as_ref()?.get(ACTIONS_META_KEY)?.get(action)?.as_object()
}

/// `get_tool_details`: the tool named, whole, among `searchable`; an unknown name is answered
/// with the closest.
pub(crate) fn details(name: &str, searchable: &[Tool]) -> Result<Value, ToolError> {
    let name = name.trim();
    if let Some(tool) = searchable.iter().find(|tool| tool.name == name) {
        return Ok(serde_json::to_value(tool).unwrap_or(Value::Null));
    }
    if let Some(action) = grouped_action(name, searchable) {
        return Ok(action);
    }
    let named = searchable.iter().map(|tool| Named { name: &tool.name, description: tool.description.as_deref() });
    let closest: Vec<String> =
        likely(name, named).into_iter().map(|index| format!("\"{}\"", searchable[index].name)).collect();
    let recovery = match did_you_mean(&closest) {
        Some(guess) => format!("{guess} Call {GET_TOOL_DETAILS} with that name, or {SEARCH_TOOLS} to find another."),
        None => {
            format!("Call {SEARCH_TOOLS} with what the tool should do, then {GET_TOOL_DETAILS} with a name it returns.")
        }
    };
    Err(ToolError::new(ErrorCode::UnknownAction, format!("No tool named {}.", Sent::text(name)))
        .suggest(recovery)
        .actions([SEARCH_TOOLS]))
}

/// `get_tool_details` of an action of a grouped tool, named as a search found it
/// (`billing.pay_invoice`): how to call it, and what its tool publishes of it.
fn grouped_action(name: &str, searchable: &[Tool]) -> Option<Value> {
    let (tool, action) = name.rsplit_once('.')?;
    let tool = searchable.iter().find(|listed| listed.name == tool)?;
    let discriminator = tool.meta.as_ref()?.get(DISCRIMINATOR_META_KEY)?.as_str()?;
    let contract = action_contract(tool, action)?;
    let mut details = serde_json::Map::new();
    details.insert("name".into(), json!(name));
    details.insert("tool".into(), json!(tool.name));
    details.insert("arguments".into(), json!({discriminator: action}));
    details.extend(contract.iter().map(|(key, value)| (key.clone(), value.clone())));
    details.insert(
        "call".into(),
        json!(format!(
            "Call the tool {} with \"{discriminator}\": \"{action}\" and the arguments of inputSchema.",
            tool.name
        )),
    );
    Some(Value::Object(details))
}

/// The first sentence of `description`, cut to [`SHORT_DESCRIPTION`] characters.
fn short(description: &str) -> String {
    let first = description.split_inclusive(". ").next().unwrap_or(description).trim();
    let first = first.lines().next().unwrap_or(first).trim();
    if first.chars().count() <= SHORT_DESCRIPTION {
        return first.to_owned();
    }
    let mut cut: String = first.chars().take(SHORT_DESCRIPTION - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use rmcp::model::JsonObject;

    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        Tool::new(name.to_owned(), description.to_owned(), Arc::new(JsonObject::new()))
    }

    fn names(found: &Value) -> Vec<&str> {
        found["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect()
    }

    fn served() -> Vec<Tool> {
        vec![
            tool("crm.search_customers", "Find customers by name or email address."),
            tool("crm.create_customer", "Create a customer record."),
            tool("billing.billing", "Invoices: list, read, create, pay and void them."),
            tool("files.read_file", "Read a file's text from the workspace."),
            tool("files.delete_file", "Delete a file for good."),
        ]
    }

    fn ask(query: &str, served: &[Tool]) -> Value {
        search(query, 10, served, &SearchIndex::new(served), |_| true).unwrap()
    }

    #[test]
    fn a_search_finds_tools_by_name_and_by_the_words_of_their_descriptions() {
        let served = served();
        let ask = |query: &str| ask(query, &served);
        assert_eq!(names(&ask("search customers by email"))[0], "crm.search_customers");
        assert_eq!(names(&ask("pay an invoice")), ["billing.billing"]);
        assert_eq!(names(&ask("read_file"))[0], "files.read_file");
        assert_eq!(names(&ask("readFile"))[0], "files.read_file");
        // A verb is a word like any other: the tool that deletes comes first, the one that
        // reads a file after it.
        assert_eq!(names(&ask("remove file")), ["files.delete_file", "files.read_file"]);
        let none = ask("weather forecast");
        assert!(names(&none).is_empty());
        assert!(none["next"].as_str().unwrap().starts_with("Nothing matched"));
    }

    #[test]
    fn each_match_carries_how_well_it_fits() {
        let served = served();
        let found = ask("create a customer record for ana", &served);
        let matches: Vec<f64> =
            found["tools"].as_array().unwrap().iter().map(|t| t["match"].as_f64().unwrap()).collect();
        assert_eq!(names(&found)[0], "crm.create_customer");
        assert!(matches.windows(2).all(|pair| pair[0] >= pair[1]) && matches[0] <= 1.0, "{matches:?}");
        assert!(matches.iter().all(|score| *score > 0.0), "{matches:?}");
    }

    #[test]
    fn details_show_one_tool_and_an_unknown_name_gets_the_closest() {
        let served = served();
        let found = details("crm.create_customer", &served).unwrap();
        assert_eq!(found["description"], "Create a customer record.");
        let missing = details("crm.create_custmer", &served).unwrap_err();
        assert_eq!(missing.code, ErrorCode::UnknownAction);
        assert!(missing.recovery.as_deref().unwrap().starts_with("Did you mean \"crm.create_customer\"?"));
    }

    #[test]
    fn a_blank_query_is_refused_with_what_to_send() {
        let served = served();
        let refused = search("   ", 10, &served, &SearchIndex::new(&served), |_| true).unwrap_err();
        assert_eq!(refused.code, ErrorCode::ValidationError);
        assert!(refused.recovery.is_some());
    }
}
