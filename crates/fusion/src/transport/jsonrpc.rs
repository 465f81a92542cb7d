//! JSON-RPC frame inspection on raw bytes: where a message's top-level members are and what
//! its id is, found by a scan that tolerates what the decoder refuses (invalid UTF-8, lone
//! surrogates, numbers out of range, nesting too deep, a message cut short), so that a
//! request the decoder cannot read can still be answered under its own id.

use std::ops::Range;

use crate::server::skills::{self, SkillsServed};

/// JSON-RPC's code for text that is not valid JSON.
pub(crate) const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for valid JSON that is not a valid request.
pub(crate) const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's code for a request whose params the method does not accept.
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// The `id` member of a message, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Id {
    /// No `id` member (a notification), or none before the text breaks off.
    Absent,
    /// `"id": null`.
    Null,
    /// A JSON number: the byte range of its text.
    Number(Range<usize>),
    /// A JSON string: the byte range of its text, quotes included.
    String(Range<usize>),
    /// Anything else: an object, an array, a boolean, text that is not a JSON value.
    Invalid,
}

impl Id {
    /// The byte range of a number or string id, the text to echo in a reply.
    pub(crate) fn echo(&self) -> Option<Range<usize>> {
        match self {
            Id::Number(range) | Id::String(range) => Some(range.clone()),
            _ => None,
        }
    }
}

/// What the top level of one JSON-RPC object says, as far as it can be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head {
    /// The `id` member.
    pub(crate) id: Id,
    /// The byte range of the `method` member's value.
    pub(crate) method: Option<Range<usize>>,
    /// The byte range of the `params` member's value.
    pub(crate) params: Option<Range<usize>>,
    /// Whether there is a `result` or an `error` member.
    result_or_error: bool,
}

impl Head {
    /// A request: a `method` and an `id`, and neither a `result` nor an `error`.
    #[cfg(feature = "http")]
    pub(crate) fn is_request(&self) -> bool {
        self.method.is_some() && self.id != Id::Absent && !self.result_or_error
    }

    /// A response (a `result` or an `error`, no `method`): never answered, whatever is wrong with it.
    pub(crate) fn is_response(&self) -> bool {
        self.result_or_error && self.method.is_none()
    }
}

/// The id of the message in `message`: the first JSON object after any whitespace.
pub(crate) fn request_id(message: &[u8]) -> Id {
    let start = skip_blank(message, 0);
    if message.get(start) == Some(&b'{') { head(&message[start..]).id } else { Id::Absent }
}

/// The head of the object that opens at `object[0]`; ranges are into `object`. Members after
/// a break in the text are not seen.
pub(crate) fn head(object: &[u8]) -> Head {
    let mut head = Head { id: Id::Absent, method: None, params: None, result_or_error: false };
    for (key, value) in Entries::new(object) {
        let Some(key) = key else { break };
        let key = &object[key];
        if key_is(key, "id") && head.id == Id::Absent {
            head.id = classify_id(object, value);
        } else if key_is(key, "method") {
            head.method = Some(value);
        } else if key_is(key, "params") {
            head.params = Some(value);
        } else if key_is(key, "result") || key_is(key, "error") {
            head.result_or_error = true;
        }
    }
    head
}

/// The value of the member `name` of the object that opens at `object[0]`.
pub(crate) fn member(object: &[u8], name: &str) -> Option<Range<usize>> {
    Entries::new(object).find_map(|(key, value)| key.filter(|key| key_is(&object[key.clone()], name)).map(|_| value))
}

/// How many URIs the `subscriptions/listen` request in `object` (whose head is `head`) asks
/// to hear of, in `params.notifications.resourceSubscriptions`: counted by the scan, before
/// any decoder reads them. `None` for any other message, or one without that list.
pub(crate) fn listen_uris(object: &[u8], head: &Head) -> Option<usize> {
    let method = &object[head.method.clone()?];
    if method.first() != Some(&b'"') || !key_is(method, "subscriptions/listen") {
        return None;
    }
    let params = &object[head.params.clone()?];
    let notifications = &params[member(params, "notifications")?];
    let uris = &notifications[member(notifications, "resourceSubscriptions")?];
    (uris.first() == Some(&b'[')).then(|| elements(uris).count())
}

