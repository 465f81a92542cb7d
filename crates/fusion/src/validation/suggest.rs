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
use crate::similarity::words::{FIELDS, split, text_words};

/// Words of a field that holds a key, a secret or a credential: a value meant for another
/// field must never be put there because the words were near (a page size is no idempotency
/// key), so such a field is suggested only for a key spelled like its name.
const GUARDED: &[&str] =
    &["key", "secret", "token", "password", "passphrase", "credential", "signature", "idempotency"];

/// A known field, as the matcher sees it.
pub(super) struct FieldInfo {
    name: String,
    words: BTreeSet<String>,
    types: Vec<String>,
    description: Option<String>,
    /// Whether it holds a key, a secret or a credential.
    guarded: bool,
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
            let guarded = split(name).iter().any(|word| GUARDED.contains(&word.as_str()));
            let description = schema.get("description").and_then(Value::as_str).map(str::to_owned);
            FieldInfo { name: name.clone(), words, types: type_names(schema), description, guarded }
        })
        .collect()
}

impl FieldInfo {
    /// The field as a sentence names it.
    pub(super) fn known(&self) -> KnownField {
        KnownField { name: self.name.clone(), description: self.description.clone() }
    }
}

/// The field `key` most likely means, if one stands out; `missing` names the required fields
/// of the same object that were not sent.
pub(super) fn suggest(key: &str, value: Option<&Value>, fields: &[FieldInfo], missing: &[&str]) -> Option<Suggestion> {
    by_words(key, value, fields).or_else(|| in_place_of(value, fields, missing))
}

/// The one required field not sent, when a value like this one is what it takes: a key
/// whose words say nothing of any field (`text` for `content`) most likely holds its value.
fn in_place_of(value: Option<&Value>, fields: &[FieldInfo], missing: &[&str]) -> Option<Suggestion> {
    let [only] = missing else { return None };
    let field = fields.iter().find(|field| field.name == *only && !field.guarded)?;
    value.is_some_and(|value| accepts_kind(&field.types, value)).then(|| Suggestion::Meaning(field.known()))
}

/// The field `key` means by its spelling or its words.
fn by_words(key: &str, value: Option<&Value>, fields: &[FieldInfo]) -> Option<Suggestion> {
    // A guarded field only for a key that is its name but for a slip or two.
    let spelled_alike = |field: &&FieldInfo| {
        !field.guarded || strsim::levenshtein(&key.to_lowercase(), &field.name.to_lowercase()) <= 2
    };
    if let Some(name) = closest(key, fields.iter().filter(spelled_alike).map(|f| f.name.as_str())) {
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
            let (name, key) = (word_set(&field.name), word_set(key));
            !field.guarded && !name.is_empty() && (name.is_subset(&key) || key.is_subset(&name))
        })
        .collect();
    if let [field] = named.as_slice() {
        return Some(Suggestion::Spelling(field.name.clone()));
    }
    let scored: Vec<(usize, &FieldInfo)> = fields
        .iter()
        .filter(|field| !field.guarded)
        .map(|field| (wanted.intersection(&field.words).count(), field))
        .collect();
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
        // A few that mean it as well (`lines` → `head`, `tail`): each, with its words.
        several if (2..=MOST_ALIKE).contains(&several.len()) => {
            Some(Suggestion::Either(several.iter().map(|field| field.known()).collect()))
        }
        _ => None,
    }
}

/// The most fields a suggestion names when they match alike: more is no suggestion.
const MOST_ALIKE: usize = 3;

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

/// The meaningful words of a name or a text in the fields' vocabulary.
fn words_of(text: &str) -> BTreeSet<String> {
    text_words(text, FIELDS)
}

/// The words of a name as written.
fn word_set(name: &str) -> BTreeSet<String> {
    split(name).into_iter().collect()
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
        match suggest(key, Some(&value), &invoices(), &[])? {
            Suggestion::Spelling(name) => Some(format!("spelling:{name}")),
            Suggestion::Meaning(field) => Some(format!("meaning:{}", field.name)),
            Suggestion::Either(fields) => {
                Some(format!("either:{}", fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(",")))
            }
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
    fn several_alike_are_named_and_keys_only_by_spelling() {
        let fields = known_fields(&json!({"properties": {
            "path": {"type": "string"},
            "head": {"type": "number", "description": "If provided, returns only the first N lines of the file"},
            "tail": {"type": "number", "description": "If provided, returns only the last N lines of the file"},
            "page_token": {"type": "string", "description": "Where the next page starts, from the previous one."},
            "idempotency_key": {"type": "string", "description": "A key of your own: the same key runs the call once."}
        }}));
        let names = |key: &str, value: Value| match suggest(key, Some(&value), &fields, &[]) {
            Some(Suggestion::Either(fields)) => fields.into_iter().map(|f| f.name).collect(),
            Some(Suggestion::Meaning(field)) => vec![field.name],
            Some(Suggestion::Spelling(name)) => vec![format!("spelling:{name}")],
            None => vec![],
        };
        assert_eq!(names("lines", json!(5)), ["head", "tail"]);
        // A page size is not put into a key or a token, whatever words they share.
        assert_eq!(names("page_size", json!(10)), Vec::<String>::new());
        assert_eq!(names("key", json!("k")), Vec::<String>::new());
        assert_eq!(names("idempotencykey", json!("k")), ["spelling:idempotency_key"]);
        // A key that says nothing of any field holds the value of the one required field missing.
        let content = known_fields(&json!({"properties": {"path": {"type": "string"}, "content": {"type": "string"}}}));
        let meant = |value: Value, missing: &[&str]| match suggest("body", Some(&value), &content, missing) {
            Some(Suggestion::Meaning(field)) => Some(field.name),
            _ => None,
        };
        assert_eq!(meant(json!("hello"), &["content"]).as_deref(), Some("content"));
        assert_eq!(meant(json!(5), &["content"]), None);
        assert_eq!(meant(json!("hello"), &["content", "path"]), None);
    }
}
