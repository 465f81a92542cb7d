//! What a schema asks of a value, said in words: the `Expected …` half of a sentence.

use serde_json::Value;

use crate::problem::Bound;
use crate::sent::Sent;
use crate::shape::Shape;

/// Allowed values listed before the rest is counted instead.
const MAX_LISTED_VALUES: usize = 25;
/// The longest description a sentence quotes, in characters.
const MAX_DESCRIPTION_CHARS: usize = 100;

/// What a schema asks of a value, as much as a sentence can say: its allowed values, its
/// format or pattern, its type and bounds, an example, and the first sentence of its
/// description.
///
/// ```
/// use mcp_fusion_wire::{Bound, Expectation};
/// use serde_json::json;
///
/// let currency = Expectation { allowed: vec![json!("EUR"), json!("USD")], ..Expectation::default() };
/// assert_eq!(currency.phrase(), "one of 'EUR', 'USD'");
///
/// let id = Expectation {
///     types: vec!["string".into()],
///     pattern: Some("^inv_[a-z0-9_]+$".into()),
///     example: Some(json!("inv_2026_0001")),
///     ..Expectation::default()
/// };
/// assert_eq!(id.phrase(), "a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_2026_0001'");
///
/// let limit = Expectation {
///     types: vec!["integer".into()],
///     at_least: Some(Bound::Number { limit: 1.into(), exclusive: false }),
///     at_most: Some(Bound::Number { limit: 100.into(), exclusive: false }),
///     description: Some("How many invoices per page. The default is 20.".into()),
///     ..Expectation::default()
/// };
/// assert_eq!(limit.phrase(), "an integer from 1 to 100: how many invoices per page");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expectation {
    /// The JSON types accepted (`string`, `integer`, …); empty means any.
    pub types: Vec<String>,
    /// The values allowed (`enum`, `const`); empty means the schema lists none.
    pub allowed: Vec<Value>,
    /// The format a string has (`email`, `date`, …).
    pub format: Option<String>,
    /// The pattern a string matches.
    pub pattern: Option<String>,
    /// The lower bound: of a number, a length, or a count of items or properties.
    pub at_least: Option<Bound>,
    /// The upper bound.
    pub at_most: Option<Bound>,
    /// A value the schema gives as an example (`examples`, or its `default`).
    pub example: Option<Value>,
    /// The schema's description; its first sentence is quoted when nothing more precise is
    /// known.
    pub description: Option<String>,
    /// The branches of a union (`anyOf`, `oneOf`) the schema is, when it names no type of its
    /// own: said as what to send instead of "any value".
    pub alternatives: Vec<Shape>,
}

impl Expectation {
    /// A value of one of `types`.
    pub fn of_types(types: Vec<String>) -> Expectation {
        Expectation { types, ..Expectation::default() }
    }

    /// The phrase that follows `Expected `: the most precise thing the schema says.
    pub fn phrase(&self) -> String {
        if !self.allowed.is_empty() {
            return values_phrase(&self.allowed);
        }
        if let Some(format) = &self.format {
            return format_expectation(format);
        }
        let mut phrase = match &self.pattern {
            Some(pattern) => format!("a string matching the pattern /{pattern}/"),
            None => self.typed_range(),
        };
        if let Some(example) = &self.example {
            phrase.push_str(", like ");
            phrase.push_str(Sent::value(example).as_str());
        }
        if self.pattern.is_none()
            && let Some(description) = self.description.as_deref().and_then(first_sentence)
        {
            phrase.push_str(": ");
            phrase.push_str(&description);
        }
        phrase
    }

