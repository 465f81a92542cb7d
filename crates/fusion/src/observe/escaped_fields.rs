//! A field formatter for `tracing_subscriber::fmt` that writes every value as data: no value
//! of any event or span — the framework's, rmcp's, a dependency's — can start a line of its
//! own, move the terminal's cursor, reorder the text around it, or fill the log.

use std::error::Error as StdError;
use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::format::{DefaultVisitor, Writer};

/// The longest value written whole, in characters (escapes counted as written).
pub const MAX_LOG_VALUE_CHARS: usize = 2048;

/// Formats the fields of events and spans as `tracing_subscriber`'s default does
/// (`message name=value …`), with every value escaped and cut.
///
/// Client and upstream text reaches log lines through fields the framework does not write
/// itself: rmcp logs a JSON-RPC id with `%id`, which the default formatter prints raw, so an
/// id holding `\n` and a fake log line forges a line. With this formatter, in every value:
///
/// - control characters (newline, carriage return, tab, ESC, DEL, C1) are written as
///   `\n`, `\r`, `\t` or `\u{1b}`, and so are invisible and bidirectional formatting
///   characters (`\u{202e}`), the same characters [`echo`](mcp_fusion_wire::echo) escapes;
/// - a value longer than [`MAX_LOG_VALUE_CHARS`] (or [`EscapedFields::max_value_chars`]) is cut
///   there and ends with `...`; what follows is never formatted.
///
/// Backslashes and quotes are left as written: a value the default already quotes
/// (`action="billing.pay"`) looks as it did, and an escaped value passes through unchanged.
/// ANSI colours of the field names (`with_ansi(true)`) are the formatter's own and kept.
///
/// ```
/// use tracing_subscriber::layer::SubscriberExt as _;
///
/// let log = tracing_subscriber::fmt::layer()
///     .with_writer(std::io::stderr)
///     .fmt_fields(mcp_fusion::observe::EscapedFields::new());
/// let subscriber = tracing_subscriber::registry().with(log).with(mcp_fusion::logging::layer());
/// # let _ = subscriber;
/// ```
///
/// It formats events and spans in the full and compact formats (the default and
/// `.compact()`); `.pretty()` writes its events' fields itself, and `.json()` too, escaping
/// controls through `serde_json` but cutting nothing.
#[derive(Debug, Clone, Copy)]
pub struct EscapedFields {
    max_value_chars: usize,
}

impl EscapedFields {
    /// Values cut at [`MAX_LOG_VALUE_CHARS`].
    pub const fn new() -> EscapedFields {
        EscapedFields { max_value_chars: MAX_LOG_VALUE_CHARS }
    }

    /// Values cut at `chars` characters instead (at least 1).
    #[must_use]
    pub const fn max_value_chars(self, chars: usize) -> EscapedFields {
        EscapedFields { max_value_chars: if chars == 0 { 1 } else { chars } }
    }
}

impl Default for EscapedFields {
    fn default() -> EscapedFields {
        EscapedFields::new()
    }
}

impl<'a> MakeVisitor<Writer<'a>> for EscapedFields {
    type Visitor = EscapedVisitor<'a>;

    fn make_visitor(&self, target: Writer<'a>) -> EscapedVisitor<'a> {
        EscapedVisitor { inner: DefaultVisitor::new(target, true), max: self.max_value_chars }
    }
}

/// The visitor of [`EscapedFields`]: the default visitor, handed each value escaped.
#[derive(Debug)]
pub struct EscapedVisitor<'a> {
    inner: DefaultVisitor<'a>,
    max: usize,
}

impl Visit for EscapedVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.inner.record_debug(field, &Escaped { value, max: self.max });
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        // As the default writes them: the message bare, any other string quoted.
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"));
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn StdError + 'static)) {
        self.inner.record_error(field, &EscapedError::of(value, self.max));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.inner.record_i64(field, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.inner.record_u64(field, value);
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        self.inner.record_i128(field, value);
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        self.inner.record_u128(field, value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.inner.record_f64(field, value);
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.inner.record_bool(field, value);
    }
}