/// The refusal (a `-32602` message) of a skills request in `object` (whose head is `head`)
/// that rmcp would answer amiss, for a server that serves `skills`: a `skills/get` whose `uri`
/// is no `SKILL.md`'s, which rmcp refuses with the whole URI as sent in its message, and a
/// `skills/list` whose `cursor` is there but neither a string nor `null`, which rmcp reads as
/// no cursor and answers with the first page. Only the members it needs are decoded, before
/// rmcp decodes the request; `None` for anything else, params the decoder would not read
/// included (those are the decoder's to refuse).
pub(crate) fn skills_refusal(object: &[u8], head: &Head, served: SkillsServed) -> Option<String> {
    let method = &object[head.method.clone()?];
    if method.first() != Some(&b'"') {
        return None;
    }
    let params = &object[head.params.clone()?];
    let readable = || params.first() == Some(&b'{') && serde_json::from_slice::<serde::de::IgnoredAny>(params).is_ok();
    if key_is(method, "skills/get") && readable() {
        let uri: String = serde_json::from_slice(&params[member(params, "uri")?]).ok()?;
        rmcp::model::skill_name_from_uri(&uri).is_none().then(|| skills::not_a_skill_md(&uri, served))
    } else if key_is(method, "skills/list") && readable() {
        let cursor: serde_json::Value = serde_json::from_slice(&params[member(params, "cursor")?]).ok()?;
        skills::cursor_problem("skills/list", &cursor)
    } else {
        None
    }
}

/// The request `object` (whose head is `head`) under the method it is served under for a
/// session of MCP 2025-11-25's experimental tasks, when it is one of that form's; the rest of
/// its text is kept byte for byte.
pub(crate) fn served_experimental(object: &[u8], head: &Head) -> Option<Vec<u8>> {
    if head.is_response() || head.id == Id::Absent {
        return None;
    }
    let method = head.method.clone()?;
    let asks_task = || {
        let Some(params) = head.params.clone().map(|range| &object[range]) else { return false };
        params.first() == Some(&b'{') && member(params, "task").is_some_and(|task| &params[task] != b"null")
    };
    let served = crate::task::experimental::served_as(&object[method.clone()], asks_task)?;
    let mut renamed = Vec::with_capacity(object.len() + served.len());
    renamed.extend_from_slice(&object[..method.start]);
    renamed.push(b'"');
    renamed.extend_from_slice(served.as_bytes());
    renamed.push(b'"');
    renamed.extend_from_slice(&object[method.end..]);
    Some(renamed)
}

/// The elements of the array that opens at `array[0]`, each a byte range, until the text breaks off.
pub(crate) fn elements(array: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    Entries::new(array).map(|(_, value)| value)
}

/// The complete JSON values one after another in `line`, each a byte range, until one is
/// incomplete or is not a value.
pub(crate) fn values(line: &[u8]) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = skip_blank(line, at);
        let end = value_end(line, start)?;
        at = end;
        Some(start..end)
    })
}

/// Whether `bytes` holds nothing but JSON whitespace.
pub(crate) fn is_blank(bytes: &[u8]) -> bool {
    skip_blank(bytes, 0) == bytes.len()
}

/// Whether the JSON number `text` comes back unchanged through rmcp's `RequestId`: an `i64`
/// written as Rust writes it (not `1.0`, `1e2`, `-0` or beyond 64 bits).
pub(crate) fn is_plain_i64(text: &[u8]) -> bool {
    std::str::from_utf8(text).ok().and_then(|t| t.parse::<i64>().ok()).is_some_and(|n| n.to_string().as_bytes() == text)
}

/// A JSON-RPC error response, without its newline. `id` is the id's JSON text as the client
/// wrote it (echoed byte for byte), or `None` for `null`.
pub(crate) fn error_reply(id: Option<&[u8]>, code: i64, message: &str) -> Vec<u8> {
    let message = serde_json::Value::from(message).to_string();
    let mut reply = Vec::with_capacity(64 + message.len());
    reply.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    reply.extend_from_slice(id.unwrap_or(b"null"));
    reply.extend_from_slice(format!(r#","error":{{"code":{code},"message":{message}}}}}"#).as_bytes());
    reply
}

/// The JSON-RPC error for a message the decoder refused: its code and its sentence.
pub(crate) fn refusal(error: &serde_json::Error) -> (i64, String) {
    if error.to_string().contains("recursion limit exceeded") {
        return (
            INVALID_REQUEST,
            "Invalid request: the message nests deeper than 128 levels; send flatter arguments".into(),
        );
    }
    match error.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            (PARSE_ERROR, format!("Parse error: {error}"))
        }
        _ => (INVALID_REQUEST, format!("Invalid request: {error}")),
    }
}

/// What an id value is; `value` is its range in `object`.
fn classify_id(object: &[u8], value: Range<usize>) -> Id {
    let text = &object[value.clone()];
    match text.first() {
        Some(b'"') if is_json_string(text) => Id::String(value),
        Some(b'-' | b'0'..=b'9') if is_json_number(text) => Id::Number(value),
        _ if text == b"null" => Id::Null,
        _ => Id::Invalid,
    }
}

