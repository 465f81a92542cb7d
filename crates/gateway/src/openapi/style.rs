//! Parameter values written as the document's `style` and `explode` say (OpenAPI 3, "Style
//! Values"): `form`, `spaceDelimited`, `pipeDelimited` and `deepObject` in the query, `simple`,
//! `label` and `matrix` in the path, `simple` in a header; each value percent-encoded for
//! where it goes.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;

use super::Location;

/// How a parameter's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `name=a&name=b` (exploded) or `name=a,b`: the query's default.
    Form,
    /// `name=a%20b`.
    SpaceDelimited,
    /// `name=a|b`.
    PipeDelimited,
    /// `name[key]=value`.
    DeepObject,
    /// `a,b`: the path's and a header's default.
    Simple,
    /// `.a.b` or `.a,b`.
    Label,
    /// `;name=a;name=b` or `;name=a,b`.
    Matrix,
}

impl Style {
    /// The style named `text` where `location` takes it.
    pub(crate) fn named(text: &str, location: Location) -> Option<Style> {
        let style = match text {
            "form" => Style::Form,
            "spaceDelimited" => Style::SpaceDelimited,
            "pipeDelimited" => Style::PipeDelimited,
            "deepObject" => Style::DeepObject,
            "simple" => Style::Simple,
            "label" => Style::Label,
            "matrix" => Style::Matrix,
            _ => return None,
        };
        let allowed = match location {
            Location::Query => style.query(),
            Location::Path => matches!(style, Style::Simple | Style::Label | Style::Matrix),
            Location::Header => style == Style::Simple,
        };
        allowed.then_some(style)
    }

    /// What `location` uses when the document says nothing.
    pub(crate) fn default_for(location: Location) -> Style {
        if location == Location::Query { Style::Form } else { Style::Simple }
    }

    /// Whether it is one of the query's styles.
    fn query(self) -> bool {
        matches!(self, Style::Form | Style::SpaceDelimited | Style::PipeDelimited | Style::DeepObject)
    }
}

/// What a value keeps unencoded: the URL's unreserved characters.
pub(crate) const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// With `allowReserved`, RFC 3986's reserved characters too, but `#`, which would end the
/// query, and `&`, which would let a value add a parameter of its own (the mount's key).
const RESERVED_KEPT: &AsciiSet = &UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'[')
    .remove(b']')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=');

/// `text` percent-encoded: all but the unreserved characters, or the reserved ones kept too.
pub(crate) fn encoded(text: &str, allow_reserved: bool) -> String {
    utf8_percent_encode(text, if allow_reserved { RESERVED_KEPT } else { UNRESERVED }).to_string()
}

/// A scalar as text: a string as it is, a number or boolean as JSON writes it, `null` as
/// nothing, and an array or object inside another as its JSON.
pub(crate) fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A query parameter (or a form field): its `name=value` pairs, each encoded.
pub(crate) fn query(name: &str, style: Style, explode: bool, allow_reserved: bool, value: &Value) -> Vec<String> {
    let key = encoded(name, false);
    let enc = |value: &Value| encoded(&text(value), allow_reserved);
    let delimiter = match style {
        Style::SpaceDelimited => "%20",
        Style::PipeDelimited => "|",
        _ => ",",
    };
    match value {
        _ if style == Style::DeepObject => {
            let mut pairs = Vec::new();
            deep(&key, value, allow_reserved, &mut pairs);
            pairs
        }
        Value::Array(items) if explode => items.iter().map(|item| format!("{key}={}", enc(item))).collect(),
        Value::Array(items) => vec![format!("{key}={}", items.iter().map(enc).collect::<Vec<_>>().join(delimiter))],
        Value::Object(fields) if explode => {
            fields.iter().map(|(field, value)| format!("{}={}", encoded(field, false), enc(value))).collect()
        }
        Value::Object(fields) => {
            let parts: Vec<String> =
                fields.iter().flat_map(|(field, value)| [encoded(field, allow_reserved), enc(value)]).collect();
            vec![format!("{key}={}", parts.join(delimiter))]
        }
        scalar => vec![format!("{key}={}", enc(scalar))],
    }
}

/// `key[field]=value` for each field, nested objects and arrays (by index) deeper.
fn deep(key: &str, value: &Value, allow_reserved: bool, pairs: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            for (field, value) in fields {
                deep(&format!("{key}[{}]", encoded(field, false)), value, allow_reserved, pairs);
            }
        }
        Value::Array(items) => {
            for (index, value) in items.iter().enumerate() {
                deep(&format!("{key}[{index}]"), value, allow_reserved, pairs);
            }
        }
        scalar => pairs.push(format!("{key}={}", encoded(&text(scalar), allow_reserved))),
    }
}

