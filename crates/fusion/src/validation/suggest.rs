//! Which known field an unknown key means: by spelling first (`customer_emial` →
//! `customer_email`), then by meaning — the key's words against each field's name, title and
//! description, through a small vocabulary of words APIs use for the same thing (`page_size`
//! → `limit`, described as "How many invoices per page") — and, between fields that match as
//! well, by whether the field takes a value like the one sent. Deterministic and cheap: no
//! model, no dictionary beyond the table below.

use std::collections::BTreeSet;

use mcp_fusion_wire::{Expectation, KnownField, Suggestion};
use serde_json::Value;

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

impl FieldInfo {
    /// A field named `name` whose schema asks `expected`, with the schema's `title`.
    pub(super) fn new(name: &str, expected: &Expectation, title: Option<&str>) -> FieldInfo {
        let mut words = words_of(name);
        words.extend(words_of(title.unwrap_or_default()));
        words.extend(words_of(expected.description.as_deref().unwrap_or_default()));
        let guarded = split(name).iter().any(|word| GUARDED.contains(&word.as_str()));
        FieldInfo {
            name: name.to_owned(),
            words,
            types: expected.types.clone(),
            description: expected.description.clone(),
            guarded,
        }
    }

    /// The field as a sentence names it.
    pub(super) fn known(&self) -> KnownField {
        KnownField { name: self.name.clone(), description: self.description.clone() }
    }
}

/// Whether `suggestion` points at the field `name`.
pub(super) fn names(suggestion: &Suggestion, name: &str) -> bool {
    match suggestion {
        Suggestion::Spelling(field) => field == name,
        Suggestion::Meaning(field) => field.name == name,
        Suggestion::Either(fields) => fields.iter().any(|field| field.name == name),
    }
}

/// The field `key` most likely means, if one stands out; `missing` names the required fields
/// of the same object that were not sent, `sent` is the object the key came in. A field the
/// object already holds, one that cannot take the value sent, and one whose words say the
/// opposite of the key's (`include_hidden` is not `exclude_hidden`) are never suggested.
pub(super) fn suggest(
    key: &str,
    value: Option<&Value>,
    fields: &[FieldInfo],
    missing: &[&str],
    sent: &Value,
) -> Option<Suggestion> {
    let key_words = split(key);
    let candidates: Vec<&FieldInfo> = fields
        .iter()
        .filter(|field| field.name != key && sent.get(&field.name).is_none())
        .filter(|field| value.is_none_or(|value| value.is_null() || accepts_kind(&field.types, value)))
        .filter(|field| !opposed(&key_words, &split(&field.name)))
        .collect();
    by_words(key, value, &candidates).or_else(|| in_place_of(value, &candidates, missing))
}