    /// The phrase for a field that was not sent at all: what the field is for, in its
    /// description's words, whatever else is known, since the caller may hold the value under
    /// other words (the user's "invoice number" for `id`, "The invoice id"); and an example
    /// of a field with a pattern shown as its shape only (`'inv_…'`), since a caller with no
    /// value of its own could take a real record's id for one.
    ///
    /// ```
    /// use mcp_fusion_wire::Expectation;
    /// use serde_json::json;
    ///
    /// let id = Expectation {
    ///     types: vec!["string".into()],
    ///     pattern: Some("^inv_[a-z0-9_]+$".into()),
    ///     example: Some(json!("inv_2026_0001")),
    ///     description: Some("The invoice id, like `inv_2026_0001`.".into()),
    ///     ..Expectation::default()
    /// };
    /// assert_eq!(id.missing_phrase(), "a string matching the pattern /^inv_[a-z0-9_]+$/, like 'inv_…': the invoice id");
    /// ```
    pub fn missing_phrase(&self) -> String {
        let shape = match (&self.pattern, &self.example) {
            (Some(pattern), Some(Value::String(_))) => Some(Value::String(format!("{}…", literal_prefix(pattern)))),
            _ => self.example.clone(),
        };
        let mut phrase =
            Expectation { example: shape.filter(|shape| shape != "…"), description: None, ..self.clone() }.phrase();
        if let Some(about) = self.description.as_deref().and_then(first_sentence).map(|about| without_example(&about))
            && !about.is_empty()
        {
            phrase.push_str(": ");
            phrase.push_str(&about);
        }
        phrase
    }

    /// The phrase with the description's first sentence whole, examples included, after
    /// whatever else the schema says: what a field is answered with when the words of a
    /// refusal named it but not what it takes.
    ///
    /// ```
    /// use mcp_fusion_wire::Expectation;
    ///
    /// let timezone = Expectation {
    ///     types: vec!["string".into()],
    ///     description: Some("IANA timezone name (e.g., 'America/New_York'). Use 'UTC' if unsure.".into()),
    ///     ..Expectation::default()
    /// };
    /// assert_eq!(timezone.described_phrase(), "a string: IANA timezone name (e.g., 'America/New_York')");
    /// ```
    pub fn described_phrase(&self) -> String {
        let mut phrase = Expectation { description: None, ..self.clone() }.phrase();
        if let Some(about) = self.description.as_deref().and_then(first_sentence) {
            phrase.push_str(": ");
            phrase.push_str(&about);
        }
        phrase
    }

    /// `an integer from 1 to 100`, `a string of at most 200 characters`, `a non-negative
    /// integer`, `any value`.
    fn typed_range(&self) -> String {
        let numeric = !self.types.is_empty() && self.types.iter().all(|t| t == "integer" || t == "number");
        let integer = self.types.iter().all(|t| t == "integer") && !self.types.is_empty();
        // A bound at a type's own limit (a `u64`'s, an `i64`'s, JavaScript's safe integers) says
        // nothing a caller acts on; a lower bound of 0 on integers is said as "non-negative".
        let at_least = self.at_least.as_ref().filter(|bound| !(integer && is_type_limit(bound)));
        let at_most = self.at_most.as_ref().filter(|bound| !(integer && is_type_limit(bound)));
        // With an upper bound too, "from 0 to 255" says it better.
        let non_negative = integer
            && at_most.is_none()
            && matches!(at_least, Some(Bound::Number { limit, exclusive: false }) if limit.as_u64() == Some(0));
        let at_least = at_least.filter(|_| !non_negative);
        let base = match self.types.as_slice() {
            [] if matches!(at_least.or(at_most), Some(Bound::Number { .. })) => "a number".to_owned(),
            _ if non_negative => "a non-negative integer".to_owned(),
            [] if !self.alternatives.is_empty() => alternatives_phrase(&self.alternatives),
            types => types_phrase(types, "any value"),
        };
        match (at_least, at_most) {
            (None, None) => base,
            (
                Some(Bound::Number { limit: low, exclusive: false }),
                Some(Bound::Number { limit: high, exclusive: false }),
            ) if numeric => format!("{base} from {low} to {high}"),
            (Some(Bound::Characters(low)), Some(Bound::Characters(high))) => {
                format!("{base} of {low} to {high} characters")
            }
            (Some(Bound::Items(low)), Some(Bound::Items(high))) => format!("{base} of {low} to {high} items"),
            (low, high) => {
                let parts: Vec<String> = low
                    .iter()
                    .map(|bound| bound_phrase(bound, Side::Lower))
                    .chain(high.iter().map(|bound| bound_phrase(bound, Side::Upper)))
                    .map(|part| if part.starts_with("at ") { format!("of {part}") } else { part })
                    .collect();
                format!("{base} {}", parts.join(" and "))
            }
        }
    }
}

