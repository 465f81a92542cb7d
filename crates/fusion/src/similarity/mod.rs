//! Did-you-mean, by spelling and by meaning: which known names (tools, actions, fields,
//! prompts, resources) a name that is none of them most likely meant.
//!
//! A name is scored by how alike it is spelled (Jaro, as clap uses, checked by how many
//! characters survive the edits) and by the words it shares with each candidate once both
//! are split (`searchNodes` and `search_nodes`), read as their synonyms (`remove_entities`
//! and `delete_entities`, `mkdir` and `create_directory`) and, for the words the name does not
//! hold, found in its description. A candidate whose verb does something else is never
//! suggested (`remove_note` is not `create_note`); several are, when they score alike.

pub(crate) mod words;

use words::{Word, effect, name_words, text_words};

/// Similarity a candidate needs to be suggested (Jaro, as clap uses).
const THRESHOLD: f64 = 0.7;
/// Share of characters that must survive the edits: Jaro alone finds `id` close to
/// `void_reason` (two letters in order), which no reader would.
const EDIT_THRESHOLD: f64 = 0.5;
/// Score a candidate needs, by spelling or by words, to be suggested at all.
const CONFIDENT: f64 = 0.6;
/// How far below the best a candidate may score and still be named beside it.
const CLOSE: f64 = 0.1;
/// The most candidates one suggestion names.
const MOST: usize = 3;

/// The candidate most similar to `sent` by spelling, if any is similar enough.
pub(crate) fn closest<'a>(sent: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .filter_map(|candidate| spelling(sent, candidate).map(|score| (score, candidate)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// How alike `sent` and `candidate` are spelled, when alike enough to say so.
fn spelling(sent: &str, candidate: &str) -> Option<f64> {
    // Most characters must survive the edits, which a text many times longer cannot: left
    // out before the comparison, which costs one length times the other.
    if sent.len() > 16 * candidate.len() + 16 {
        return None;
    }
    let (sent, candidate) = (sent.to_lowercase(), candidate.to_lowercase());
    let edits = strsim::normalized_levenshtein(&sent, &candidate);
    let score = strsim::jaro(&sent, &candidate);
    (score >= THRESHOLD && edits >= EDIT_THRESHOLD).then_some(score)
}

/// A known name, with the words that describe it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Named<'a> {
    /// The name as it is compared: a tool's own name, without the namespace it is served under.
    pub(crate) name: &'a str,
    /// What its description says, if anything.
    pub(crate) description: Option<&'a str>,
}

impl<'a> Named<'a> {
    /// A name with no description.
    pub(crate) fn bare(name: &'a str) -> Named<'a> {
        Named { name, description: None }
    }
}

/// The indexes of the candidates `sent` most likely meant, best first: the best, and those
/// that score close to it (at most three); none when no candidate is close enough.
pub(crate) fn likely<'a>(sent: &str, candidates: impl IntoIterator<Item = Named<'a>>) -> Vec<usize> {
    let sent_words = name_words(sent);
    let mut scored: Vec<(f64, usize)> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(index, candidate)| score(sent, &sent_words, candidate).map(|score| (score, index)))
        .filter(|(score, _)| *score >= CONFIDENT)
        .collect();
    // Best first; among equals, the candidates' own order.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let Some(&(best, _)) = scored.first() else { return Vec::new() };
    scored.into_iter().take_while(|(score, _)| best - score <= CLOSE).take(MOST).map(|(_, index)| index).collect()
}

/// The names (without descriptions) `sent` most likely meant, best first: [`likely`] over
/// bare names.
pub(crate) fn likely_names<'a>(sent: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let names: Vec<&str> = names.into_iter().collect();
    likely(sent, names.iter().copied().map(Named::bare)).into_iter().map(|index| names[index]).collect()
}

/// How likely `sent` (split into `sent_words`) means `candidate`, from 0 to 1; `None` when it
/// cannot: its verb does something else.
fn score(sent: &str, sent_words: &[Word], candidate: Named<'_>) -> Option<f64> {
    let words = name_words(candidate.name);
    if opposite(sent_words, &words) {
        return None;
    }
    // The same words, only cased or joined otherwise (`searchNodes`, `search-nodes`).
    if !words.is_empty() && sent_words.iter().map(|w| &w.raw).eq(words.iter().map(|w| &w.raw)) {
        return Some(1.0);
    }
    // Spelling alone counts less than the same words: `current_time` is spelled much like
    // `convert_time`, but says every word of `get_current_time`; and much less across a
    // different number of words, where one name inside the other (`invoices`,
    // `get_invoice`) is no slip of the keyboard.
    let weight = if words.len() == sent_words.len() { 0.9 } else { 0.75 };
    let spelled = spelling(&joined(sent), &joined(candidate.name)).map_or(0.0, |score| weight * score);
    Some(spelled.max(shared(sent_words, &words, candidate.description)))
}

