//! The link from a tool to its app: `_meta.ui` of the tool, and who may call it.

use rmcp::model::{ClientCapabilities, Tool};
use serde_json::{Map, Value, json};

use super::{APP_MIME_TYPE, UI_EXTENSION};

/// Who may call a tool linked to an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// The model sees and calls it.
    Model,
    /// The app calls it, from this server's connection only.
    App,
}

/// An action's or a group's app, and who calls its tool (both when unsaid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AppLink {
    pub uri: String,
    pub visibility: Option<Vec<Visibility>>,
}

/// The tool's `_meta.ui`.
pub(crate) fn ui_meta(link: &AppLink) -> Value {
    let mut ui = Map::new();
    ui.insert("resourceUri".into(), Value::String(link.uri.clone()));
    if let Some(visibility) = &link.visibility {
        let names: Vec<&str> = visibility
            .iter()
            .map(|who| match who {
                Visibility::Model => "model",
                Visibility::App => "app",
            })
            .collect();
        ui.insert("visibility".into(), json!(names));
    }
    Value::Object(ui)
}

/// Whether a client lists `tool` for its model: a tool only an app calls is listed only to a
/// client that renders apps, since one that does not would hand it to its model.
pub(crate) fn model_sees(tool: &Tool, client: Option<&ClientCapabilities>) -> bool {
    let visibility = tool.meta.as_ref().and_then(|meta| meta.get("ui")).and_then(|ui| ui.get("visibility"));
    let Some(Value::Array(visibility)) = visibility else { return true };
    if visibility.iter().any(|who| who == "model") {
        return true;
    }
    client
        .and_then(|client| client.extensions.as_ref())
        .and_then(|extensions| extensions.get(UI_EXTENSION))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|mime| mime == APP_MIME_TYPE))
}
