//! Reading any envelope text back into a structured value.
//!
//! The parser reads our envelopes and the shapes the TypeScript implementation emits (no
//! `severity` attribute, comma-separated `<available_actions>`, recovery after the actions, a
//! `<contract_awareness>` block after a `<tool_error>`), indented or not. It never fails: text
//! that is not an envelope becomes an `UNKNOWN` error carrying the text (or the text of the
//! `<message>` element in it). It never panics, and its work is linear in the input: every
//! region of the text is scanned a bounded number of times, because element bodies are found
//! by their closing tag and the nesting is fixed.
//!
//! It reads what the reference TypeScript client reads:
//!
//! - Attribute values are unescaped exactly as element text is.
//! - A severity other than `error`, `critical` or `warning` is kept as written
//!   ([`Severity::Custom`]); an empty or absent one is `error`.
//! - When a single-valued element is repeated (`<message>`, `<recovery>`, `<retry_after>`,
//!   `<contract_awareness>`, and inside it `<system_note>`, `<action>`, `<contract_changes>`,
//!   `<description>`, `<before>`, `<after>`), the first one wins, as in the reference
//!   client; so does the first of a repeated attribute. A first `<recovery>` that is empty
//!   still wins, and means no recovery; a first `<retry_after>` that names no whole number
//!   of seconds above zero means no delay. Repeated list elements (`<available_actions>`,
//!   `<details>`, `<field>`) all count, in order.
//! - Text that is not an envelope but holds a `<message>` element reads as `UNKNOWN` with
//!   that element's text.

use crate::code::ErrorCode;
use crate::contract::{ChangeSeverity, ContractAwareness, ContractChange};
use crate::escape::unescape;
use crate::problem::FieldProblem;
use crate::severity::Severity;
use crate::tool_error::ToolError;
use crate::validation::{VALIDATION_RECOVERY, ValidationError};

/// What kind of text an [`Envelope`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EnvelopeKind {
    /// A `<tool_error>` envelope.
    ToolError,
    /// A `<validation_error>` envelope.
    ValidationError,
    /// Text that is not an envelope.
    Text,
}

/// A parsed envelope: the error it states, plus the parts only validation errors have.
///
/// `error` holds code, severity, message, recovery, available actions, details and retry
/// delay for every kind: a validation error reads as `VALIDATION_ERROR` with the message
/// `Invalid arguments for {action}.`, text that is not an envelope as `UNKNOWN`.
///
/// ```
/// use mcp_fusion_wire::{parse, ErrorCode, EnvelopeKind};
///
/// let envelope = parse("<tool_error code=\"UNKNOWN_ACTION\">\n<message>No action \"x\".</message>\n\
///     <available_actions>billing.list, billing.get</available_actions>\n<recovery>Pick one.</recovery>\n</tool_error>");
/// assert_eq!(envelope.kind, EnvelopeKind::ToolError);
/// assert_eq!(envelope.error.code, ErrorCode::UnknownAction);
/// assert_eq!(envelope.error.available_actions, ["billing.list", "billing.get"]);
/// assert_eq!(envelope.error.recovery.as_deref(), Some("Pick one."));
/// assert!(envelope.is_error());
///
/// let text = parse("Something broke");
/// assert_eq!((text.kind, text.error.code.as_str(), text.error.message.as_str()), (EnvelopeKind::Text, "UNKNOWN", "Something broke"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// What the text was.
    pub kind: EnvelopeKind,
    /// The error the text states.
    pub error: ToolError,
    /// The `action` attribute of a validation error.
    pub action: Option<String>,
    /// The field problems of a validation error, in order.
    pub fields: Vec<FieldProblem>,
    /// The contract-awareness block, inside a validation error or following a tool error.
    pub contract_awareness: Option<ContractAwareness>,
}

impl Envelope {
    /// Whether the result is an error (severity not `warning`).
    pub fn is_error(&self) -> bool {
        self.error.is_error()
    }

    /// The validation error this envelope states, if it is one.
    pub fn to_validation_error(&self) -> Option<ValidationError> {
        (self.kind == EnvelopeKind::ValidationError).then(|| ValidationError {
            action: self.action.clone().unwrap_or_default(),
            fields: self.fields.clone(),
            contract_awareness: self.contract_awareness.clone(),
        })
    }
}

impl From<ToolError> for Envelope {
    fn from(error: ToolError) -> Envelope {
        Envelope { kind: EnvelopeKind::ToolError, error, action: None, fields: Vec::new(), contract_awareness: None }
    }
}

