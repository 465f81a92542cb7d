//! Request bodies sent as the document says: JSON (and any `+json` type, with its own
//! `Content-Type`), form fields (`application/x-www-form-urlencoded`, each field written by its
//! `encoding`), multipart form data (a file's bytes taken as base64 from the model) and plain
//! text or bytes as a string.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;

use super::names::fnv1a;
use super::style::{Style, query, text};

/// How a request body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// The value as JSON.
    Json,
    /// The object's fields, form-encoded.
    Form,
    /// The object's fields, each a part of multipart form data.
    Multipart,
    /// A string, as it is.
    Text,
}

impl BodyKind {
    /// The kind a media type is sent as, and how much it is preferred (lower first): JSON, any
    /// `+json`, form fields, multipart, plain text, bytes; `None` for one the tools cannot send.
    pub(crate) fn of(media: &str) -> Option<(u8, BodyKind)> {
        let essence = media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        Some(match essence.as_str() {
            "application/json" => (0, BodyKind::Json),
            _ if essence.starts_with("application/") && essence.ends_with("+json") => (1, BodyKind::Json),
            "application/x-www-form-urlencoded" => (2, BodyKind::Form),
            "multipart/form-data" => (3, BodyKind::Multipart),
            "text/plain" => (4, BodyKind::Text),
            "application/octet-stream" => (5, BodyKind::Text),
            _ => return None,
        })
    }
}

/// An operation's request body: the input's `body` field.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// Whether the operation requires it.
    pub required: bool,
    /// The media type chosen, as the document writes it: the request's `Content-Type`.
    pub media_type: String,
    /// How it is written.
    pub kind: BodyKind,
    /// How each field of a form or multipart body is written, where the document says.
    pub fields: BTreeMap<String, FieldEncoding>,
}

/// How one field of a form or multipart body is written (the media type's `encoding`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldEncoding {
    /// Its style, if the document names one.
    pub style: Option<Style>,
    /// Whether arrays and objects are exploded, if the document says.
    pub explode: Option<bool>,
    /// Whether reserved characters are sent as they are.
    pub allow_reserved: bool,
    /// A multipart part's `Content-Type`.
    pub content_type: Option<String>,
    /// Whether it is a file: base64 from the model, bytes to the API.
    pub binary: bool,
}

/// Why a call's `body` cannot be sent as its media type says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BodyError {
    /// Form fields or parts are an object's.
    #[error("body must be an object of fields to be sent as {media}, not {found}")]
    NotFields {
        /// The media type.
        media: String,
        /// What the call gave.
        found: &'static str,
    },
    /// A file's bytes come as base64.
    #[error("body.{field} is a file: expected its bytes in base64 (RFC 4648), which it is not")]
    NotBase64 {
        /// The field.
        field: String,
    },
}

/// The body `value` makes: its `Content-Type` and bytes.
pub(crate) fn encode(body: &Body, value: &Value) -> Result<(String, Vec<u8>), BodyError> {
    let fields = || match value {
        Value::Object(fields) => Ok(fields),
        other => {
            Err(BodyError::NotFields { media: body.media_type.clone(), found: mcp_fusion_wire::value_kind(other) })
        }
    };
    match body.kind {
        BodyKind::Json => Ok((body.media_type.clone(), serde_json::to_vec(value).unwrap_or_default())),
        BodyKind::Text => Ok((body.media_type.clone(), text(value).into_bytes())),
        BodyKind::Form => {
            let mut pairs = Vec::new();
            for (field, value) in fields()? {
                if value.is_null() {
                    continue;
                }
                let encoding = body.fields.get(field).cloned().unwrap_or_default();
                // Unsaid, an object is written as `field[key]=value`, as form parsers read nesting.
                let style = encoding.style.unwrap_or(if value.is_object() { Style::DeepObject } else { Style::Form });
                let explode = encoding.explode.unwrap_or(style == Style::Form);
                pairs.extend(query(field, style, explode, encoding.allow_reserved, value));
            }
            Ok(("application/x-www-form-urlencoded".into(), pairs.join("&").into_bytes()))
        }
        BodyKind::Multipart => multipart(body, fields()?),
    }
}

