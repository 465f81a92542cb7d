//! What a resource handler returns: text, JSON, bytes, or rmcp's contents as they are.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::Json;
use rmcp::model::ResourceContents;
use serde::Serialize;

use crate::error::BoxError;

/// What a resource handler may return on success, like [`IntoOutput`](crate::IntoOutput) for
/// actions:
///
/// - `String` / `&'static str`: text, of the resource's MIME type (`text/plain` when it
///   declares none);
/// - [`Json<T>`](rmcp::Json) (`T: Serialize`): the value as JSON text, `application/json`;
/// - [`Blob`]: bytes, sent base64-encoded, of the resource's MIME type
///   (`application/octet-stream` when it declares none);
/// - rmcp's [`ResourceContents`], one or a `Vec`, as they are (an empty `uri` becomes the URI
///   read).
pub trait IntoContents: Send + 'static {
    /// The contents; an empty `uri` is filled with the URI that was read.
    fn into_contents(self) -> Result<Vec<ResourceContents>, BoxError>;
}

/// Bytes a resource serves as a blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blob(pub Vec<u8>);

impl IntoContents for String {
    fn into_contents(self) -> Result<Vec<ResourceContents>, BoxError> {
        Ok(vec![text(self, None)])
    }
}

impl IntoContents for &'static str {
    fn into_contents(self) -> Result<Vec<ResourceContents>, BoxError> {
        Ok(vec![text(self.to_owned(), None)])
    }
}

impl<T: Serialize + Send + 'static> IntoContents for Json<T> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, BoxError> {
        let json = serde_json::to_string(&self.0)?;
        Ok(vec![text(json, Some("application/json"))])
    }
}

impl IntoContents for Blob {
    fn into_contents(self) -> Result<Vec<ResourceContents>, BoxError> {
        Ok(vec![ResourceContents::BlobResourceContents {
            uri: String::new(),
            mime_type: None,
            blob: STANDARD.encode(&self.0),
            meta: None,
        }])
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self) -> Result<Vec<ResourceContents>, BoxError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, BoxError> {
        Ok(self)
    }
}

fn text(text: String, mime_type: Option<&str>) -> ResourceContents {
    ResourceContents::TextResourceContents {
        uri: String::new(),
        mime_type: mime_type.map(str::to_owned),
        text,
        meta: None,
    }
}

/// Fills what a handler left out: the URI read, and the resource's MIME type (or the default
/// of the kind of contents).
pub(crate) fn complete(contents: &mut [ResourceContents], uri: &str, declared: Option<&str>) {
    for content in contents {
        let (own_uri, mime_type, default) = match content {
            ResourceContents::TextResourceContents { uri, mime_type, .. } => (uri, mime_type, "text/plain"),
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => {
                (uri, mime_type, "application/octet-stream")
            }
            // A kind of contents a later rmcp adds is passed on as the handler made it.
            _ => continue,
        };
        if own_uri.is_empty() {
            uri.clone_into(own_uri);
        }
        if mime_type.is_none() {
            *mime_type = Some(declared.unwrap_or(default).to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_handler_left_out_is_filled() {
        let mut contents = "hi".into_contents().unwrap();
        contents.extend(Blob(vec![1]).into_contents().unwrap());
        contents.extend(Json(serde_json::json!({"a": 1})).into_contents().unwrap());
        complete(&mut contents, "x://1", None);
        let json = serde_json::to_value(&contents).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"uri": "x://1", "mimeType": "text/plain", "text": "hi"},
                {"uri": "x://1", "mimeType": "application/octet-stream", "blob": "AQ=="},
                {"uri": "x://1", "mimeType": "application/json", "text": "{\"a\":1}"},
            ])
        );
        let mut declared = "a,b".into_contents().unwrap();
        complete(&mut declared, "x://2", Some("text/csv"));
        assert_eq!(serde_json::to_value(&declared).unwrap()[0]["mimeType"], "text/csv");
    }
}