impl From<ValidationError> for Envelope {
    fn from(validation: ValidationError) -> Envelope {
        let error = ToolError::new(ErrorCode::ValidationError, validation.message()).suggest(VALIDATION_RECOVERY);
        Envelope {
            kind: EnvelopeKind::ValidationError,
            error,
            action: Some(validation.action),
            fields: validation.fields,
            contract_awareness: validation.contract_awareness,
        }
    }
}

/// Parses envelope text: never fails, never panics, linear in the input.
///
/// The envelope may follow other text (a data block before a warning) as long as its root
/// tag starts a line. Text without one reads as `UNKNOWN`: its message is the text of the
/// first `<message>` element in it, else the whole text (`Unknown error` when blank).
///
/// ```
/// use mcp_fusion_wire::{parse, EnvelopeKind};
///
/// let bare = parse("Upstream said: <message>Quota &amp; limits reached.</message>");
/// assert_eq!(bare.kind, EnvelopeKind::Text);
/// assert_eq!((bare.error.code.as_str(), bare.error.message.as_str()), ("UNKNOWN", "Quota & limits reached."));
/// ```
pub fn parse(text: &str) -> Envelope {
    match find_root(text) {
        Some(start) => parse_root(text, &text[start..]).unwrap_or_else(|| unstructured(text)),
        None => unstructured(text),
    }
}

fn unstructured(text: &str) -> Envelope {
    let message = match bare_message(text) {
        Some(message) => message,
        None if text.trim().is_empty() => "Unknown error".to_owned(),
        None => text.to_owned(),
    };
    Envelope {
        kind: EnvelopeKind::Text,
        error: ToolError::new(ErrorCode::unknown(), message),
        action: None,
        fields: Vec::new(),
        contract_awareness: None,
    }
}

/// The text of the first complete `<message>` element anywhere in `text`, at any depth.
fn bare_message(text: &str) -> Option<String> {
    let mut scanner = Scanner { src: text, pos: 0 };
    loop {
        scanner.pos += find_lt(scanner.rest())?;
        match scanner.open_tag() {
            Some(tag) if tag.name == "message" && !tag.self_closing => {
                // A `</message>` closing a later one would also close this one: if this one is
                // unclosed, so is every later one.
                return split_at_close(scanner.rest(), "message").map(|(body, _)| unescape(body));
            }
            // The cursor is past the tag, on what follows it (maybe the next `<`).
            Some(_) => {}
            None => scanner.pos += 1,
        }
    }
}

const ROOTS: [&str; 2] = ["tool_error", "validation_error"];

/// Byte offset of the first root tag that starts a line (after optional blanks).
fn find_root(text: &str) -> Option<usize> {
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start_matches([' ', '\t', '\r', '\u{feff}']);
        if let Some(rest) = trimmed.strip_prefix('<') {
            let name_len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
            if ROOTS.contains(&&rest[..name_len]) {
                return Some(line_start + (line.len() - trimmed.len()));
            }
        }
        line_start += line.len();
    }
    None
}

