//! XML escaping as the envelope contract defines it, and its exact inverse.
//!
//! Element text escapes only `&` and `<`: `>` and quotes stay readable for the model, which is
//! the only consumer. Attribute values escape all five XML specials. Nothing else is filtered.

/// Escapes element text: `&` → `&amp;`, `<` → `&lt;`; everything else is kept.
///
/// ```
/// assert_eq!(mcp_fusion_wire::escape_text("1 < 2 > 0 & \"q\""), "1 &lt; 2 > 0 &amp; \"q\"");
/// ```
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_text(&mut out, text);
    out
}

/// Escapes an attribute value: `&`, `<`, `>`, `"`, `'` become their entities.
///
/// ```
/// assert_eq!(mcp_fusion_wire::escape_attr("& < > \" '"), "&amp; &lt; &gt; &quot; &apos;");
/// ```
pub fn escape_attr(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_attr(&mut out, text);
    out
}

/// Appends `text` to `out`, escaped as element text.
pub(crate) fn push_text(out: &mut String, text: &str) {
    push_escaped(out, text, |b| match b {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        _ => None,
    });
}

/// Appends `text` to `out`, escaped as an attribute value.
pub(crate) fn push_attr(out: &mut String, text: &str) {
    push_escaped(out, text, |b| match b {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&apos;"),
        _ => None,
    });
}

/// Copies unescaped runs as whole slices; the specials are ASCII, so a byte scan never splits a
/// UTF-8 sequence.
fn push_escaped(out: &mut String, text: &str, entity: impl Fn(u8) -> Option<&'static str>) {
    let mut start = 0;
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if let Some(e) = entity(b) {
            out.push_str(&text[start..i]);
            out.push_str(e);
            start = i + 1;
        }
    }
    out.push_str(&text[start..]);
}

/// Reverses [`escape_text`] and [`escape_attr`]: the five named entities and numeric character
/// references (`&#60;`, `&#x3C;`). Anything that is not a well-formed reference to a valid
/// character is kept verbatim, so unescaping never fails and never loses text.
///
/// ```
/// assert_eq!(mcp_fusion_wire::unescape("&lt;b&gt; &amp;amp; &#60;&#x3e; &bogus;"), "<b> &amp; <> &bogus;");
/// ```
pub fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        match decode_reference(rest) {
            Some((ch, len)) => {
                out.push(ch);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Decodes the reference at the start of `s` (which begins with `&`), returning the character
/// and the length of the reference in bytes.
fn decode_reference(s: &str) -> Option<(char, usize)> {
    // The longest reference we accept is `&#x10FFFF;` or `&#1114111;` (10 bytes); looking no
    // further than that keeps unescaping linear on input full of stray ampersands.
    let window = &s.as_bytes()[..s.len().min(12)];
    let semi = window.iter().position(|&b| b == b';')?;
    let name = &s[1..semi];
    let ch = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => parse_digits(hex, 16)?,
                None => parse_digits(num, 10)?,
            };
            char::from_u32(code).filter(|&c| c != '\0')?
        }
    };
    Some((ch, semi + 1))
}

fn parse_digits(digits: &str, radix: u32) -> Option<u32> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_keeps_quotes_and_gt() {
        assert_eq!(escape_text("a&b<c>d\"e'f"), "a&amp;b&lt;c>d\"e'f");
    }

    #[test]
    fn attr_escapes_all_five() {
        assert_eq!(escape_attr("&&<<>>\"\"''"), "&amp;&amp;&lt;&lt;&gt;&gt;&quot;&quot;&apos;&apos;");
    }

    #[test]
    fn unescape_inverts_both() {
        for s in ["", "plain", "ção 日本 🚀", "& < > \" '", "&amp; &lt; &#60;", "a\n\tb\r\0"] {
            assert_eq!(unescape(&escape_text(s)), s);
            assert_eq!(unescape(&escape_attr(s)), s);
        }
    }

    #[test]
    fn malformed_references_stay_verbatim() {
        for s in [
            "&",
            "&;",
            "&#;",
            "&#x;",
            "&#xZZ;",
            "&#0;",
            "&#xD800;",
            "&#1114112;",
            "&amp",
            "&#99999999999;",
            "&verylongname;",
        ] {
            assert_eq!(unescape(s), s, "{s:?}");
        }
        assert_eq!(unescape("&#128640;&#x1F680;"), "🚀🚀");
    }
}
