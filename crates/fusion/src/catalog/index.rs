//! The search index over a catalog's tools: BM25F, the ranking function of the field for
//! documents with fields of different weight, over each tool's name, title, description and
//! parameters.
//!
//! Words are split at separators and case changes (`searchCustomers`, `search_customers`),
//! lower-cased, stripped of English stop words (NLTK's list, and "please", "tool", "tools",
//! which every request to find a tool may say) and stemmed (Snowball), so "converting" finds "convert"
//! and "invoices" finds "invoice". A query word also looks for its synonyms (`remove` for
//! `delete`) at half weight: an expansion, never a filter. A tool matches when it says any of
//! the query's words; its match is its score over the most the query could score, from 0 to 1,
//! so a model can tell a weak match from a strong one.

use std::collections::HashMap;
use std::sync::LazyLock;

use mcp_fusion_contract::{ACTIONS_META_KEY, DISCRIMINATOR_META_KEY};
use rmcp::model::{JsonObject, Tool};
use rust_stemmers::{Algorithm, Stemmer};
use serde_json::Value;

use crate::similarity::words::{NAMES, split};

/// The longest query searched, in characters: the rest of a longer one is left out.
pub(crate) const MAX_QUERY_CHARS: usize = 1_000;

/// BM25's saturation: how fast more occurrences of a word stop counting.
const K1: f32 = 1.2;

/// The weight of a synonym of a query word, against the word itself.
const SYNONYM: f32 = 0.5;

/// A tool's fields, each with its weight and how much its length counts against it.
#[derive(Debug, Clone, Copy)]
enum Field {
    /// The tool's own name (without its namespace) and its title.
    Name,
    /// Its description.
    Description,
    /// Its parameters' names and descriptions.
    Parameters,
}

impl Field {
    const ALL: [Field; 3] = [Field::Name, Field::Description, Field::Parameters];

    fn weight(self) -> f32 {
        match self {
            Field::Name => 2.0,
            Field::Description => 1.0,
            Field::Parameters => 0.5,
        }
    }

    /// BM25's `b`: a name is short whatever it says, a description's length says more.
    fn length_weight(self) -> f32 {
        match self {
            Field::Name => 0.3,
            Field::Description | Field::Parameters => 0.75,
        }
    }
}

/// Words that say nothing of what is searched for.
static STOP_WORDS: LazyLock<std::collections::HashSet<&'static str>> = LazyLock::new(|| {
    let english = stop_words::lookup("en").unwrap_or_default();
    let requests = ["please", "tool", "tools"];
    english.iter().copied().chain(requests).collect()
});

static STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// The words of `text`, lower-cased: each run of letters and digits, and where its case
/// changes inside (`searchCustomers`, `JavaScript`) its parts too, so `javascript` and `java
/// script` both find it.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()).filter(|run| !run.is_empty()) {
        let parts = split(run);
        let whole = run.to_lowercase();
        if parts.len() > 1 {
            words.extend(parts.into_iter().filter(|part| *part != whole));
        }
        words.push(whole);
    }
    words
}

/// The terms of `text`: its words, stop words left out, stemmed.
fn terms(text: &str) -> impl Iterator<Item = String> {
    words(text).into_iter().filter(|word| !STOP_WORDS.contains(word.as_str())).map(|word| stem(&word))
}

fn stem(word: &str) -> String {
    STEMMER.stem(word).into_owned()
}

/// One entry's occurrences of a term: BM25F's saturated term frequency, made once when the
/// index is made (it depends on the entry and the term alone), so a search adds a product
/// per posting.
#[derive(Debug, Clone, Copy)]
struct Posting {
    entry: u32,
    saturated: f32,
}

/// What a search can find: a tool, or one action of a grouped tool (whose `_meta` publishes
/// each action's description and input schema), found on its own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its tool's place in the tools indexed.
    pub(crate) tool: usize,
    /// For an action of a grouped tool: the argument that picks it, and its name.
    pub(crate) action: Option<(String, String)>,
}