fn parse_root(whole: &str, text: &str) -> Option<Envelope> {
    let mut scanner = Scanner { src: text, pos: 0 };
    let root = scanner.open_tag()?;
    let validation = root.name == "validation_error";
    let code = match root.attrs.get("code") {
        _ if validation => ErrorCode::ValidationError,
        Some(code) if !code.is_empty() => ErrorCode::from(code),
        _ => ErrorCode::unknown(),
    };
    let mut error = ToolError::new(code, String::new());
    error.severity = root.attrs.get("severity").filter(|s| !s.is_empty()).map(Severity::from).unwrap_or_default();
    let action = if validation { Some(root.attrs.get("action").unwrap_or_default()) } else { None };

    let mut message = None;
    let mut recovery = None;
    let mut retry_after = None;
    let mut fields = Vec::new();
    let mut awareness = None;
    // Children are read up to the root's closing tag; a cut-off envelope still says what it
    // said so far.
    let mut children = if root.self_closing { Elements::new("") } else { Elements::inside(scanner.rest(), root.name) };
    for element in children.by_ref() {
        match element.name {
            "message" if message.is_none() => message = Some(element.text()),
            "recovery" if recovery.is_none() => recovery = Some(element.text()),
            "retry_after" if retry_after.is_none() => retry_after = Some(element.body),
            "available_actions" => error.available_actions.extend(available_actions(element.body)),
            "details" => {
                for detail in Elements::new(element.body).filter(|e| e.name == "detail") {
                    error.details.push((detail.attr("key").unwrap_or_default(), detail.text()));
                }
            }
            "field" if validation => fields.push(FieldProblem {
                name: element.attr("name").unwrap_or_else(|| "(root)".to_owned()),
                text: element.text(),
            }),
            "contract_awareness" if awareness.is_none() => awareness = Some(contract_awareness(element.body)),
            _ => {}
        }
    }
    error.recovery = recovery.filter(|r| !r.is_empty());
    error.retry_after = retry_after.and_then(leading_seconds);
    if awareness.is_none() {
        // The TypeScript implementation appends the block after the tool error.
        let after = if root.self_closing { scanner.rest() } else { children.rest() };
        awareness = Elements::new(after).find(|e| e.name == "contract_awareness").map(|e| contract_awareness(e.body));
    }

    error.message = match (message, &action) {
        (Some(message), _) => message,
        (None, Some(action)) => format!("Invalid arguments for {action}."),
        (None, None) if whole.trim().is_empty() => "Unknown error".to_owned(),
        (None, None) => whole.to_owned(),
    };
    let kind = if validation { EnvelopeKind::ValidationError } else { EnvelopeKind::ToolError };
    Some(Envelope { kind, error, action, fields, contract_awareness: awareness })
}

/// Splits `text` at the first `</name>`: the body before it and the text after it.
fn split_at_close<'a>(text: &'a str, name: &str) -> Option<(&'a str, &'a str)> {
    let mut from = 0;
    loop {
        let at = from + find_lt(&text[from..])?;
        let after = &text[at + 1..];
        if let Some(rest) = after.strip_prefix('/').and_then(|r| r.strip_prefix(name)).and_then(|r| r.strip_prefix('>'))
        {
            return Some((&text[..at], rest));
        }
        from = at + 1;
    }
}

/// The offset of the next `<`. Tags sit a few dozen bytes apart, where a plain loop beats the
/// set-up cost of a vectorised search.
fn find_lt(text: &str) -> Option<usize> {
    text.bytes().position(|b| b == b'<')
}

/// `<action>` children, or the comma-separated text of the TypeScript routing errors.
fn available_actions(body: &str) -> Vec<String> {
    if body.contains('<') {
        Elements::new(body).filter(|e| e.name == "action").map(|e| e.text()).collect()
    } else {
        unescape(body).split(',').map(str::trim).filter(|a| !a.is_empty()).map(str::to_owned).collect()
    }
}

fn contract_awareness(body: &str) -> ContractAwareness {
    let (mut note, mut action, mut changes) = (None, None, None);
    for element in Elements::new(body) {
        match element.name {
            "system_note" if note.is_none() => note = Some(element.text()),
            "action" if action.is_none() => action = Some(element.text()),
            "contract_changes" if changes.is_none() => {
                changes =
                    Some(Elements::new(element.body).filter(|e| e.name == "change").map(contract_change).collect())
            }
            _ => {}
        }
    }
    ContractAwareness {
        tool: note.map(|note| ContractAwareness::tool_from_note(&note)).unwrap_or_default(),
        action: action.unwrap_or_default(),
        changes: changes.unwrap_or_default(),
    }
}

fn contract_change(element: Element<'_>) -> ContractChange {
    let (mut description, mut before, mut after) = (None, None, None);
    for part in Elements::new(element.body) {
        match part.name {
            "description" if description.is_none() => description = Some(part.text()),
            "before" if before.is_none() => before = Some(part.text()),
            "after" if after.is_none() => after = Some(part.text()),
            _ => {}
        }
    }
    ContractChange {
        // An unrecognised severity still reports a change of unknown weight.
        severity: element.attr("severity").and_then(|s| s.parse().ok()).unwrap_or(ChangeSeverity::Risky),
        field: element.attr("field").unwrap_or_default(),
        description: description.unwrap_or_default(),
        before,
        after,
    }
}

/// `30 seconds` → 30. Zero or no number means no delay.
fn leading_seconds(text: &str) -> Option<u64> {
    let text = text.trim_start();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    text[..digits].parse().ok().filter(|&n| n > 0)
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

struct Scanner<'a> {
    src: &'a str,
    pos: usize,
}