/// A name without its separators, lower-cased: `search_nodes` as `searchnodes`.
fn joined(name: &str) -> String {
    name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// Whether the first verb of each name does something different from the other's.
fn opposite(sent: &[Word], candidate: &[Word]) -> bool {
    let verb = |words: &[Word]| words.iter().find_map(|w| effect(&w.canonical));
    matches!((verb(sent), verb(candidate)), (Some(a), Some(b)) if a != b)
}

/// How much of `sent` the candidate's words (then its description) say, and how much of the
/// candidate `sent` says: a word as written counts whole, a synonym or a plural less, a
/// misspelt word less again, a word only its description holds half.
fn shared(sent: &[Word], candidate: &[Word], description: Option<&str>) -> f64 {
    if sent.is_empty() || candidate.is_empty() {
        return 0.0;
    }
    let described = description.map(|text| text_words(text, words::NAMES)).unwrap_or_default();
    let alike = |a: &Word, b: &Word| -> f64 {
        if a.raw == b.raw {
            1.0
        } else if a.canonical == b.canonical {
            0.8
        } else if a.raw.len() >= 4 && b.raw.len() >= 4 && strsim::jaro_winkler(&a.raw, &b.raw) >= 0.9 {
            0.7
        } else {
            0.0
        }
    };
    let covered: f64 = sent
        .iter()
        .map(|word| {
            let named = candidate.iter().map(|own| alike(word, own)).fold(0.0, f64::max);
            if named > 0.0 {
                named
            } else if described.contains(&word.canonical) {
                0.5
            } else {
                0.0
            }
        })
        .sum();
    let said = candidate.iter().filter(|own| sent.iter().any(|word| alike(word, own) > 0.0)).count();
    0.7 * covered / sent.len() as f64 + 0.3 * said as f64 / candidate.len() as f64
}

/// `Did you mean "a"?`, `Did you mean "a" or "b"?`, `Did you mean "a", "b" or "c"?`, each
/// name as `quote` writes it; `None` for no names.
pub(crate) fn did_you_mean(names: &[String]) -> Option<String> {
    (!names.is_empty()).then(|| format!("Did you mean {}?", one_of(names)))
}

/// `a`, `a or b`, `a, b or c`: names a caller is to pick one of.
pub(crate) fn one_of<S: AsRef<str>>(names: &[S]) -> String {
    match names {
        [] => String::new(),
        [one] => one.as_ref().to_owned(),
        [rest @ .., last] => {
            let rest: Vec<&str> = rest.iter().map(AsRef::as_ref).collect();
            format!("{} or {}", rest.join(", "), last.as_ref())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn likely_names(sent: &str, names: &[&str]) -> Vec<String> {
        likely(sent, names.iter().map(|name| Named::bare(name))).into_iter().map(|i| names[i].to_owned()).collect()
    }

    const MEMORY: &[&str] = &[
        "create_entities",
        "create_relations",
        "add_observations",
        "delete_entities",
        "delete_observations",
        "delete_relations",
        "read_graph",
        "search_nodes",
        "open_nodes",
    ];
    const FILES: &[&str] = &[
        "read_file",
        "read_text_file",
        "read_multiple_files",
        "write_file",
        "edit_file",
        "create_directory",
        "list_directory",
        "directory_tree",
        "move_file",
        "search_files",
        "get_file_info",
        "list_allowed_directories",
    ];
    const TIME: &[&str] = &["get_current_time", "convert_time"];
    const BILLING: &[&str] = &["list_invoices", "get_invoice", "create_invoice", "pay_invoice", "void_invoice"];

    #[test]
    fn names_by_meaning() {
        assert_eq!(likely_names("remove_entities", MEMORY), ["delete_entities"]);
        assert_eq!(likely_names("searchNodes", MEMORY), ["search_nodes"]);
        assert_eq!(likely_names("find_files", FILES), ["search_files"]);
        assert_eq!(likely_names("mkdir", FILES), ["create_directory"]);
        assert_eq!(likely_names("move", FILES), ["move_file"]);
        assert_eq!(likely_names("get_time", TIME), ["get_current_time"]);
        assert_eq!(likely_names("current_time", TIME), ["get_current_time"]);
        assert_eq!(likely_names("invoices", BILLING), ["list_invoices"]);
        assert_eq!(likely_names("get_invoce", BILLING), ["get_invoice"]);
        assert_eq!(likely_names("delete", MEMORY), ["delete_entities", "delete_observations", "delete_relations"]);
        // An opposite verb is never meant, however alike the spelling.
        assert_eq!(likely_names("remove_note", &["create_note", "list_notes"]), Vec::<String>::new());
        assert_eq!(likely_names("zzzz", BILLING), Vec::<String>::new());
    }

    #[test]
    fn said_as_one_question() {
        let names = |names: &[&str]| names.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>();
        assert_eq!(did_you_mean(&names(&["a"])).as_deref(), Some("Did you mean \"a\"?"));
        assert_eq!(did_you_mean(&names(&["a", "b", "c"])).as_deref(), Some("Did you mean \"a\", \"b\" or \"c\"?"));
        assert_eq!(did_you_mean(&[]), None);
    }

    #[test]
    fn suggests_the_best_close_name() {
        let names = ["list_invoices", "get_invoice", "create_invoice", "pay_invoice", "void_invoice"];
        assert_eq!(closest("get_invoce", names), Some("get_invoice"));
        assert_eq!(closest("GET_INVOICE", names), Some("get_invoice"));
        assert_eq!(closest("nmae", ["name", "id"]), Some("name"));
        assert_eq!(closest("zzzz", names), None);
        assert_eq!(closest("x", []), None);
        // Two letters in order do not make a name close.
        assert_eq!(closest("void_reason", ["id", "reason"]), None);
        assert_eq!(closest("ehco", ["echo", "order"]), Some("echo"));
        assert_eq!(closest(&"echo".repeat(1_000), ["echo"]), None);
    }
}