/// The index of a list of tools.
#[derive(Debug, Default)]
pub(crate) struct SearchIndex {
    entries: Vec<Entry>,
    /// For each term, the entries that say it.
    postings: HashMap<String, Vec<Posting>>,
    /// Each entry's name (`billing.pay_invoice`, and without its namespace), lower-cased and
    /// without separators: a query that is a whole name finds that entry first.
    names: HashMap<String, u32>,
}

/// An entry a query found, with its match from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Found {
    /// Its place among the entries (see [`SearchIndex::entry`]).
    pub(crate) entry: usize,
    /// Its score over the most the query could score.
    pub(crate) score: f32,
}

impl SearchIndex {
    /// The index of `tools`, in their order; a grouped tool's actions each an entry of its own.
    pub(crate) fn new(tools: &[Tool]) -> SearchIndex {
        let mut index = SearchIndex::default();
        let mut counted: Vec<(u32, Counts, [u32; 3])> = Vec::with_capacity(tools.len());
        for (position, tool) in tools.iter().enumerate() {
            for (action, fields) in entries(tool) {
                let number = u32::try_from(index.entries.len()).unwrap_or(u32::MAX);
                let entry = Entry { tool: position, action };
                for name in entry_names(tool, &entry) {
                    index.names.entry(name).or_insert(number);
                }
                let (counts, lengths) = counts(&fields);
                counted.push((number, counts, lengths));
                index.entries.push(entry);
            }
        }
        let entries = counted.len().max(1) as f32;
        let mut average = [0f32; 3];
        for field in Field::ALL {
            let total: u64 = counted.iter().map(|(_, _, lengths)| u64::from(lengths[field as usize])).sum();
            average[field as usize] = (total as f32 / entries).max(1.0);
        }
        for (entry, counts, lengths) in counted {
            for (term, counts) in counts {
                let said: f32 = Field::ALL
                    .iter()
                    .map(|&field| {
                        let count = f32::from(counts[field as usize]);
                        let relative = lengths[field as usize] as f32 / average[field as usize];
                        let b = field.length_weight();
                        field.weight() * count / (1.0 - b + b * relative)
                    })
                    .sum();
                index.postings.entry(term).or_default().push(Posting { entry, saturated: said / (K1 + said) });
            }
        }
        index
    }

    /// The entry numbered so in a [`Found`].
    pub(crate) fn entry(&self, number: usize) -> &Entry {
        &self.entries[number]
    }

