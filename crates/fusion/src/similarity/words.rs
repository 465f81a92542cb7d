//! Names and texts as words: split at case changes and punctuation, plurals read as their
//! singular, and words APIs use for the same thing read as one (`remove` as `delete`,
//! `page_size` as `limit`). Two vocabularies: one for what fields hold, one for what tools do.

use std::collections::BTreeSet;

/// Words that say nothing about what a field or a tool is.
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

/// Words for the same value a field holds, each group read as its first word.
pub(crate) const FIELDS: &[&[&str]] = &[
    &["limit", "size", "count", "max", "maximum", "top", "take", "many"],
    &["cursor", "offset", "skip", "after", "token", "next", "continuation", "marker"],
    &["query", "q", "search", "term", "terms", "keyword", "keywords", "filter", "text"],
    &["id", "identifier", "uid", "ref", "reference"],
    &["email", "mail"],
    &["amount", "total", "sum", "price", "cost", "cents", "money"],
    &["date", "day", "due", "deadline", "when", "time", "until", "before"],
    &["status", "state"],
    &["reason", "note", "comment", "memo", "why", "explanation"],
    &["currency", "cur", "ccy"],
    &["name", "title", "label"],
    &["sort", "order", "orderby", "sorting"],
];

/// Words for the same thing a tool does or works on, each group read as its first word.
/// The verbs' groups are [`VERBS`]; the rest are the things.
pub(crate) const NAMES: &[&[&str]] = &[
    &["get", "fetch", "read", "show", "retrieve", "view", "describe", "cat", "load", "display"],
    &["list", "find", "search", "query", "lookup", "ls", "browse", "enumerate", "filter"],
    &["delete", "remove", "rm", "del", "destroy", "drop", "erase", "unlink", "purge"],
    &["create", "add", "new", "make", "insert", "mk", "register"],
    &["update", "edit", "modify", "change", "patch", "set", "replace", "amend"],
    &["write", "save", "put", "store"],
    &["move", "rename", "mv", "relocate"],
    &["copy", "cp", "duplicate", "clone"],
    &["directory", "dir", "folder"],
    &["file", "document"],
    &["time", "clock"],
    &["invoice", "bill"],
];

/// What each verb group does to the world: a name is never suggested for one that does
/// something else (`remove_note` is not `create_note`, however alike they are spelled).
/// Reading and finding are one effect: `fetch_invoices` may well mean `list_invoices`.
const VERBS: &[(&str, &str)] = &[
    ("get", "read"),
    ("list", "read"),
    ("delete", "delete"),
    ("create", "create"),
    ("update", "update"),
    ("write", "write"),
    ("move", "move"),
    ("copy", "copy"),
];

/// Shell words that name a verb and a thing at once.
const COMPOUNDS: &[(&str, &[&str])] = &[
    ("mkdir", &["create", "directory"]),
    ("rmdir", &["delete", "directory"]),
    ("pwd", &["get", "directory"]),
    ("ls", &["list"]),
    ("cd", &["directory"]),
    ("stat", &["get", "info"]),
];

/// A word of a name: as written, and as its group's first word.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Word {
    /// Lower-cased, as written.
    pub(crate) raw: String,
    /// Its singular's group's first word.
    pub(crate) canonical: String,
}

/// The words of a name (`searchNodes`, `create_directory`, `mkdir`) in the tools' vocabulary,
/// in order, shell compounds opened up.
pub(crate) fn name_words(name: &str) -> Vec<Word> {
    split(name)
        .into_iter()
        .flat_map(|raw| match COMPOUNDS.iter().find(|(compound, _)| *compound == raw) {
            Some((_, parts)) => parts.iter().map(|part| ((*part).to_owned(), (*part).to_owned())).collect(),
            None => vec![(canonical(&raw, NAMES), raw)],
        })
        .map(|(canonical, raw)| Word { raw, canonical })
        .collect()
}

/// The meaningful words of a text in `vocabulary`, each read as its group's first word.
pub(crate) fn text_words(text: &str, vocabulary: &[&[&str]]) -> BTreeSet<String> {
    split(text)
        .into_iter()
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()) && !STOP_WORDS.contains(&w.as_str()))
        .map(|w| canonical(&w, vocabulary))
        .collect()
}

/// What the verb group `canonical` does, if it is a verb.
pub(crate) fn effect(canonical: &str) -> Option<&'static str> {
    VERBS.iter().find(|(verb, _)| *verb == canonical).map(|(_, effect)| *effect)
}

/// A name or a text split at case changes, digits' edges and punctuation, lower-cased.
pub(crate) fn split(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && previous_lower);
        if boundary && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        previous_lower = c.is_lowercase();
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// A word as its synonym group's first word in `vocabulary`; a plural read as its singular.
pub(crate) fn canonical(word: &str, vocabulary: &[&[&str]]) -> String {
    let singular = singular(word);
    for group in vocabulary {
        if group.contains(&word) || group.contains(&singular.as_str()) {
            return group[0].to_owned();
        }
    }
    singular.to_owned()
}

/// `invoices` → `invoice`, `entities` → `entity`, `directories` → `directory`; `status` and
/// `address` stay.
fn singular(word: &str) -> String {
    if let Some(stem) = word.strip_suffix("ies").filter(|stem| stem.len() > 2) {
        return format!("{stem}y");
    }
    match word.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !word.ends_with("ss") && !word.ends_with("us") => stem.to_owned(),
        _ => word.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_split_singular_and_grouped() {
        let words: Vec<String> = text_words("maxResults_perPage 20 items", FIELDS).into_iter().collect();
        assert_eq!(words, ["item", "limit", "page", "result"]);
        let canonical: Vec<String> = name_words("removeEntities").into_iter().map(|w| w.canonical).collect();
        assert_eq!(canonical, ["delete", "entity"]);
        let canonical: Vec<String> = name_words("mkdir").into_iter().map(|w| w.canonical).collect();
        assert_eq!(canonical, ["create", "directory"]);
        assert_eq!(canonical_of("list_directories"), ["list", "directory"]);
        assert_eq!(canonical_of("status"), ["status"]);
    }

    fn canonical_of(name: &str) -> Vec<String> {
        name_words(name).into_iter().map(|w| w.canonical).collect()
    }
}