struct Tag<'a> {
    name: &'a str,
    /// The attributes as written (already checked to be well-formed), read on demand so
    /// that reading a tag allocates nothing.
    attrs: Attributes<'a>,
    self_closing: bool,
}

#[derive(Clone, Copy)]
struct Attributes<'a>(&'a str);

impl<'a> Attributes<'a> {
    /// The unescaped value of attribute `name`.
    fn get(self, name: &str) -> Option<String> {
        self.raw(name).map(unescape)
    }

    fn raw(self, name: &str) -> Option<&'a str> {
        let mut scanner = Scanner { src: self.0, pos: 0 };
        loop {
            scanner.skip_blanks();
            let (attr, value) = scanner.attribute()?;
            if attr == name {
                return Some(value);
            }
        }
    }
}

impl<'a> Scanner<'a> {
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn skip_blanks(&mut self) {
        let rest = self.rest();
        self.pos += rest.bytes().position(|b| !b.is_ascii_whitespace()).unwrap_or(rest.len());
    }

    fn take_name(&mut self) -> &'a str {
        let rest = self.rest();
        // Name characters are ASCII (a byte of a multi-byte character never is one), so the
        // name ends on a character boundary.
        let len = rest.bytes().position(|b| !is_name_char(char::from(b))).unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    /// Reads `<name attr="v" ...>` or `.../>` at the cursor; `None` if it is not a tag.
    fn open_tag(&mut self) -> Option<Tag<'a>> {
        let start = self.pos;
        let tag = self.open_tag_inner();
        if tag.is_none() {
            self.pos = start;
        }
        tag
    }

    fn open_tag_inner(&mut self) -> Option<Tag<'a>> {
        self.pos += self.rest().strip_prefix('<').map(|_| 1)?;
        let name = self.take_name();
        if name.is_empty() {
            return None;
        }
        let attrs_start = self.pos;
        loop {
            self.skip_blanks();
            let rest = self.rest();
            let attrs = Attributes(&self.src[attrs_start..self.pos]);
            if rest.starts_with("/>") {
                self.pos += 2;
                return Some(Tag { name, attrs, self_closing: true });
            }
            if rest.starts_with('>') {
                self.pos += 1;
                return Some(Tag { name, attrs, self_closing: false });
            }
            self.attribute()?;
        }
    }

    /// Reads `name="value"` (or single quotes) at the cursor: the name and the raw value.
    fn attribute(&mut self) -> Option<(&'a str, &'a str)> {
        let name = self.take_name();
        if name.is_empty() {
            return None;
        }
        self.skip_blanks();
        self.pos += self.rest().strip_prefix('=').map(|_| 1)?;
        self.skip_blanks();
        let quote = self.rest().bytes().next().filter(|&b| b == b'"' || b == b'\'')?;
        self.pos += 1;
        // Values never hold a raw `<` (it is escaped), so the search stops there: a broken tag
        // costs only the text up to the next tag, which keeps parsing linear.
        let rest = self.rest();
        let len = rest.bytes().position(|b| b == quote || b == b'<').filter(|&i| rest.as_bytes()[i] == quote)?;
        self.pos += len + 1;
        Some((name, &rest[..len]))
    }
}

/// One element of a body: its tag and its raw (still escaped) inner text.
struct Element<'a> {
    name: &'a str,
    attrs: Attributes<'a>,
    body: &'a str,
}

impl Element<'_> {
    fn text(&self) -> String {
        unescape(self.body)
    }

    fn attr(&self, name: &str) -> Option<String> {
        self.attrs.get(name)
    }
}

/// The elements directly inside a body, skipping stray text and stray closing tags.
struct Elements<'a> {
    scanner: Scanner<'a>,
    parent: Option<&'a str>,
    closed: bool,
}

impl<'a> Elements<'a> {
    fn new(body: &'a str) -> Elements<'a> {
        Elements { scanner: Scanner { src: body, pos: 0 }, parent: None, closed: false }
    }

    /// The children of an element whose open tag ends where `text` starts: iteration stops
    /// after the element's `</parent>`, and [`Elements::rest`] is then the text after it.
    fn inside(text: &'a str, parent: &'a str) -> Elements<'a> {
        Elements { scanner: Scanner { src: text, pos: 0 }, parent: Some(parent), closed: false }
    }

    /// The text not yet read.
    fn rest(&self) -> &'a str {
        self.scanner.rest()
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Element<'a>;