    /// The entries `query` finds among the tools `visible` lets through, best first, at most
    /// `limit`; among equal scores, the tools' order.
    pub(crate) fn search(&self, query: &str, limit: usize, visible: impl Fn(usize) -> bool) -> Vec<Found> {
        let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
        let weighted = expanded(&query);
        let entries = self.entries.len() as f32;
        let idf = |found: usize| (1.0 + (entries - found as f32 + 0.5) / (found as f32 + 0.5)).ln();
        let mut scores = vec![0f32; self.entries.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut most = 0.0;
        for (term, weight) in &weighted {
            let postings = self.postings.get(term).map_or(&[][..], Vec::as_slice);
            let idf = idf(postings.len());
            // A word no tool says still counts in what the query could score: a query of
            // unknown words matches weakly whatever it finds.
            most += weight * idf;
            for posting in postings {
                let score = &mut scores[posting.entry as usize];
                if *score == 0.0 {
                    touched.push(posting.entry);
                }
                *score += weight * idf * posting.saturated;
            }
        }
        let mut found: Vec<Found> = touched
            .into_iter()
            .map(|entry| Found { entry: entry as usize, score: scores[entry as usize] / most.max(f32::MIN_POSITIVE) })
            .filter(|found| found.score > 0.0 && visible(self.entries[found.entry].tool))
            .collect();
        let order = |a: &Found, b: &Found| b.score.total_cmp(&a.score).then(a.entry.cmp(&b.entry));
        if found.len() > limit && limit > 0 {
            found.select_nth_unstable_by(limit - 1, order);
        }
        found.truncate(limit);
        found.sort_by(order);
        found
    }

    /// The entry whose whole name `query` is, written any way (`read_file`, `readFile`).
    pub(crate) fn named(&self, query: &str) -> Option<usize> {
        self.names.get(&joined(query)).map(|&entry| entry as usize)
    }
}

/// Each term of an entry with its occurrences per field.
type Counts = HashMap<String, [u16; 3]>;

/// The terms of `fields` counted per field, and each field's length in terms.
fn counts(fields: &[(Field, String)]) -> (Counts, [u32; 3]) {
    let mut counts: HashMap<String, [u16; 3]> = HashMap::new();
    let mut lengths = [0u32; 3];
    for (field, text) in fields {
        for term in terms(text) {
            let slot = &mut counts.entry(term).or_default()[*field as usize];
            *slot = slot.saturating_add(1);
            lengths[*field as usize] += 1;
        }
    }
    (counts, lengths)
}

/// A name lower-cased, without separators: `read_file` and `readFile` as `readfile`.
fn joined(name: &str) -> String {
    name.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// The names an entry is found by: the tool's (`crm.find`), or for an action of a grouped tool
/// the tool's with the action's after a dot (`billing.pay_invoice`); as served and without the
/// namespace.
pub(crate) fn entry_name(tool: &Tool, entry: &Entry) -> String {
    match &entry.action {
        None => tool.name.to_string(),
        Some((_, action)) => format!("{}.{action}", tool.name),
    }
}

fn entry_names(tool: &Tool, entry: &Entry) -> [String; 2] {
    let name = entry_name(tool, entry);
    let own = name.split_once('.').map_or(name.as_str(), |(_, own)| own);
    [joined(&name), joined(own)]
}

/// The terms of `query` with their weights: each word's stem at 1, its synonyms' at
/// [`SYNONYM`] (a stem said both ways counts once, at its higher weight).
fn expanded(query: &str) -> Vec<(String, f32)> {
    let mut weighted: Vec<(String, f32)> = Vec::new();
    let mut add = |term: String, weight: f32| match weighted.iter_mut().find(|(known, _)| *known == term) {
        Some((_, known)) => *known = known.max(weight),
        None => weighted.push((term, weight)),
    };
    for word in words(query).into_iter().filter(|word| !STOP_WORDS.contains(word.as_str())) {
        add(stem(&word), 1.0);
        if let Some(group) = NAMES.iter().find(|group| group.contains(&word.as_str())) {
            for synonym in group.iter().filter(|synonym| **synonym != word) {
                add(stem(synonym), SYNONYM);
            }
        }
    }
    weighted
}

/// For an action of a grouped tool: the argument that picks it, and its name.
type Action = Option<(String, String)>;

/// The text of each field of an entry.
type Fields = Vec<(Field, String)>;

/// The entries of `tool` with the text of each field: the tool itself, or, for a grouped tool
/// that publishes its actions, each action (named with the tool's name, so `billing pay`
/// finds `billing`'s `pay_invoice`).
fn entries(tool: &Tool) -> Vec<(Action, Fields)> {
    let own = tool.name.split_once('.').map_or(&*tool.name, |(_, own)| own);
    let meta = tool.meta.as_ref();
    let discriminator = meta.and_then(|meta| meta.get(DISCRIMINATOR_META_KEY)).and_then(Value::as_str);
    let actions = meta.and_then(|meta| meta.get(ACTIONS_META_KEY)).and_then(Value::as_object);
    if let (Some(discriminator), Some(actions)) = (discriminator, actions)
        && !actions.is_empty()
    {
        return actions
            .iter()
            .map(|(action, contract)| {
                let title = contract.pointer("/annotations/title").and_then(Value::as_str).unwrap_or_default();
                let description = contract.get("description").and_then(Value::as_str).unwrap_or_default();
                let fields = vec![
                    (Field::Name, format!("{own} {action} {title}")),
                    (Field::Description, description.to_owned()),
                    (Field::Parameters, parameters(contract.get("inputSchema"), Some(discriminator))),
                ];
                (Some((discriminator.to_owned(), action.clone())), fields)
            })
            .collect();
    }
    let mut name = own.to_owned();
    if let Some(title) = tool.title.as_deref().or_else(|| tool.annotations.as_ref()?.title.as_deref()) {
        name.push(' ');
        name.push_str(title);
    }
    let schema = Value::Object(JsonObject::clone(&tool.input_schema));
    let fields = vec![
        (Field::Name, name),
        (Field::Description, tool.description.as_deref().unwrap_or_default().to_owned()),
        (Field::Parameters, parameters(Some(&schema), None)),
    ];
    vec![(None, fields)]
}

/// The names and descriptions of the properties of `schema`, the discriminator left out.
fn parameters(schema: Option<&Value>, discriminator: Option<&str>) -> String {
    let mut text = String::new();
    let properties = schema.and_then(|schema| schema.get("properties")).and_then(Value::as_object);
    for (key, property) in properties.into_iter().flatten().filter(|(key, _)| Some(key.as_str()) != discriminator) {
        text.push_str(key);
        text.push(' ');
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            text.push_str(description);
            text.push(' ');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::JsonObject;
    use serde_json::json;

    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        Tool::new(name.to_owned(), description.to_owned(), Arc::new(JsonObject::new()))
    }

    fn names<'a>(tools: &'a [Tool], found: &[Found]) -> Vec<&'a str> {
        found.iter().map(|found| &*tools[found.entry].name).collect()
    }