/// Whether a key's JSON text (quotes included) names `name`, escapes decoded.
fn key_is(key: &[u8], name: &str) -> bool {
    if key.contains(&b'\\') {
        serde_json::from_slice::<String>(key).is_ok_and(|key| key == name)
    } else {
        key.len() == name.len() + 2 && &key[1..key.len() - 1] == name.as_bytes()
    }
}

/// The members of an object (with their keys) or the elements of an array (without), in
/// order, as long as the text reads as one.
struct Entries<'a> {
    bytes: &'a [u8],
    at: usize,
    object: bool,
    done: bool,
}

impl<'a> Entries<'a> {
    fn new(bytes: &'a [u8]) -> Entries<'a> {
        let object = bytes.first() == Some(&b'{');
        let done = !object && bytes.first() != Some(&b'[');
        Entries { bytes, at: 1, object, done }
    }

    fn entry(&mut self) -> Option<(Option<Range<usize>>, Range<usize>)> {
        let bytes = self.bytes;
        let mut at = skip_blank(bytes, self.at);
        let key = if self.object {
            if bytes.get(at) != Some(&b'"') {
                return None;
            }
            let end = string_end(bytes, at)? + 1;
            let key = at..end;
            at = skip_blank(bytes, end);
            if bytes.get(at) != Some(&b':') {
                return None;
            }
            Some(key)
        } else {
            None
        };
        let start = skip_blank(bytes, if key.is_some() { at + 1 } else { at });
        let end = value_end(bytes, start)?;
        // A value that runs to the end of the text may have been cut short.
        let after = skip_blank(bytes, end);
        match bytes.get(after) {
            Some(b',') => self.at = after + 1,
            Some(_) => self.done = true,
            None => return None,
        }
        Some((key, start..end))
    }
}

impl Iterator for Entries<'_> {
    type Item = (Option<Range<usize>>, Range<usize>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let entry = self.entry();
        if entry.is_none() {
            self.done = true;
        }
        entry
    }
}

/// The end (exclusive) of the JSON value that starts at `start`, if it is complete: strings
/// and brackets are matched, not validated, and a scalar runs to the next delimiter.
fn value_end(bytes: &[u8], start: usize) -> Option<usize> {
    match *bytes.get(start)? {
        b'"' => string_end(bytes, start).map(|end| end + 1),
        b'{' | b'[' => {
            // A count, not a stack: a scan that only locates values, kept flat for any depth.
            let mut depth = 0usize;
            let mut i = start;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => i = string_end(bytes, i)?,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        b'}' | b']' | b',' | b':' => None,
        _ => {
            let end = bytes[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b'{' | b'[' | b'"' | b':') || is_space(*b))
                .map_or(bytes.len(), |n| start + n);
            Some(end)
        }
    }
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Whether `text` is a JSON string by the grammar: UTF-8, no control characters, known
/// escapes. A lone surrogate escape is grammatical (and echoed as sent) though no decoder
/// accepts it.
fn is_json_string(text: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(text) else { return false };
    let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) else { return false };
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\u{0}'..='\u{1f}' | '"' => return false,
            '\\' => match chars.next() {
                Some('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') => {}
                Some('u') => {
                    if !(0..4).all(|_| chars.next().is_some_and(|h| h.is_ascii_hexdigit())) {
                        return false;
                    }
                }
                _ => return false,
            },
            _ => {}
        }
    }
    true
}

