//! Which known field an unknown key means: by spelling first (`customer_emial` →
//! `customer_email`), then by meaning — the key's words against each field's name, title and
//! description, through a small vocabulary of words APIs use for the same thing (`page_size`
//! → `limit`, described as "How many invoices per page") — and, between fields that match as
//! well, by whether the field takes a value like the one sent. Deterministic and cheap: no
//! model, no dictionary beyond the table below.

use std::collections::BTreeSet;

use mcp_fusion_wire::{KnownField, Suggestion};
use serde_json::Value;

use super::expectation::type_names;
use crate::similarity::closest;

/// Words that say nothing about what a field is.
const STOP_WORDS: &[&str] = &[
    "a",
    "an",
    "the",
    "of",
    "to",
    "in",
    "on",
    "for",
    "with",
    "and",
    "or",
    "is",
    "are",
    "be",
    "it",
    "its",
    "this",
    "that",
    "these",
    "when",
    "omit",
    "omitted",
    "only",
    "all",
    "how",
    "what",
    "which",
    "default",
    "if",
    "as",
    "by",
    "at",
    "from",
    "into",
    "per",
    "any",
    "one",
    "each",
    "none",
    "unchanged",
    "like",
    "e",
    "g",
    "eg",
];

/// Words APIs use for the same thing, each group read as its first word.
const SYNONYMS: &[&[&str]] = &[
    &["limit", "size", "count", "max", "maximum", "top", "take", "many"],
    &["cursor", "offset", "skip", "after", "token", "next", "continuation", "marker"],
    &["query", "q", "search", "term", "terms", "keyword", "keywords", "filter", "text"],
    &["id", "identifier", "uid", "ref", "reference", "key"],
    &["email", "mail"],
    &["amount", "total", "sum", "price", "cost", "cents", "money"],
    &["date", "day", "due", "deadline", "when", "time", "until", "before"],
    &["status", "state"],
    &["reason", "note", "comment", "memo", "why", "explanation"],
    &["currency", "cur", "ccy"],
    &["name", "title", "label"],
    &["sort", "order", "orderby", "sorting"],
];

/// A known field, as the matcher sees it.
pub(super) struct FieldInfo {
    name: String,
    words: BTreeSet<String>,
    types: Vec<String>,
    description: Option<String>,
}

/// The known fields of an object schema, in the schema's order.
pub(super) fn known_fields(object: &Value) -> Vec<FieldInfo> {
    let Some(properties) = object.get("properties").and_then(Value::as_object) else { return Vec::new() };
    properties
        .iter()
        .map(|(name, schema)| {
            let schema = field_schema(schema);
            let text = |key: &str| schema.get(key).and_then(Value::as_str).unwrap_or_default();
            let mut words = words_of(name);
            words.extend(words_of(text("title")));
            words.extend(words_of(text("description")));
            let description = schema.get("description").and_then(Value::as_str).map(str::to_owned);
            FieldInfo { name: name.clone(), words, types: type_names(schema), description }
        })
        .collect()
}

impl FieldInfo {
    /// The field as a sentence names it.
    pub(super) fn known(&self) -> KnownField {
        KnownField { name: self.name.clone(), description: self.description.clone() }
    }
}

/// The field `key` most likely means, if one stands out.
pub(super) fn suggest(key: &str, value: Option<&Value>, fields: &[FieldInfo]) -> Option<Suggestion> {
    if let Some(name) = closest(key, fields.iter().map(|f| f.name.as_str())) {
        return Some(Suggestion::Spelling(name.to_owned()));
    }
    let wanted = words_of(key);
    if wanted.is_empty() {
        return None;
    }
    // A key that holds a field's whole name among its words (`invoice_id` → `id`,
    // `void_reason` → `reason`) names that field.
    let named: Vec<&FieldInfo> = fields
        .iter()
        .filter(|field| {
            let (name, key) = (split_words(&field.name), split_words(key));
            !name.is_empty() && (name.is_subset(&key) || key.is_subset(&name))
        })
        .collect();
    if let [field] = named.as_slice() {
        return Some(Suggestion::Spelling(field.name.clone()));
    }
    let scored: Vec<(usize, &FieldInfo)> =
        fields.iter().map(|field| (wanted.intersection(&field.words).count(), field)).collect();
    let best = scored.iter().map(|(score, _)| *score).max().filter(|&score| score > 0)?;
    let mut tied: Vec<&FieldInfo> = scored.iter().filter(|(score, _)| *score == best).map(|(_, f)| *f).collect();
    // Between fields that match as well, the one that takes a value like the one sent.
    if tied.len() > 1
        && let Some(value) = value
    {
        tied.retain(|field| accepts_kind(&field.types, value));
    }
    match tied.as_slice() {
        [field] => Some(Suggestion::Meaning(field.known())),
        _ => None,
    }
}