/// Whether an integer bound is the limit of a wide type itself: 32 and 64 bits, signed or
/// not, and JavaScript's safe integers (±(2^53 − 1)), which Zod writes on every integer.
/// A narrow type's limit (a `u8`'s 255) is a real constraint a caller can meet, so it stays.
fn is_type_limit(bound: &Bound) -> bool {
    const SAFE: i64 = 9_007_199_254_740_991;
    const LIMITS: [i64; 7] = [i64::MAX, i64::MIN, SAFE, -SAFE, u32::MAX as i64, i32::MAX as i64, i32::MIN as i64];
    let Bound::Number { limit, .. } = bound else { return false };
    limit.as_u64() == Some(u64::MAX) || limit.as_i64().is_some_and(|n| LIMITS.contains(&n))
}

/// Which side a bound limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Lower,
    Upper,
}

/// `at least 1`, `greater than 0`, `at most 200 characters`, `less than 100`.
pub(crate) fn bound_phrase(bound: &Bound, side: Side) -> String {
    let least_most = match side {
        Side::Lower => "at least",
        Side::Upper => "at most",
    };
    let counted = |n: u64, one: &str, many: &str| format!("{least_most} {n} {}", if n == 1 { one } else { many });
    match bound {
        Bound::Number { limit, exclusive: false } => format!("{least_most} {limit}"),
        Bound::Number { limit, exclusive: true } => match side {
            Side::Lower => format!("greater than {limit}"),
            Side::Upper => format!("less than {limit}"),
        },
        Bound::Characters(n) => counted(*n, "character", "characters"),
        Bound::Items(n) => counted(*n, "item", "items"),
        Bound::Properties(n) => counted(*n, "property", "properties"),
    }
}

/// What one of a union's branches is: `one of: a string; an object with the required field
/// 'id'`, the one branch's own words, or the union's when it says none.
pub(crate) fn alternatives_phrase(options: &[Shape]) -> String {
    match options {
        [] => "a value matching one of the allowed shapes".into(),
        [one] => one.phrase(),
        _ => format!("one of: {}", options.iter().map(Shape::phrase).collect::<Vec<_>>().join("; ")),
    }
}