/// Whether `text` is a JSON number by the grammar (any size).
fn is_json_number(text: &[u8]) -> bool {
    let digits = |at: usize| text[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut at = usize::from(text.first() == Some(&b'-'));
    match digits(at) {
        0 => return false,
        n if n > 1 && text[at] == b'0' => return false,
        n => at += n,
    }
    if text.get(at) == Some(&b'.') {
        match digits(at + 1) {
            0 => return false,
            n => at += 1 + n,
        }
    }
    if matches!(text.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(text.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        match digits(at) {
            0 => return false,
            n => at += n,
        }
    }
    at == text.len()
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// The first index at or after `at` that is not JSON whitespace (`bytes.len()` if none).
fn skip_blank(bytes: &[u8], at: usize) -> usize {
    bytes.get(at..).map_or(bytes.len(), |rest| rest.iter().position(|b| !is_space(*b)).map_or(bytes.len(), |n| at + n))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn id_text(message: &[u8]) -> Option<&[u8]> {
        request_id(message).echo().map(|range| &message[range])
    }

    #[test]
    fn an_experimental_task_request_is_renamed_and_nothing_else_changes() {
        use crate::task::experimental::{CALL, GET};
        let renamed = |text: &str| served_experimental(text.as_bytes(), &head(text.as_bytes())).map(String::from_utf8);
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"billing","task":{"ttl":5}}}"#;
        assert_eq!(renamed(call), Some(Ok(call.replace("tools/call", CALL))));
        let get = r#"{ "method" : "tasks/get", "id":"a", "params":{"taskId":"t"}}"#;
        assert_eq!(renamed(get), Some(Ok(get.replace("tasks/get", GET))));
        for unchanged in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"billing"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"billing","task":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[{"task":{}}]}"#,
            r#"{"jsonrpc":"2.0","method":"tasks/get","params":{"taskId":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"method":"tasks/get"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ] {
            assert_eq!(renamed(unchanged), None, "{unchanged}");
        }
    }

    #[test]
    fn finds_the_top_level_id_only() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","params":{{"id":"inner","a":{}1{}}},"id": 7}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert_eq!(id_text(deep.as_bytes()), Some(&b"7"[..]));
        assert_eq!(id_text(br#"{"id":"a\"b","x":1}"#), Some(&br#""a\"b""#[..]));
        assert_eq!(request_id(br#"{"method":"x"}"#), Id::Absent);
        assert_eq!(request_id(br#"{"id":null}"#), Id::Null);
        assert_eq!(request_id(br#"{"id":true}"#), Id::Invalid);
        assert_eq!(request_id(br#"{"id":[1]}"#), Id::Invalid);
        assert_eq!(request_id(br#"{"id""#), Id::Absent);
        assert_eq!(request_id(b"\"unterminated"), Id::Absent);
        assert_eq!(request_id(br#"[{"id":1}]"#), Id::Absent);
    }

    #[test]
    fn reads_ids_the_decoder_refuses() {
        assert_eq!(id_text(br#"{"id":1e400,"method":"ping"}"#), Some(&b"1e400"[..]));
        assert_eq!(id_text(br#"{"id":18446744073709551616}"#), Some(&b"18446744073709551616"[..]));
        assert_eq!(id_text(b"{\"params\":\"\xff\xfe\",\"id\":3}"), Some(&b"3"[..]));
        assert_eq!(id_text(br#"{"id":"\ud800"}"#), Some(&br#""\ud800""#[..]));
        assert_eq!(id_text(br#"{"\u0069d":5}"#), Some(&b"5"[..]));
        assert_eq!(request_id(b"{\"id\":\"\xff\"}"), Id::Invalid);
        assert_eq!(request_id(br#"{"id":01}"#), Id::Invalid);
        assert_eq!(request_id(br#"{"id":1.}"#), Id::Invalid);
    }

    #[test]
    fn a_cut_message_yields_the_members_before_the_cut() {
        assert_eq!(id_text(br#"{"id":12,"params":{"a":"xxxx"#), Some(&b"12"[..]));
        // The digits may go on past the cut: not an id to echo.
        assert_eq!(request_id(br#"{"method":"x","id":12"#), Id::Absent);
    }

    #[test]
    fn tells_responses_from_requests() {
        assert!(head(br#"{"id":1,"result":{}}"#).is_response());
        assert!(head(br#"{"id":1,"error":{}}"#).is_response());
        assert!(!head(br#"{"id":1,"method":"ping","result":1}"#).is_response());
    }

    #[test]
    fn splits_values_and_elements() {
        let line = br#" {"id":1} {"id":2}x"#;
        let found: Vec<_> = values(line).map(|range| &line[range]).collect();
        assert_eq!(found, [&br#"{"id":1}"#[..], br#"{"id":2}"#, b"x"]);
        let array = br#"[{"id":1}, 2 ,{"id":"#;
        let found: Vec<_> = elements(array).map(|range| &array[range]).collect();
        assert_eq!(found, [&br#"{"id":1}"#[..], b"2"]);
        let object = br#"{"params":{"requestId":9}}"#;
        let params = member(object, "params").unwrap();
        assert_eq!(member(&object[params.clone()], "requestId").map(|r| &object[params.clone()][r]), Some(&b"9"[..]));
    }

    #[test]
    fn counts_the_uris_of_a_listen_request() {
        let count = |text: &str| listen_uris(text.as_bytes(), &head(text.as_bytes()));
        let listen = r#"{"id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["a://1", "a://2" ,"a://\"3\""],"toolsListChanged":true}}}"#;
        assert_eq!(count(listen), Some(3));
        assert_eq!(count(&listen.replace("subscriptions/listen", r"subscriptions\/listen")), Some(3));
        assert_eq!(count(r#"{"id":1,"method":"subscriptions/listen","params":{"notifications":{}}}"#), None);
        assert_eq!(
            count(r#"{"id":1,"method":"resources/read","params":{"notifications":{"resourceSubscriptions":[]}}}"#),
            None
        );
    }

    #[test]
    fn refuses_the_skills_requests_rmcp_would_answer_amiss() {
        let refusal =
            |text: &str| skills_refusal(text.as_bytes(), &head(text.as_bytes()), SkillsServed { value_free: false });
        let get = |uri: &str| refusal(&json!({"id": 1, "method": "skills/get", "params": {"uri": uri}}).to_string());
        assert_eq!(
            get("skill://git-workflow").as_deref(),
            Some(
                "'skill://git-workflow' is not the URI of a SKILL.md: skills/get takes a skill's URI as skills/list \
                 gives it, ending in /SKILL.md, without a query or fragment. Call skills/list for the skills this \
                 server serves."
            )
        );
        // Refused before the server's guards, it names no skill the caller may not see, and on a
        // value-free server not the URI either.
        let value_free = json!({"id": 1, "method": "skills/get", "params": {"uri": "skill://secret-4242"}}).to_string();
        let value_free =
            skills_refusal(value_free.as_bytes(), &head(value_free.as_bytes()), SkillsServed { value_free: true });
        assert!(
            value_free
                .as_deref()
                .is_some_and(|said| said.starts_with("the URI asked is not") && !said.contains("4242"))
        );
        assert!(get("skill://git-workflow/SKILL.md?v=2").is_some());
        let hostile = get(&format!("skill://x\u{202e}\u{1b}{}", "a".repeat(1 << 20))).unwrap();
        assert!(hostile.starts_with(r"'skill://x\u{202e}\u{1b}aaa"), "{hostile}");
        assert!(hostile.len() < 400 && !hostile.contains(['\u{202e}', '\u{1b}']), "{hostile}");
        // A SKILL.md's URI is the handler's to answer, served or not; so is a uri that is no string.
        assert_eq!(get("skill://git-workflow/SKILL.md"), None);
        assert_eq!(get("skill://unknown/SKILL.md"), None);
        assert_eq!(refusal(r#"{"id":1,"method":"skills/get","params":{"uri":5}}"#), None);
        assert!(refusal(r#"{"id":1,"method":"skills\/get","params":{"uri":"x"}}"#).is_some());
        // Params the decoder would refuse are left to it.
        assert_eq!(refusal(r#"{"id":1,"method":"skills/get","params":{"uri":"x","n":01}}"#), None);
        assert_eq!(refusal(r#"{"id":1,"method":"skills/get","params":{"uri":"\ud800"}}"#), None);

        let list =
            |cursor: &str| refusal(&format!(r#"{{"id":1,"method":"skills/list","params":{{"cursor":{cursor}}}}}"#));
        for (cursor, kind) in [("1", "a number"), ("[1]", "an array"), ("{}", "an object"), ("true", "a boolean")] {
            let expected = format!("Invalid params for skills/list: \"cursor\" must be a string, but it is {kind}");
            assert_eq!(list(cursor), Some(expected), "{cursor}");
        }
        assert_eq!(list(r#""100""#), None);
        assert_eq!(list("null"), None);
        assert_eq!(refusal(r#"{"id":1,"method":"skills/list","params":{}}"#), None);
        assert_eq!(refusal(r#"{"id":1,"method":"skills/list"}"#), None);
        assert_eq!(refusal(r#"{"id":1,"method":"resources/list","params":{"cursor":1}}"#), None);
    }

    #[test]
    fn plain_i64_is_what_rmcp_echoes_unchanged() {
        assert!(is_plain_i64(b"7"));
        assert!(is_plain_i64(b"-9223372036854775808"));
        for text in ["9223372036854775808", "18446744073709551616", "1.0", "1e2", "-0"] {
            assert!(!is_plain_i64(text.as_bytes()), "{text}");
        }
    }

    #[test]
    fn error_replies_echo_the_id_text() {
        let reply = error_reply(Some(b"18446744073709551616"), INVALID_REQUEST, "no \"way\"");
        assert_eq!(
            String::from_utf8(reply).unwrap(),
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"error":{"code":-32600,"message":"no \"way\""}}"#
        );
        assert_eq!(
            String::from_utf8(error_reply(None, PARSE_ERROR, "x")).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#
        );
    }
}