/// Whether a field of `types` could take `value` (any type list takes anything).
fn accepts_kind(types: &[String], value: &Value) -> bool {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    types.is_empty() || types.iter().any(|t| t == kind || (t == "number" && kind == "integer"))
}

/// The schema of a field, through `Option`'s `anyOf: [T, null]`.
fn field_schema(schema: &Value) -> &Value {
    let branches = schema.get("anyOf").and_then(Value::as_array);
    match branches
        .map(|b| b.iter().filter(|s| s.get("type").and_then(Value::as_str) != Some("null")).collect::<Vec<_>>())
    {
        Some(non_null) if non_null.len() == 1 && schema.get("description").is_none() => non_null[0],
        _ => schema,
    }
}

/// The meaningful words of a name or a text, each read as its group's first word: split at
/// case changes, digits and punctuation, lower-cased, a plural `s` dropped.
fn words_of(text: &str) -> BTreeSet<String> {
    split_words(text)
        .into_iter()
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()) && !STOP_WORDS.contains(&w.as_str()))
        .map(|w| canonical(&w))
        .collect()
}

/// A name or a text split at case changes and punctuation, lower-cased, as written.
fn split_words(text: &str) -> BTreeSet<String> {
    let mut words = BTreeSet::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && previous_lower);
        if boundary && !word.is_empty() {
            words.insert(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        previous_lower = c.is_lowercase();
    }
    if !word.is_empty() {
        words.insert(word);
    }
    words
}

/// A word as its synonym group's first word; a plural read as its singular.
fn canonical(word: &str) -> String {
    let singular = match word.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !word.ends_with("ss") => stem,
        _ => word,
    };
    for group in SYNONYMS {
        if group.contains(&word) || group.contains(&singular) {
            return group[0].to_owned();
        }
    }
    singular.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn invoices() -> Vec<FieldInfo> {
        known_fields(&json!({"properties": {
            "status": {"anyOf": [{"type": "string", "enum": ["open", "paid", "void"]}, {"type": "null"}],
                       "description": "Only invoices with this status; all when omitted."},
            "limit": {"type": ["integer", "null"], "description": "How many invoices per page, 1 to 100 (default 20)."},
            "cursor": {"type": ["string", "null"], "description": "The `next_cursor` of the previous page, unchanged; omit it for the first page."}
        }}))
    }

    fn meant(key: &str, value: Value) -> Option<String> {
        match suggest(key, Some(&value), &invoices())? {
            Suggestion::Spelling(name) => Some(format!("spelling:{name}")),
            Suggestion::Meaning(field) => Some(format!("meaning:{}", field.name)),
        }
    }

    #[test]
    fn spelling_first_then_meaning_then_the_value() {
        assert_eq!(meant("limt", json!(2)).as_deref(), Some("spelling:limit"));
        assert_eq!(meant("page_size", json!(2)).as_deref(), Some("meaning:limit"));
        assert_eq!(meant("pageSize", json!(2)).as_deref(), Some("meaning:limit"));
        assert_eq!(meant("max_results", json!(2)).as_deref(), Some("meaning:limit"));
        assert_eq!(meant("offset", json!("abc")).as_deref(), Some("meaning:cursor"));
        assert_eq!(meant("state", json!("paid")).as_deref(), Some("spelling:status"));
        assert_eq!(meant("invoice_state", json!("paid")).as_deref(), Some("meaning:status"));
        // "page" alone is in two descriptions: the value decides, or nothing does.
        assert_eq!(meant("page", json!("c2")).as_deref(), Some("meaning:cursor"));
        assert_eq!(meant("page", json!(true)), None);
        assert_eq!(meant("zzz", json!(1)), None);
        assert_eq!(meant("status_filter", json!("paid")).as_deref(), Some("spelling:status"));
    }

    #[test]
    fn words_are_split_singular_and_grouped() {
        let words: Vec<String> = words_of("maxResults_perPage 20 items").into_iter().collect();
        assert_eq!(words, ["item", "limit", "page", "result"]);
    }
}