/// `a string`, `a string or null`, `an integer, a string or null`.
pub(crate) fn types_phrase(types: &[String], none: &str) -> String {
    let phrases: Vec<String> = types.iter().map(|t| type_phrase(t)).collect();
    match phrases.as_slice() {
        [] => none.to_owned(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn type_phrase(json_type: &str) -> String {
    match json_type {
        "null" => "null".into(),
        "integer" | "object" | "array" => format!("an {json_type}"),
        "string" | "number" | "boolean" => format!("a {json_type}"),
        other => format!("a value of type {other}"),
    }
}

/// What a string of `format` looks like, with an example.
pub(crate) fn format_expectation(format: &str) -> String {
    let described = match format {
        "email" | "idn-email" => "a valid email address, like name@example.com",
        "uri" | "iri" => "an absolute URI, like https://example.com/path",
        "uri-reference" | "iri-reference" => "a URI or relative reference, like /path or https://example.com",
        "uuid" => "a UUID, like 123e4567-e89b-12d3-a456-426614174000",
        "date-time" => "an RFC 3339 date-time, like 2026-01-31T09:30:00Z",
        "date" => "a date as YYYY-MM-DD, like 2026-01-31",
        "time" => "a time as HH:MM:SS with an offset, like 09:30:00Z",
        "duration" => "an ISO 8601 duration, like P3DT4H",
        "ipv4" => "an IPv4 address, like 192.168.0.1",
        "ipv6" => "an IPv6 address, like 2001:db8::1",
        "hostname" | "idn-hostname" => "a hostname, like api.example.com",
        "regex" => "a valid regular expression",
        "json-pointer" => "a JSON pointer, like /items/0",
        _ => return format!("a string in {format} format"),
    };
    described.to_owned()
}

/// `exactly 'EUR'`, `one of 'EUR', 'USD', 'BRL'`.
pub(crate) fn values_phrase(allowed: &[Value]) -> String {
    // `null` beside values is how a field is left unset, not one more choice to pick.
    let values: Vec<&Value> = allowed.iter().filter(|v| !v.is_null()).collect();
    let unset = values.len() < allowed.len() && !values.is_empty();
    let shown: Vec<String> = values.iter().take(MAX_LISTED_VALUES).map(|v| shown(v)).collect();
    let more = values.len().saturating_sub(MAX_LISTED_VALUES);
    let phrase = match (shown.as_slice(), more) {
        ([], _) if allowed.is_empty() => return "no value at all (nothing is allowed here); remove it".into(),
        ([], _) => return "exactly null".into(),
        ([one], 0) => format!("exactly {one}"),
        (_, 0) => format!("one of {}", shown.join(", ")),
        (_, more) => format!("one of {} (and {more} more)", shown.join(", ")),
    };
    if unset { format!("{phrase} (or null, to leave it unset)") } else { phrase }
}

/// An allowed value as a sentence shows it: as any echo, but an array written out
/// (`[1,2]`, cut as a long object is) rather than counted, since it is what to send.
fn shown(value: &Value) -> String {
    match value {
        Value::Array(_) => crate::sent::json(value),
        other => Sent::value(other).as_str().to_owned(),
    }
}

/// `'id', 'name'`, counting the names beyond the first 25.
pub fn quoted_list(names: &[String]) -> String {
    let shown: Vec<String> = names.iter().take(MAX_LISTED_VALUES).map(|n| Sent::text(n).as_str().to_owned()).collect();
    match names.len().saturating_sub(MAX_LISTED_VALUES) {
        0 => shown.join(", "),
        more => format!("{} (and {more} more)", shown.join(", ")),
    }
}

/// The first sentence of a description, without its final period, lower-cased when it starts
/// with an ordinary word, cut to 100 characters; `None` when it is empty.
pub(crate) fn first_sentence(description: &str) -> Option<String> {
    let line = description.lines().map(str::trim).find(|line| !line.is_empty())?;
    let sentence = match sentence_end(line) {
        Some(end) => &line[..end],
        None => line,
    };
    let sentence = sentence.trim_end_matches('.').trim();
    if sentence.is_empty() {
        return None;
    }
    let first = sentence.chars().next()?;
    // An ordinary first word (`The`, `A`) is lower-cased; an acronym or a name (`ISO`, `URL`) is not.
    let first_word = sentence.split_whitespace().next().unwrap_or_default();
    let ordinary = first_word.chars().skip(1).all(|c| c.is_lowercase() || !c.is_alphabetic());
    let mut out: String =
        if ordinary { first.to_lowercase().chain(sentence.chars().skip(1)).collect() } else { sentence.to_owned() };
    if out.chars().count() > MAX_DESCRIPTION_CHARS {
        let end = out.char_indices().nth(MAX_DESCRIPTION_CHARS - 1).map_or(out.len(), |(i, _)| i);
        // At the last space before the limit, so no word is cut in two; a word longer than half
        // the limit is.
        let end = out[..end].rfind(' ').filter(|space| *space > end / 2).unwrap_or(end);
        out.truncate(end);
        let trimmed = out.trim_end_matches([',', ';', ':', ' ', '(']).len();
        out.truncate(trimmed);
        out.push('…');
    }
    Some(out)
}

/// Where the first sentence of `line` ends: the first ". " that does not close an
/// abbreviation (`e.g. 'UTC'`, `i.e. the id`).
fn sentence_end(line: &str) -> Option<usize> {
    const ABBREVIATIONS: [&str; 6] = ["e.g", "i.e", "etc", "vs", "approx", "incl"];
    line.match_indices(". ").map(|(end, _)| end).find(|end| {
        let word = line[..*end].rsplit([' ', '(']).next().unwrap_or_default().to_ascii_lowercase();
        !ABBREVIATIONS.contains(&word.as_str())
    })
}

/// The characters every value matching `pattern` starts with (`inv_` of `^inv_[a-z0-9_]+$`).
fn literal_prefix(pattern: &str) -> String {
    let Some(rest) = pattern.strip_prefix('^') else { return String::new() };
    let mut prefix = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(escaped) if !escaped.is_alphanumeric() => prefix.push(escaped),
                _ => break,
            },
            c if c.is_alphanumeric() || matches!(c, '_' | '-' | ':' | '/' | '@' | '#') => {
                // A quantifier after it makes the character optional or repeated: not fixed.
                if matches!(chars.peek(), Some('?' | '*' | '{')) {
                    break;
                }
                prefix.push(c);
            }
            _ => break,
        }
    }
    prefix
}