impl VisitOutput<fmt::Result> for EscapedVisitor<'_> {
    fn finish(self) -> fmt::Result {
        self.inner.finish()
    }
}

impl VisitFmt for EscapedVisitor<'_> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        self.inner.writer()
    }
}

/// A value whose `Debug` text is written escaped and cut.
struct Escaped<'v> {
    value: &'v dyn fmt::Debug,
    max: usize,
}

impl fmt::Debug for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = Escaping { out: f, left: self.max, cut: false };
        match write!(out, "{:?}", self.value) {
            // The cut stops the value's own formatting with an error: that one is ours.
            Err(_) if out.cut => Ok(()),
            written => written,
        }
    }
}

/// An error's text and its sources', escaped and cut, so the default writes its chain as
/// it does (`error=… error.sources=[…]`).
#[derive(Debug)]
struct EscapedError {
    text: String,
    source: Option<Box<EscapedError>>,
}

impl EscapedError {
    fn of(error: &(dyn StdError + 'static), max: usize) -> EscapedError {
        let mut text = String::new();
        let _ = write!(Escaping { out: &mut text, left: max, cut: false }, "{error}");
        EscapedError { text, source: error.source().map(|source| Box::new(EscapedError::of(source, max))) }
    }
}

impl fmt::Display for EscapedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl StdError for EscapedError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.source.as_deref().map(|source| source as &(dyn StdError + 'static))
    }
}

/// Writes text through to `out` with the characters that could act on a terminal or a log
/// reader escaped, until `left` characters are written; then `...` and an error that stops
/// the writing.
struct Escaping<W> {
    out: W,
    left: usize,
    cut: bool,
}

impl<W: fmt::Write> fmt::Write for Escaping<W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        if self.cut {
            return Err(fmt::Error);
        }
        // Most text is printable ASCII: written whole.
        if text.len() <= self.left && text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            self.left -= text.len();
            return self.out.write_str(text);
        }
        let mut escape = String::new();
        for c in text.chars() {
            let written: Option<&str> = match c {
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                c if c.is_control() || mcp_fusion_wire::is_invisible(c) => {
                    escape.clear();
                    let _ = write!(escape, "\\u{{{:x}}}", u32::from(c));
                    Some(&escape)
                }
                _ => None,
            };
            let width = written.map_or(1, str::len);
            if width > self.left {
                self.cut = true;
                self.out.write_str("...")?;
                return Err(fmt::Error);
            }
            self.left -= width;
            match written {
                Some(escaped) => self.out.write_str(escaped)?,
                None => self.out.write_char(c)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::sync::{Arc, Mutex};

    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    /// What the events `emit` logs, formatted with `fields` (the default's when `None`).
    fn logged(fields: Option<EscapedFields>, emit: impl FnOnce()) -> String {
        let out = Arc::new(Mutex::new(Vec::new()));
        let writer = Arc::clone(&out);
        let log = tracing_subscriber::fmt::layer()
            .without_time()
            .with_ansi(false)
            .with_target(false)
            .with_writer(move || Buffer(Arc::clone(&writer)));
        match fields {
            Some(fields) => {
                tracing::subscriber::with_default(tracing_subscriber::registry().with(log.fmt_fields(fields)), emit)
            }
            None => tracing::subscriber::with_default(tracing_subscriber::registry().with(log), emit),
        }
        String::from_utf8(out.lock().unwrap().clone()).unwrap()
    }

    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Buffer {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    const FORGED: &str = "h3\nFORGED-LOG-LINE ERROR\r\u{1b}[2J\u{202e}\u{7}\u{85}";
    const ESCAPED: &str = r"h3\nFORGED-LOG-LINE ERROR\r\u{1b}[2J\u{202e}\u{7}\u{85}";

    #[test]
    fn every_value_is_one_line_with_its_controls_and_bidi_escaped() {
        let log = logged(Some(EscapedFields::new()), || {
            let span = tracing::info_span!("call", id = %FORGED);
            let _entered = span.enter();
            tracing::warn!(id = %FORGED, name = FORGED, "received {FORGED}");
        });
        assert_eq!(log, format!(" WARN call{{id={ESCAPED}}}: received {ESCAPED} id={ESCAPED} name=\"{ESCAPED}\"\n"));
        // The default writes the display value raw: the line this formatter exists for.
        let raw = logged(None, || tracing::warn!(id = %FORGED, "response error"));
        assert!(raw.contains("\nFORGED-LOG-LINE") && raw.contains('\u{1b}'), "{raw:?}");
    }

    #[test]
    fn plain_values_look_as_the_default_writes_them() {
        let emit = || tracing::info!(action = "billing.pay", outcome = %"ok", n = 3, ok = true, "call finished");
        let escaped = logged(Some(EscapedFields::new()), emit);
        assert_eq!(escaped, " INFO call finished action=\"billing.pay\" outcome=ok n=3 ok=true\n");
        assert_eq!(escaped, logged(None, emit));
    }

    #[test]
    fn an_error_and_its_sources_are_escaped() {
        #[derive(Debug)]
        struct Failed(std::io::Error);
        impl fmt::Display for Failed {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("read failed\nFORGED")
            }
        }
        impl StdError for Failed {
            fn source(&self) -> Option<&(dyn StdError + 'static)> {
                Some(&self.0)
            }
        }
        let error = Failed(std::io::Error::other("disk\r\u{1b}[2J"));
        let log = logged(Some(EscapedFields::new()), || tracing::error!(error = &error as &dyn StdError));
        assert_eq!(log, "ERROR error=read failed\\nFORGED error.sources=[disk\\r\\u{1b}[2J]\n");
    }

    #[test]
    fn a_long_value_is_cut_and_the_rest_never_formatted() {
        /// Writes `chunks` pieces of ten characters, counting them.
        struct Long<'a> {
            chunks: usize,
            written: &'a Cell<usize>,
        }
        impl fmt::Display for Long<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                for _ in 0..self.chunks {
                    self.written.set(self.written.get() + 1);
                    f.write_str("abcdefghij")?;
                }
                Ok(())
            }
        }
        let written = Cell::new(0);
        let long = Long { chunks: 1_000_000, written: &written };
        let log = logged(Some(EscapedFields::new().max_value_chars(25)), || tracing::info!(body = %long, after = 1));
        assert_eq!(log, " INFO body=abcdefghijabcdefghijabcde... after=1\n");
        assert_eq!(written.get(), 3, "formatting stops at the cut");
        // Escapes count as written, and are never split.
        let log = logged(Some(EscapedFields::new().max_value_chars(5)), || tracing::info!(body = %"\n\n\n"));
        assert_eq!(log, " INFO body=\\n\\n...\n");
        let whole = "x".repeat(MAX_LOG_VALUE_CHARS);
        let log = logged(Some(EscapedFields::new()), || tracing::info!(body = %format!("{whole}y")));
        assert_eq!(log, format!(" INFO body={whole}...\n"));
    }

    #[test]
    fn it_escapes_what_echo_escapes() {
        // Backslash and quote are echo's own quoting; every other character it escapes, this does.
        let chars =
            (0..=0x3_ffff).chain(0xe_0000..=0xe_0fff).filter_map(char::from_u32).filter(|c| !matches!(c, '\\' | '\''));
        for c in chars {
            let by_echo = mcp_fusion_wire::echo(c.encode_utf8(&mut [0; 4])) != format!("'{c}'");
            let mut here = String::new();
            let _ = write!(Escaping { out: &mut here, left: 100, cut: false }, "{c}");
            assert_eq!(by_echo, here != c.to_string(), "{:x}", u32::from(c));
        }
    }
}