/// A path parameter's value, encoded so that it stays within its segment.
pub(crate) fn path(name: &str, style: Style, explode: bool, value: &Value) -> String {
    let enc = |value: &Value| encoded(&text(value), false);
    let name = encoded(name, false);
    // Each style's prefix, and what stands between the items of an exploded value.
    let (prefix, between) = match style {
        Style::Label => (".".to_owned(), "."),
        Style::Matrix => (format!(";{name}="), ";"),
        _ => (String::new(), ","),
    };
    match value {
        Value::Array(items) if style == Style::Matrix && explode => {
            items.iter().map(|item| format!(";{name}={}", enc(item))).collect()
        }
        Value::Array(items) if items.is_empty() && style == Style::Matrix => format!(";{name}"),
        Value::Array(items) => {
            let between = if explode { between } else { "," };
            format!("{prefix}{}", items.iter().map(enc).collect::<Vec<_>>().join(between))
        }
        Value::Object(fields) if explode => {
            let pairs = fields.iter().map(|(field, value)| format!("{}={}", encoded(field, false), enc(value)));
            match style {
                Style::Matrix => pairs.map(|pair| format!(";{pair}")).collect(),
                _ => format!(
                    "{}{}",
                    if style == Style::Label { "." } else { "" },
                    pairs.collect::<Vec<_>>().join(between)
                ),
            }
        }
        Value::Object(fields) => {
            let parts: Vec<String> =
                fields.iter().flat_map(|(field, value)| [encoded(field, false), enc(value)]).collect();
            format!("{prefix}{}", parts.join(","))
        }
        Value::String(text) if text.is_empty() && style == Style::Matrix => format!(";{name}"),
        scalar => format!("{prefix}{}", enc(scalar)),
    }
}

/// A header parameter's value (`simple`): an array's items, an object's fields, by commas.
pub(crate) fn header(explode: bool, value: &Value) -> String {
    match value {
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(","),
        Value::Object(fields) if explode => {
            fields.iter().map(|(field, value)| format!("{field}={}", text(value))).collect::<Vec<_>>().join(",")
        }
        Value::Object(fields) => {
            fields.iter().flat_map(|(field, value)| [field.clone(), text(value)]).collect::<Vec<_>>().join(",")
        }
        scalar => text(scalar),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_specification_s_style_table() {
        let (blue, colors, rgb) =
            (json!("blue"), json!(["blue", "black", "brown"]), json!({"R": 100, "G": 200, "B": 150}));
        let q = |style, explode, value: &Value| query("color", style, explode, false, value).join("&");
        assert_eq!(q(Style::Form, true, &blue), "color=blue");
        assert_eq!(q(Style::Form, true, &colors), "color=blue&color=black&color=brown");
        assert_eq!(q(Style::Form, false, &colors), "color=blue,black,brown");
        assert_eq!(q(Style::Form, true, &rgb), "R=100&G=200&B=150");
        assert_eq!(q(Style::Form, false, &rgb), "color=R,100,G,200,B,150");
        assert_eq!(q(Style::SpaceDelimited, false, &colors), "color=blue%20black%20brown");
        assert_eq!(q(Style::PipeDelimited, false, &colors), "color=blue|black|brown");
        assert_eq!(q(Style::PipeDelimited, false, &rgb), "color=R|100|G|200|B|150");
        assert_eq!(q(Style::DeepObject, true, &rgb), "color[R]=100&color[G]=200&color[B]=150");
        assert_eq!(
            query("filter", Style::DeepObject, true, false, &json!({"status": "open", "tags": ["a b", "c&d"]}))
                .join("&"),
            "filter[status]=open&filter[tags][0]=a%20b&filter[tags][1]=c%26d"
        );
        // Reserved characters stay as written only when the document allows them.
        assert_eq!(q(Style::Form, true, &json!("a/b?c#d")), "color=a%2Fb%3Fc%23d");
        assert_eq!(query("p", Style::Form, true, true, &json!("a/b?c#d&e=f")), ["p=a/b?c%23d%26e=f"]);

        let p = |style, explode, value: &Value| path("color", style, explode, value);
        assert_eq!(p(Style::Simple, false, &blue), "blue");
        assert_eq!(p(Style::Simple, true, &colors), "blue,black,brown");
        assert_eq!(p(Style::Simple, false, &rgb), "R,100,G,200,B,150");
        assert_eq!(p(Style::Simple, true, &rgb), "R=100,G=200,B=150");
        assert_eq!(p(Style::Label, false, &blue), ".blue");
        assert_eq!(p(Style::Label, false, &colors), ".blue,black,brown");
        assert_eq!(p(Style::Label, true, &colors), ".blue.black.brown");
        assert_eq!(p(Style::Label, false, &rgb), ".R,100,G,200,B,150");
        assert_eq!(p(Style::Label, true, &rgb), ".R=100.G=200.B=150");
        assert_eq!(p(Style::Matrix, false, &blue), ";color=blue");
        assert_eq!(p(Style::Matrix, false, &colors), ";color=blue,black,brown");
        assert_eq!(p(Style::Matrix, true, &colors), ";color=blue;color=black;color=brown");
        assert_eq!(p(Style::Matrix, false, &rgb), ";color=R,100,G,200,B,150");
        assert_eq!(p(Style::Matrix, true, &rgb), ";R=100;G=200;B=150");
        assert_eq!(p(Style::Matrix, false, &json!("")), ";color");
        // A value is one segment: its `/` encoded.
        assert_eq!(p(Style::Simple, false, &json!("a/b c")), "a%2Fb%20c");

        assert_eq!(header(false, &colors), "blue,black,brown");
        assert_eq!(header(false, &rgb), "R,100,G,200,B,150");
        assert_eq!(header(true, &rgb), "R=100,G=200,B=150");
    }

    #[test]
    fn each_place_takes_its_own_styles() {
        assert_eq!(Style::named("deepObject", Location::Query), Some(Style::DeepObject));
        assert_eq!(Style::named("matrix", Location::Path), Some(Style::Matrix));
        assert_eq!(Style::named("matrix", Location::Query), None);
        assert_eq!(Style::named("form", Location::Path), None);
        assert_eq!(Style::named("simple", Location::Header), Some(Style::Simple));
        assert_eq!(Style::named("label", Location::Header), None);
        assert_eq!(Style::named("tabDelimited", Location::Query), None);
    }
}
