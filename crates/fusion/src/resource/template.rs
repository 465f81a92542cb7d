//! URI templates of level 1 (RFC 6570): literal text and `{name}` parameters, each matching
//! one non-empty run of characters up to the next literal, never across a `/`, `?` or `#`.

use serde_json::{Map, Value};

/// A parsed template such as `billing://invoices/{id}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UriTemplate {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Parameter(String),
}

/// Why a template cannot be served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TemplateError {
    /// A `{` without its `}`, or a `}` without its `{`.
    Unbalanced,
    /// `{}`, or a name outside `A-Z a-z 0-9 _`: operators (`{+path}`, `{?q}`) are level 2 and up.
    BadName(String),
    /// Two parameters with nothing between them cannot be told apart.
    Adjacent(String, String),
    /// The same name twice.
    Repeated(String),
    /// No parameter at all: that is a fixed URI.
    NoParameter,
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateError::Unbalanced => f.write_str("a brace is not closed or not opened"),
            TemplateError::BadName(name) => write!(
                f,
                "the parameter {{{name}}} is not a plain name (A-Z a-z 0-9 _); only level-1 templates are served"
            ),
            TemplateError::Adjacent(a, b) => {
                write!(f, "the parameters {{{a}}} and {{{b}}} follow each other with no text to separate them")
            }
            TemplateError::Repeated(name) => write!(f, "the parameter {{{name}}} appears twice"),
            TemplateError::NoParameter => f.write_str("it has no {parameter}: declare it as a fixed resource"),
        }
    }
}

impl UriTemplate {
    /// Parses `template`.
    pub(crate) fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find(['{', '}']) {
                Some(at) if rest.as_bytes()[at] == b'}' => return Err(TemplateError::Unbalanced),
                Some(open) => {
                    if open > 0 {
                        parts.push(Part::Literal(rest[..open].to_owned()));
                    }
                    let close = rest[open..].find('}').ok_or(TemplateError::Unbalanced)? + open;
                    let name = &rest[open + 1..close];
                    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                        return Err(TemplateError::BadName(name.to_owned()));
                    }
                    if let Some(Part::Parameter(before)) = parts.last() {
                        return Err(TemplateError::Adjacent(before.clone(), name.to_owned()));
                    }
                    if parts.iter().any(|part| matches!(part, Part::Parameter(known) if known == name)) {
                        return Err(TemplateError::Repeated(name.to_owned()));
                    }
                    parts.push(Part::Parameter(name.to_owned()));
                    rest = &rest[close + 1..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        if !parts.iter().any(|part| matches!(part, Part::Parameter(_))) {
            return Err(TemplateError::NoParameter);
        }
        Ok(UriTemplate { parts })
    }

    /// The parameters' names, in order.
    pub(crate) fn parameters(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|part| match part {
            Part::Parameter(name) => Some(name.as_str()),
            Part::Literal(_) => None,
        })
    }

    /// The parameters of `uri`, percent-decoded, when it is an expansion of this template.
    pub(crate) fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut found = Map::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Parameter(name) => {
                    // Up to the next literal's first occurrence, or a separator, or the end.
                    let stop = rest.find(['/', '?', '#']).unwrap_or(rest.len());
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest[..].find(next.as_str()).filter(|&at| at <= stop)?,
                        _ => stop,
                    };
                    if end == 0 {
                        return None;
                    }
                    found.insert(name.clone(), Value::String(percent_decode(&rest[..end])?));
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(found)
    }

    /// The template with the literal segments of `uri` close to its own: `billing://invoice/7`
    /// against `billing://invoices/{id}` gives `billing://invoices/7`. Segments are split at
    /// `/`; each of the template's segments that holds a parameter takes the sent one whole.
    pub(crate) fn nearest_expansion(&self, uri: &str, close: impl Fn(&str, &str) -> bool) -> Option<String> {
        let template = self.to_string();
        let sent: Vec<&str> = uri.split('/').collect();
        let own: Vec<&str> = template.split('/').collect();
        if sent.len() != own.len() {
            return None;
        }
        let mut filled = Vec::with_capacity(own.len());
        for (own, sent) in own.iter().zip(&sent) {
            if own.contains('{') {
                if sent.is_empty() {
                    return None;
                }
                filled.push(*sent);
            } else if own == sent || close(sent, own) {
                filled.push(*own);
            } else {
                return None;
            }
        }
        let filled = filled.join("/");
        (filled != uri).then_some(filled)
    }
}

impl std::fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for part in &self.parts {
            match part {
                Part::Literal(literal) => f.write_str(literal)?,
                Part::Parameter(name) => write!(f, "{{{name}}}")?,
            }
        }
        Ok(())
    }
}

/// `%XX` sequences decoded; `None` when one is malformed or the result is not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn matched(template: &str, uri: &str) -> Option<Value> {
        UriTemplate::parse(template).unwrap().matches(uri).map(Value::Object)
    }

    #[test]
    fn a_parameter_takes_one_segment() {
        assert_eq!(matched("billing://invoices/{id}", "billing://invoices/inv_7"), Some(json!({"id": "inv_7"})));
        assert_eq!(matched("billing://invoices/{id}", "billing://invoices/inv_7/lines"), None);
        assert_eq!(matched("billing://invoices/{id}", "billing://invoices/"), None);
        assert_eq!(matched("billing://invoices/{id}", "billing://invoice/inv_7"), None);
        assert_eq!(
            matched("files://{dir}/{name}.txt", "files://a/b%20c.txt"),
            Some(json!({"dir": "a", "name": "b c"}))
        );
        assert_eq!(matched("files://{dir}/{name}.txt", "files://a/b.md"), None);
        assert_eq!(matched("x://{a}", "x://%zz"), None, "a malformed escape matches nothing");
        assert_eq!(matched("x://{a}", "x://%ff"), None, "nor does an escape that is not UTF-8");
    }

    #[test]
    fn templates_that_cannot_be_served_say_why() {
        assert_eq!(UriTemplate::parse("x://{a"), Err(TemplateError::Unbalanced));
        assert_eq!(UriTemplate::parse("x://a}"), Err(TemplateError::Unbalanced));
        assert_eq!(UriTemplate::parse("x://{+path}"), Err(TemplateError::BadName("+path".into())));
        assert_eq!(UriTemplate::parse("x://{}"), Err(TemplateError::BadName(String::new())));
        assert_eq!(UriTemplate::parse("x://{a}{b}"), Err(TemplateError::Adjacent("a".into(), "b".into())));
        assert_eq!(UriTemplate::parse("x://{a}/{a}"), Err(TemplateError::Repeated("a".into())));
        assert_eq!(UriTemplate::parse("x://fixed"), Err(TemplateError::NoParameter));
        let template = UriTemplate::parse("x://{a}/y/{b}").unwrap();
        assert_eq!(template.parameters().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(template.to_string(), "x://{a}/y/{b}");
    }

    #[test]
    fn the_nearest_expansion_keeps_the_sent_values() {
        let template = UriTemplate::parse("billing://invoices/{id}").unwrap();
        let close = |a: &str, b: &str| strsim::jaro(a, b) > 0.8;
        assert_eq!(
            template.nearest_expansion("billing://invoice/inv_7", close).as_deref(),
            Some("billing://invoices/inv_7")
        );
        assert_eq!(template.nearest_expansion("billing://customers/c_1", close), None);
        assert_eq!(template.nearest_expansion("billing://invoices/a/b", close), None);
    }
}