    #[test]
    fn stems_split_names_and_stop_words_are_what_a_query_and_a_tool_share() {
        let tools = [
            tool("conv.convertCurrency", "Converts an amount between currencies."),
            tool("news.latest_headlines", "The day's news from around the world."),
            tool("notes.create_note", "Creates a new note."),
        ];
        let index = SearchIndex::new(&tools);
        let all = |_| true;
        assert_eq!(names(&tools, &index.search("converting dollars to euros", 5, all)), ["conv.convertCurrency"]);
        assert_eq!(names(&tools, &index.search("Can you show me the news?", 5, all))[0], "news.latest_headlines");
        // Stop words alone find nothing.
        assert!(index.search("can you help me with this please", 5, all).is_empty());
        // A synonym is an expansion: `add` finds the tool that creates.
        assert_eq!(names(&tools, &index.search("add a note", 5, all))[0], "notes.create_note");
        // A word with a case change inside is found whole or in parts.
        let tools = [tool("code.repos", "Trending JavaScript repositories on GitHub.")];
        let index = SearchIndex::new(&tools);
        for query in ["javascript repos", "Java Script", "github"] {
            assert_eq!(names(&tools, &index.search(query, 5, all)), ["code.repos"], "{query}");
        }
    }

    #[test]
    fn every_tool_that_says_a_word_is_found_with_its_match() {
        let tools = [
            tool("a.weather_forecast", "The weather forecast for a city."),
            tool("b.city_guide", "What to see in a city."),
        ];
        let index = SearchIndex::new(&tools);
        let found = index.search("weather in a city near the sea", 5, |_| true);
        assert_eq!(names(&tools, &found), ["a.weather_forecast", "b.city_guide"]);
        assert!(found[0].score > found[1].score && found[0].score <= 1.0 && found[1].score > 0.0, "{found:?}");
        // What the caller may not see is not found.
        assert_eq!(names(&tools, &index.search("weather city", 5, |tool| tool == 1)), ["b.city_guide"]);
    }

    #[test]
    fn parameters_and_titles_are_searched() {
        let mut with_title = tool("x.t1", "Does it.");
        with_title.title = Some("Refund a payment".to_owned());
        let schema = json!({"type": "object", "properties": {"iban": {"type": "string", "description": "The account to pay into."}}});
        let with_parameter = Tool::new("y.t2", "Sends money.", Arc::new(schema.as_object().cloned().unwrap()));
        let tools = [with_title, with_parameter];
        let index = SearchIndex::new(&tools);
        assert_eq!(names(&tools, &index.search("refund", 5, |_| true)), ["x.t1"]);
        assert_eq!(names(&tools, &index.search("iban", 5, |_| true)), ["y.t2"]);
    }

    #[test]
    fn a_query_longer_than_the_bound_is_searched_by_its_start() {
        let tools = [tool("a.weather_forecast", "The weather forecast.")];
        let index = SearchIndex::new(&tools);
        let long = format!("weather {}", "word ".repeat(10_000));
        assert_eq!(names(&tools, &index.search(&long, 5, |_| true)), ["a.weather_forecast"]);
    }
}