/// A description's words without the example it gives (`the invoice id, like `inv_1``):
/// the expectation says the example's shape already.
fn without_example(about: &str) -> String {
    let cut = [", like ", " (like ", ", e.g.", " (e.g.", ", for example", " (for example", ", such as "]
        .iter()
        .filter_map(|marker| about.find(marker))
        .min()
        .unwrap_or(about.len());
    about[..cut].trim_end_matches([',', ';', ':', ' ']).to_owned()
}

/// The first words of a description, enough to choose a field by: its first sentence up to a
/// `;`, at most eight words, never ending inside a parenthesis or on a word that needs one
/// after it (`to`, `and`), without trailing punctuation.
pub(crate) fn few_words(description: &str) -> Option<String> {
    const DANGLING: &[&str] = &["a", "an", "the", "to", "and", "or", "of", "for", "from", "with", "in", "on", "by"];
    let sentence = first_sentence(description)?;
    let clause = sentence.split(';').next().unwrap_or_default();
    let all: Vec<&str> = clause.split_whitespace().collect();
    let mut words: Vec<&str> = all.iter().take(8).copied().collect();
    let cut = words.len() < all.len();
    // A parenthesis opened and not closed within the words is left out whole.
    let mut depth = 0i32;
    let mut opened_at = None;
    for (index, word) in words.iter().enumerate() {
        for c in word.chars() {
            match c {
                '(' => {
                    if depth == 0 {
                        opened_at = Some(index);
                    }
                    depth += 1;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
    }
    if depth > 0
        && let Some(at) = opened_at
    {
        words.truncate(at);
    }
    while cut
        && words.last().is_some_and(|w| DANGLING.contains(&w.trim_end_matches([',', ':', ';']).to_lowercase().as_str()))
    {
        words.pop();
    }
    let words = words.join(" ");
    let words = words.trim_end_matches([',', ':', ';', ' ']);
    (!words.is_empty()).then(|| words.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn number(limit: i64, exclusive: bool) -> Option<Bound> {
        Some(Bound::Number { limit: limit.into(), exclusive })
    }

    #[test]
    fn the_most_precise_thing_wins() {
        let e = |f: fn(&mut Expectation)| {
            let mut expectation = Expectation::of_types(vec!["string".into()]);
            f(&mut expectation);
            expectation.phrase()
        };
        assert_eq!(e(|_| {}), "a string");
        assert_eq!(e(|x| x.format = Some("email".into())), "a valid email address, like name@example.com");
        assert_eq!(e(|x| x.allowed = vec![json!("open"), json!("paid")]), "one of 'open', 'paid'");
        assert_eq!(e(|x| x.example = Some(json!("abc"))), "a string, like 'abc'");
        assert_eq!(
            e(|x| x.description = Some("The `next_cursor` of the previous page, unchanged.".into())),
            "a string: the `next_cursor` of the previous page, unchanged"
        );
        assert_eq!(e(|x| x.description = Some("ISO code. Two letters.".into())), "a string: ISO code");
        assert_eq!(e(|x| x.description = Some("   \n".into())), "a string");
    }

    #[test]
    fn ranges_read_as_one_phrase() {
        let range = |types: &[&str], at_least, at_most| {
            let types = types.iter().map(|t| t.to_string()).collect();
            Expectation { types, at_least, at_most, ..Expectation::default() }.phrase()
        };
        assert_eq!(range(&["integer"], number(1, false), number(100, false)), "an integer from 1 to 100");
        assert_eq!(range(&["integer"], number(1, false), None), "an integer of at least 1");
        assert_eq!(range(&["number"], number(0, true), number(10, true)), "a number greater than 0 and less than 10");
        assert_eq!(range(&[], None, number(4_294_967_295, false)), "a number of at most 4294967295");
        assert_eq!(
            range(&["string"], Some(Bound::Characters(1)), Some(Bound::Characters(200))),
            "a string of 1 to 200 characters"
        );
        assert_eq!(range(&["string"], None, Some(Bound::Characters(1))), "a string of at most 1 character");
        assert_eq!(range(&["array"], Some(Bound::Items(2)), None), "an array of at least 2 items");
    }

    #[test]
    fn a_few_words_to_choose_by() {
        assert_eq!(
            few_words("Priority of the task from 1 (highest) to 5 (lowest), where 3 is normal.").as_deref(),
            Some("priority of the task from 1 (highest)")
        );
        assert_eq!(few_words("Count from one (the first, the second and so on) up").as_deref(), Some("count from one"));
        assert_eq!(
            few_words("How many invoices per page, 1 to 100 (default 20).").as_deref(),
            Some("how many invoices per page, 1 to 100")
        );
        assert_eq!(
            few_words("The `next_cursor` of the previous page, unchanged; omit it for the first page.").as_deref(),
            Some("the `next_cursor` of the previous page, unchanged")
        );
        assert_eq!(few_words(" . "), None);
    }

    #[test]
    fn long_descriptions_are_cut() {
        let long = format!("The {}", "x".repeat(200));
        let phrase = first_sentence(&long).unwrap();
        assert_eq!(phrase.chars().count(), 100);
        assert!(phrase.starts_with("the xxx") && phrase.ends_with('…'));
        // Words are kept whole.
        let words = format!("The {}", "word ".repeat(40));
        let phrase = first_sentence(&words).unwrap();
        assert!(phrase.ends_with("word…"), "{phrase}");
        assert!(phrase.chars().count() <= 100);
    }

    #[test]
    fn bounds_at_a_types_own_limit_are_not_said() {
        let range = |types: &[&str], low: Option<i128>, high: Option<i128>| {
            let number = |n: i128| {
                let limit = if n > i64::MAX as i128 { (n as u64).into() } else { (n as i64).into() };
                Bound::Number { limit, exclusive: false }
            };
            let types = types.iter().map(|t| t.to_string()).collect();
            Expectation { types, at_least: low.map(number), at_most: high.map(number), ..Expectation::default() }
                .phrase()
        };
        assert_eq!(range(&["integer"], Some(0), Some(u64::MAX as i128)), "a non-negative integer");
        assert_eq!(range(&["integer"], Some(0), Some(255)), "an integer from 0 to 255");
        assert_eq!(range(&["integer"], Some(1), Some(u32::MAX as i128)), "an integer of at least 1");
        assert_eq!(range(&["integer"], Some(i32::MIN as i128), Some(i32::MAX as i128)), "an integer");
        assert_eq!(range(&["integer"], Some(i64::MIN as i128), Some(i64::MAX as i128)), "an integer");
        assert_eq!(range(&["integer"], Some(-9_007_199_254_740_991), Some(9_007_199_254_740_991)), "an integer");
        assert_eq!(range(&["integer"], Some(1), Some(100)), "an integer from 1 to 100");
        assert_eq!(range(&["number"], Some(0), None), "a number of at least 0");
        assert_eq!(range(&[], None, None), "any value");
    }

    #[test]
    fn an_abbreviation_ends_no_sentence() {
        assert_eq!(
            first_sentence("IANA timezone name (e.g. 'Europe/Berlin'). Defaults to UTC.").as_deref(),
            Some("IANA timezone name (e.g. 'Europe/Berlin')")
        );
        assert_eq!(
            first_sentence("The id, i.e. what list returns. More.").as_deref(),
            Some("the id, i.e. what list returns")
        );
        assert_eq!(first_sentence("Ends here. Not here.").as_deref(), Some("ends here"));
    }

    #[test]
    fn allowed_arrays_are_shown() {
        assert_eq!(values_phrase(&[json!([1, 2])]), "exactly [1,2]");
        assert_eq!(values_phrase(&[json!({"a": 1}), json!([])]), r#"one of {"a":1}, []"#);
    }
}