/// Words that name opposite things: a key holding one is never the field holding the other.
const OPPOSITES: &[(&str, &str)] = &[
    ("include", "exclude"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("allow", "deny"),
    ("show", "hide"),
    ("add", "remove"),
    ("min", "max"),
    ("minimum", "maximum"),
    ("start", "end"),
    ("before", "after"),
    ("first", "last"),
    ("head", "tail"),
    ("from", "to"),
    ("source", "destination"),
    ("open", "close"),
    ("asc", "desc"),
    ("ascending", "descending"),
    ("input", "output"),
    ("old", "new"),
    ("public", "private"),
    ("read", "write"),
    ("lower", "upper"),
    ("prefix", "suffix"),
    ("since", "until"),
];

/// Whether the two names hold words that are each other's opposite.
fn opposed(a: &[String], b: &[String]) -> bool {
    OPPOSITES.iter().any(|(x, y)| {
        let holds = |words: &[String], word: &str| words.iter().any(|w| w == word);
        (holds(a, x) && holds(b, y) && !holds(a, y)) || (holds(a, y) && holds(b, x) && !holds(a, x))
    })
}

/// The one required field not sent, when a value like this one is what it takes: a key
/// whose words say nothing of any field (`text` for `content`) most likely holds its value.
fn in_place_of(value: Option<&Value>, fields: &[&FieldInfo], missing: &[&str]) -> Option<Suggestion> {
    let [only] = missing else { return None };
    let field = fields.iter().find(|field| field.name == *only && !field.guarded)?;
    value.is_some_and(|value| accepts_kind(&field.types, value)).then(|| Suggestion::Meaning(field.known()))
}

/// The field `key` means by its spelling or its words.
fn by_words(key: &str, value: Option<&Value>, fields: &[&FieldInfo]) -> Option<Suggestion> {
    // A guarded field only for a key that is its name but for a slip or two.
    let spelled_alike = |field: &&&FieldInfo| {
        !field.guarded || strsim::levenshtein(&key.to_lowercase(), &field.name.to_lowercase()) <= 2
    };
    if let Some(name) = closest(key, fields.iter().filter(spelled_alike).map(|f| f.name.as_str())) {
        return Some(Suggestion::Spelling(name.to_owned()));
    }
    let wanted = key_words(key);
    if wanted.is_empty() {
        return None;
    }
    // A key that holds a field's whole name among its words (`invoice_id` → `id`,
    // `void_reason` → `reason`) names that field.
    let named: Vec<&FieldInfo> = fields
        .iter()
        .copied()
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
        .copied()
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

/// The words of a key: as [`words_of`], but a key that is only a little word that says where
/// (`from`, `to`) means the field that says so (`source`, `destination`).
fn key_words(key: &str) -> BTreeSet<String> {
    let mut words = words_of(key);
    for word in split(key) {
        match word.as_str() {
            "from" => words.insert("source".to_owned()),
            "to" => words.insert("destination".to_owned()),
            _ => false,
        };
    }
    words
}

/// The words of a name as written.
fn word_set(name: &str) -> BTreeSet<String> {
    split(name).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The fields of an object schema's `properties`, as the checker reads them.
    fn known_fields(object: &Value) -> Vec<FieldInfo> {
        let properties = object["properties"].as_object().unwrap();
        properties
            .iter()
            .map(|(name, schema)| {
                let document = super::super::document::Document::new(schema.clone());
                let expected = super::super::describe::expectation(&document, "");
                FieldInfo::new(name, &expected, schema.get("title").and_then(Value::as_str))
            })
            .collect()
    }

    fn invoices() -> Vec<FieldInfo> {
        known_fields(&json!({"properties": {
            "status": {"anyOf": [{"type": "string", "enum": ["open", "paid", "void"]}, {"type": "null"}],
                       "description": "Only invoices with this status; all when omitted."},
            "limit": {"type": ["integer", "null"], "description": "How many invoices per page, 1 to 100 (default 20)."},
            "cursor": {"type": ["string", "null"], "description": "The `next_cursor` of the previous page, unchanged; omit it for the first page."}
        }}))
    }

    fn meant(key: &str, value: Value) -> Option<String> {
        match suggest(key, Some(&value), &invoices(), &[], &json!({}))? {
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
        let names = |key: &str, value: Value| match suggest(key, Some(&value), &fields, &[], &json!({})) {
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
        let meant = |value: Value, missing: &[&str]| match suggest("body", Some(&value), &content, missing, &json!({}))
        {
            Some(Suggestion::Meaning(field)) => Some(field.name),
            _ => None,
        };
        assert_eq!(meant(json!("hello"), &["content"]).as_deref(), Some("content"));
        assert_eq!(meant(json!(5), &["content"]), None);
        assert_eq!(meant(json!("hello"), &["content", "path"]), None);
    }

    /// The tools' fields a model is told of, and what it reaches for instead; from
    /// third-party servers (memory, filesystem, fetch, time).
    #[test]
    fn never_misleads_and_finds_by_meaning() {
        let meant = |fields: &Value, key: &str, value: Value, sent: Value| match suggest(
            key,
            Some(&value),
            &known_fields(fields),
            &[],
            &sent,
        )? {
            Suggestion::Spelling(name) => Some(name),
            Suggestion::Meaning(field) => Some(field.name),
            Suggestion::Either(_) => Some("either".to_owned()),
        };
        let search = json!({"properties": {
            "query": {"type": "string", "description": "The search query to match against entity names, types, and observation content"}
        }});
        assert_eq!(meant(&search, "text", json!("Ada"), json!({})).as_deref(), Some("query"));
        let moving = json!({"properties": {"source": {"type": "string"}, "destination": {"type": "string"}}});
        assert_eq!(meant(&moving, "from", json!("a.txt"), json!({})).as_deref(), Some("source"));
        assert_eq!(meant(&moving, "to", json!("b.txt"), json!({})).as_deref(), Some("destination"));
        // Never the key the call holds already.
        let fetch = json!({"properties": {
            "url": {"type": "string", "format": "uri", "description": "URL to fetch"},
            "max_length": {"type": "integer", "description": "Maximum number of characters to return."}
        }});
        assert_eq!(meant(&fetch, "hourly", json!(true), json!({"url": "https://example.com"})), None);
        assert_eq!(meant(&fetch, "urll", json!("https://example.com"), json!({"url": "https://example.com"})), None);
        // Never a field whose type cannot hold the value, nor one that means something else.
        let listing = json!({"properties": {
            "query": {"type": "string"},
            "sort_by": {"type": "string", "enum": ["date", "relevance"], "description": "How results are ordered."}
        }});
        assert_eq!(meant(&listing, "max_results", json!(5), json!({})), None);
        assert_eq!(meant(&fetch, "maxLength", json!("long"), json!({})), None);
        assert_eq!(meant(&fetch, "maxLength", json!(500), json!({})).as_deref(), Some("max_length"));
        // Never the opposite word, nor a secret for a value of another kind.
        let patterns = json!({"properties": {"excludePatterns": {"type": "array", "items": {"type": "string"}}}});
        assert_eq!(meant(&patterns, "includePatterns", json!(["*.md"]), json!({})), None);
        let keyed =
            json!({"properties": {"api_key": {"type": "string", "writeOnly": true}, "name": {"type": "string"}}});
        assert_eq!(meant(&keyed, "key", json!("Ada"), json!({})), None);
    }
}