    fn next(&mut self) -> Option<Element<'a>> {
        if self.closed {
            return None;
        }
        let s = &mut self.scanner;
        loop {
            s.pos += find_lt(s.rest())?;
            if let Some(closing) = s.rest().strip_prefix("</") {
                let parent_closes = self
                    .parent
                    .and_then(|parent| closing.strip_prefix(parent))
                    .and_then(|after| after.strip_prefix('>'));
                if let Some(after) = parent_closes {
                    s.pos = s.src.len() - after.len();
                    // Nothing after the parent's close belongs to it.
                    self.closed = true;
                    return None;
                }
                s.pos += 2;
                continue;
            }
            let Some(tag) = s.open_tag() else {
                s.pos += 1;
                continue;
            };
            if tag.self_closing {
                return Some(Element { name: tag.name, attrs: tag.attrs, body: "" });
            }
            let rest = s.rest();
            let (body, after) = split_at_close(rest, tag.name)?;
            s.pos += rest.len() - after.len();
            return Some(Element { name: tag.name, attrs: tag.attrs, body });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::FieldProblem;

    #[test]
    fn typescript_routing_error() {
        let text = "<tool_error code=\"UNKNOWN_ACTION\">\n<message>Unknown action &quot;x&quot;</message>\n\
                    <available_actions>list, create , </available_actions>\n\
                    <recovery>Choose one of the available actions.</recovery>\n</tool_error>";
        let env = parse(text);
        assert_eq!(env.kind, EnvelopeKind::ToolError);
        assert_eq!(env.error.severity, Severity::Error);
        assert_eq!(env.error.message, "Unknown action \"x\"");
        assert_eq!(env.error.available_actions, ["list", "create"]);
        assert_eq!(env.error.recovery.as_deref(), Some("Choose one of the available actions."));
    }

    #[test]
    fn indented_envelope_of_the_seed() {
        let text = "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n  <message>No invoice with that ID</message>\n  \
                    <recovery>List invoices first, then retry with a real ID</recovery>\n  <available_actions>\n    \
                    <action>billing.list_invoices</action>\n  </available_actions>\n  <details>\n    \
                    <detail key=\"requestedId\">inv_2026_9999</detail>\n  </details>\n  <retry_after>30 seconds</retry_after>\n</tool_error>";
        let expected = ToolError::not_found("No invoice with that ID")
            .suggest("List invoices first, then retry with a real ID")
            .actions(["billing.list_invoices"])
            .detail("requestedId", "inv_2026_9999")
            .retry_after(30);
        assert_eq!(parse(text), Envelope::from(expected));
    }

    #[test]
    fn code_missing_or_empty_is_unknown() {
        for text in [
            "<tool_error>\n<message>m</message>\n</tool_error>",
            "<tool_error code=\"\"><message>m</message></tool_error>",
        ] {
            let env = parse(text);
            assert_eq!(env.error.code, ErrorCode::unknown());
            assert_eq!(env.error.message, "m");
        }
        let no_message = "<tool_error code=\"X\"></tool_error>";
        assert_eq!(parse(no_message).error.message, no_message);
    }

    #[test]
    fn empty_text_is_unknown_error() {
        for text in ["", "  \n "] {
            let env = parse(text);
            assert_eq!((env.kind, env.error.message.as_str()), (EnvelopeKind::Text, "Unknown error"));
        }
    }

    #[test]
    fn awareness_action_is_not_an_available_action() {
        let text = "<tool_error code=\"VALIDATION_ERROR\">\n<message>bad</message>\n</tool_error>\n<contract_awareness>\n  \
                    <system_note>note</system_note>\n  <action>billing.get_invoice</action>\n  <contract_changes>\n    \
                    <change severity=\"BREAKING\" field=\"f\">\n      <description>d</description>\n    </change>\n  \
                    </contract_changes>\n</contract_awareness>";
        let env = parse(text);
        assert!(env.error.available_actions.is_empty());
        let block = env.contract_awareness.unwrap();
        assert_eq!(block.action, "billing.get_invoice");
        assert_eq!(block.changes.len(), 1);
        assert_eq!(block.changes[0].severity, ChangeSeverity::Breaking);
    }

    #[test]
    fn validation_error_fields() {
        let text = "<validation_error action=\"billing.get_invoice\">\n<field name=\"id\">Bad &amp; wrong.</field>\n\
                    <field>root problem.</field>\n<recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n</validation_error>";
        let env = parse(text);
        assert_eq!(env.error.code, ErrorCode::ValidationError);
        assert_eq!(env.error.message, "Invalid arguments for billing.get_invoice.");
        assert_eq!(
            env.fields,
            [
                FieldProblem { name: "id".into(), text: "Bad & wrong.".into() },
                FieldProblem { name: "(root)".into(), text: "root problem.".into() }
            ]
        );
    }

    #[test]
    fn envelope_after_a_data_block() {
        let text = "{\"id\":\"inv_1\"}\n<tool_error code=\"DEPRECATED\" severity=\"warning\">\n<message>old</message>\n</tool_error>";
        let env = parse(text);
        assert_eq!(env.error.code, ErrorCode::Deprecated);
        assert!(!env.is_error());
    }

    #[test]
    fn broken_roots_fall_back_to_text() {
        for text in [
            "<tool_error",
            "<tool_error code=\"x",
            "<tool_error code=x>",
            "<tool_errorz>",
            "<validation_error a=\"1\" b>",
        ] {
            let env = parse(text);
            assert_eq!(env.kind, EnvelopeKind::Text, "{text}");
            assert_eq!(env.error.message, text);
        }
    }

    #[test]
    fn cut_off_envelope_keeps_what_it_said() {
        let env = parse("<tool_error code=\"NOT_FOUND\">\n<message>gone</message>\n<recovery>unfinish");
        assert_eq!(env.error.code, ErrorCode::NotFound);
        assert_eq!(env.error.message, "gone");
        assert_eq!(env.error.recovery, None);
    }

    fn unknown(message: &str) -> Envelope {
        Envelope {
            kind: EnvelopeKind::Text,
            error: ToolError::new(ErrorCode::unknown(), message),
            action: None,
            fields: Vec::new(),
            contract_awareness: None,
        }
    }

    #[test]
    fn a_bare_message_outside_an_envelope_is_the_message() {
        for (text, message) in [
            ("<message>Quota &amp; limits &lt;reached&gt;</message>", "Quota & limits <reached>"),
            ("Upstream failed:\n<message>gone</message>\nbye", "gone"),
            ("<error><message>nested</message></error>", "nested"),
            ("<message/><message>after the empty tag</message>", "after the empty tag"),
            ("<message>first</message><message>second</message>", "first"),
            ("<message></message>", ""),
            // A root that is not well-formed is no envelope either.
            ("<tool_error code=x>\n<message>m</message>\n</tool_error>", "m"),
        ] {
            assert_eq!(parse(text), unknown(message), "{text:?}");
        }
        // No complete message element: the whole text, as before.
        for text in ["<message>cut off", "<messages>x</messages>", "</message>", "<message x>m</message>"] {
            assert_eq!(parse(text), unknown(text), "{text:?}");
        }
        assert_eq!(parse(" \n"), unknown("Unknown error"));
    }

    #[test]
    fn repeated_single_valued_elements_first_wins() {
        let text = "<tool_error code=\"X\" severity=\"warning\" code=\"Y\" severity=\"error\">\n\
                    <message>first &amp; only</message>\n<message>second</message>\n\
                    <recovery>r1</recovery>\n<recovery>r2</recovery>\n\
                    <retry_after>5 seconds</retry_after>\n<retry_after>9 seconds</retry_after>\n\
                    <available_actions>a, b</available_actions>\n<available_actions>\n  <action>c</action>\n</available_actions>\n\
                    <details>\n  <detail key=\"k\">1</detail>\n</details>\n<details>\n  <detail key=\"k\">2</detail>\n</details>\n\
                    </tool_error>";
        let expected = ToolError::new("X", "first & only")
            .warning()
            .suggest("r1")
            .retry_after(5)
            .actions(["a", "b", "c"])
            .detail("k", 1);
        let mut expected = Envelope::from(expected);
        // Lists accumulate, duplicate detail keys included.
        expected.error.details.push(("k".into(), "2".into()));
        assert_eq!(parse(text), expected);

        // The first one wins even when it says nothing.
        let env = parse(
            "<tool_error code=\"X\"><message>m</message><recovery></recovery><recovery>r2</recovery>\
             <retry_after>soon</retry_after><retry_after>3 seconds</retry_after></tool_error>",
        );
        assert_eq!((env.error.recovery.as_deref(), env.error.retry_after), (None, None));

        let change = |description: &str| {
            format!(
                "<change severity=\"SAFE\" field=\"f\"><description>{description}</description>\
                 <description>later</description><before>b1</before><before>b2</before><after>a1</after><after>a2</after></change>"
            )
        };
        let awareness = |action: &str| {
            format!(
                "<contract_awareness><system_note>IMPORTANT: The behavioral contract for tool \"{action}\" has changed since your last calibration.</system_note>\
                 <system_note>second note</system_note><action>{action}.x</action><action>other</action>\
                 <contract_changes>{}</contract_changes><contract_changes>{}</contract_changes></contract_awareness>",
                change(action),
                change("never read"),
            )
        };
        let text = format!(
            "<validation_error action=\"g.x\">\n<field name=\"a\">one</field>\n<field name=\"a\">two</field>\n{}\n{}\n</validation_error>",
            awareness("g"),
            awareness("h")
        );
        let env = parse(&text);
        assert_eq!(
            env.contract_awareness,
            Some(ContractAwareness {
                tool: "g".into(),
                action: "g.x".into(),
                changes: vec![ContractChange {
                    severity: ChangeSeverity::Safe,
                    field: "f".into(),
                    description: "g".into(),
                    before: Some("b1".into()),
                    after: Some("a1".into()),
                }],
            })
        );
        let fields: Vec<_> = env.fields.iter().map(|f| (f.name.as_str(), f.text.as_str())).collect();
        assert_eq!(fields, [("a", "one"), ("a", "two")]);
    }

    #[test]
    fn an_unknown_severity_is_kept_as_sent() {
        let text = "<tool_error code=\"NOT_FOUND\" severity=\"fatal\">\n<message>m</message>\n</tool_error>";
        let env = parse(text);
        assert_eq!(env, Envelope::from(ToolError::not_found("m").severity(Severity::Custom("fatal".into()))));
        assert!(env.is_error());
        assert_eq!(env.error.render(), text);

        for (written, severity) in [
            ("Warning", Severity::Custom("Warning".into())),
            ("WARNING", Severity::Custom("WARNING".into())),
            (" warning", Severity::Custom(" warning".into())),
            ("", Severity::Error),
            ("critical", Severity::Critical),
        ] {
            let env =
                parse(&format!("<tool_error code=\"X\" severity=\"{written}\"><message>m</message></tool_error>"));
            assert_eq!(env.error.severity, severity, "{written:?}");
            assert!(env.is_error(), "{written:?}");
        }
    }

    #[test]
    fn attribute_values_are_unescaped_like_text() {
        let text = "<tool_error code=\"X&lt;Y\" severity=\"a&amp;b\">\n<message>m</message>\n<details>\n  \
                    <detail key=\"a&quot;b\">v</detail>\n  <detail key='&apos;&#60;&#x3E;'>w</detail>\n</details>\n</tool_error>";
        let expected =
            ToolError::new("X<Y", "m").severity(Severity::Custom("a&b".into())).details([("a\"b", "v"), ("'<>", "w")]);
        assert_eq!(parse(text), Envelope::from(expected.clone()));
        assert_eq!(parse(&expected.render()), Envelope::from(expected));

        let text = "<validation_error action=\"a&amp;b\">\n<field name=\"x&lt;y\">bad.</field>\n</validation_error>\n\
                    <contract_awareness>\n  <action>a&amp;b</action>\n  <contract_changes>\n    \
                    <change severity=\"&#66;REAKING\" field=\"p&amp;q&quot;\">\n      <description>d</description>\n    </change>\n  \
                    </contract_changes>\n</contract_awareness>";
        let env = parse(text);
        assert_eq!(env.action.as_deref(), Some("a&b"));
        assert_eq!(env.error.message, "Invalid arguments for a&b.");
        assert_eq!(env.fields, [FieldProblem { name: "x<y".into(), text: "bad.".into() }]);
        let change = &env.contract_awareness.unwrap().changes[0];
        assert_eq!((change.severity, change.field.as_str()), (ChangeSeverity::Breaking, "p&q\""));
    }

    #[test]
    fn retry_after_reads_leading_number() {
        assert_eq!(leading_seconds("30 seconds"), Some(30));
        assert_eq!(leading_seconds(" 5s"), Some(5));
        assert_eq!(leading_seconds("0 seconds"), None);
        assert_eq!(leading_seconds("soon"), None);
        assert_eq!(leading_seconds("99999999999999999999999 seconds"), None);
    }
}