/// Each field a part, a file's as the bytes its base64 says.
fn multipart(body: &Body, fields: &serde_json::Map<String, Value>) -> Result<(String, Vec<u8>), BodyError> {
    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    for (field, value) in fields {
        let encoding = body.fields.get(field).cloned().unwrap_or_default();
        let items: Vec<&Value> = match value {
            Value::Null => continue,
            // A list of files, or of words, is a part each.
            Value::Array(items)
                if encoding.binary || items.iter().all(|item| !item.is_object() && !item.is_array()) =>
            {
                items.iter().collect()
            }
            other => vec![other],
        };
        let name = quoted(field);
        for item in items {
            let (headers, bytes) = if encoding.binary {
                let bytes = base64(&text(item)).ok_or_else(|| BodyError::NotBase64 { field: field.clone() })?;
                let media = encoding.content_type.as_deref().unwrap_or("application/octet-stream");
                (format!("form-data; name=\"{name}\"; filename=\"{name}\"\r\nContent-Type: {media}"), bytes)
            } else if item.is_object() || item.is_array() {
                let media = encoding.content_type.as_deref().unwrap_or("application/json");
                (format!("form-data; name=\"{name}\"\r\nContent-Type: {media}"), item.to_string().into_bytes())
            } else {
                (format!("form-data; name=\"{name}\""), text(item).into_bytes())
            };
            parts.push((headers, bytes));
        }
    }
    // A boundary that no part holds: made from the parts, so the same call makes the same bytes.
    let mut seed: Vec<u8> = parts.iter().flat_map(|(_, bytes)| bytes.iter().copied()).collect();
    let boundary = loop {
        let boundary = format!("fusion-{:016x}", fnv1a(&seed));
        if !parts.iter().any(|(_, bytes)| bytes.windows(boundary.len()).any(|window| window == boundary.as_bytes())) {
            break boundary;
        }
        seed.push(0);
    };
    let mut bytes = Vec::new();
    for (headers, content) in parts {
        bytes.extend_from_slice(format!("--{boundary}\r\nContent-Disposition: {headers}\r\n\r\n").as_bytes());
        bytes.extend_from_slice(&content);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Ok((format!("multipart/form-data; boundary={boundary}"), bytes))
}

/// A field's name in a quoted header parameter: `"`, CR and LF percent-encoded, as browsers do.
fn quoted(name: &str) -> String {
    name.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

/// The bytes of base64 text, padded or not, standard or URL-safe.
fn base64(text: &str) -> Option<Vec<u8>> {
    use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
    let text = text.trim();
    [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD].iter().find_map(|engine| engine.decode(text).ok())
}

/// Whether `schema` is a file's (`format: binary`, or `contentEncoding: base64`), or a list of
/// files'; if so its description says the model sends base64, and the gateway the bytes.
pub(super) fn mark_file(schema: &mut Value) -> bool {
    let Value::Object(object) = schema else { return false };
    if object.get("type").and_then(Value::as_str) == Some("array") {
        return object.get_mut("items").is_some_and(mark_file);
    }
    let file = object.get("format").and_then(Value::as_str) == Some("binary")
        || object.get("contentEncoding").and_then(Value::as_str) == Some("base64");
    if file {
        object.remove("format");
        object.insert("type".into(), Value::String("string".into()));
        object.insert("contentEncoding".into(), Value::String("base64".into()));
        let said = "A file: send its bytes in base64; the gateway decodes them and sends the bytes.";
        let description = match object.get("description").and_then(Value::as_str) {
            Some(description) if !description.trim().is_empty() => format!("{} {said}", description.trim()),
            _ => said.to_owned(),
        };
        object.insert("description".into(), Value::String(description));
    }
    file
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn body(kind: BodyKind, media: &str, fields: &[(&str, FieldEncoding)]) -> Body {
        Body {
            required: true,
            media_type: media.into(),
            kind,
            fields: fields.iter().map(|(name, encoding)| ((*name).to_owned(), encoding.clone())).collect(),
        }
    }

    #[test]
    fn media_types_are_preferred_in_order() {
        assert_eq!(BodyKind::of("application/json; charset=utf-8"), Some((0, BodyKind::Json)));
        assert_eq!(BodyKind::of("application/vnd.api+json"), Some((1, BodyKind::Json)));
        assert_eq!(BodyKind::of("application/merge-patch+json"), Some((1, BodyKind::Json)));
        assert_eq!(BodyKind::of("application/x-www-form-urlencoded"), Some((2, BodyKind::Form)));
        assert_eq!(BodyKind::of("multipart/form-data"), Some((3, BodyKind::Multipart)));
        assert_eq!(BodyKind::of("text/plain"), Some((4, BodyKind::Text)));
        assert_eq!(BodyKind::of("application/octet-stream"), Some((5, BodyKind::Text)));
        assert_eq!(BodyKind::of("text/csv"), None);
        assert_eq!(BodyKind::of("*/*"), None);
    }

    #[test]
    fn a_json_api_body_keeps_its_media_type() {
        let sent = encode(&body(BodyKind::Json, "application/vnd.api+json", &[]), &json!({"data": {"type": "x"}}));
        assert_eq!(sent, Ok(("application/vnd.api+json".into(), br#"{"data":{"type":"x"}}"#.to_vec())));
    }

    #[test]
    fn form_fields_as_stripe_reads_them() {
        let deep = FieldEncoding { style: Some(Style::DeepObject), explode: Some(true), ..FieldEncoding::default() };
        let form = body(BodyKind::Form, "application/x-www-form-urlencoded", &[("expand", deep)]);
        let value = json!({
            "amount": 2000, "currency": "usd", "description": "a & b = c",
            "metadata": {"order_id": "6735"},
            "expand": ["customer", "invoice"],
            "payment_method_types": ["card", "sepa debit"],
            "items": [{"price": "p_1", "quantity": 2}],
            "skipped": null,
        });
        let (media, bytes) = encode(&form, &value).unwrap();
        assert_eq!(media, "application/x-www-form-urlencoded");
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            "amount=2000&currency=usd&description=a%20%26%20b%20%3D%20c&metadata[order_id]=6735\
             &expand[0]=customer&expand[1]=invoice&payment_method_types=card&payment_method_types=sepa%20debit\
             &items=%7B%22price%22%3A%22p_1%22%2C%22quantity%22%3A2%7D"
        );
        let unexploded = FieldEncoding { explode: Some(false), ..FieldEncoding::default() };
        let form = body(BodyKind::Form, "application/x-www-form-urlencoded", &[("ids", unexploded)]);
        assert_eq!(encode(&form, &json!({"ids": [1, 2]})).unwrap().1, b"ids=1,2");
        assert_eq!(
            encode(&form, &json!(["x"])).unwrap_err().to_string(),
            "body must be an object of fields to be sent as application/x-www-form-urlencoded, not an array"
        );
    }

    #[test]
    fn multipart_parts_and_a_file_from_base64() {
        let file = FieldEncoding { binary: true, content_type: Some("image/png".into()), ..FieldEncoding::default() };
        let upload = body(BodyKind::Multipart, "multipart/form-data", &[("image", file)]);
        let (media, bytes) =
            encode(&upload, &json!({"name": "cover \"1\"", "image": "iVBORw==", "meta": {"w": 1}, "tags": ["a", "b"]}))
                .unwrap();
        let boundary = media.strip_prefix("multipart/form-data; boundary=").unwrap();
        let expected = format!(
            "--{b}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\ncover \"1\"\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image\"\r\nContent-Type: image/png\r\n\r\n\u{89}PNG\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n{{\"w\":1}}\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\na\r\n\
             --{b}\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\nb\r\n\
             --{b}--\r\n",
            b = boundary
        );
        // The PNG signature's first byte is 0x89, not UTF-8: compared as bytes.
        let expected: Vec<u8> = expected.chars().map(|c| u32::from(c) as u8).collect();
        assert_eq!(bytes, expected);
        assert_eq!(
            encode(&upload, &json!({"image": "not base64!"})).unwrap_err().to_string(),
            "body.image is a file: expected its bytes in base64 (RFC 4648), which it is not"
        );
    }
}
