//! An app: the `ui://` resource holding a view's HTML, and the sandbox it asks the host for.

use rmcp::model::MetaObject;
use serde_json::{Map, Value, json};

use super::{FUSION_APP_JS, FUSION_APP_JS_MARKER};

/// A view a host renders for the actions linked to it: a `ui://` URI, a name, and an HTML
/// page, served through `resources/read` with the extension's MIME type and `_meta.ui`.
#[derive(Debug, Clone)]
pub struct App {
    pub(crate) uri: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    html: String,
    csp: Csp,
    permissions: Vec<Permission>,
    domain: Option<String>,
    prefers_border: Option<bool>,
}

/// The origins a view may reach, from which the host builds its Content Security Policy.
/// Empty, the host allows no origin but its own: the secure default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csp {
    connect: Vec<String>,
    resource: Vec<String>,
    frame: Vec<String>,
    base_uri: Vec<String>,
    wasm_unsafe_eval: bool,
}

/// A browser capability a view asks the host to grant its frame (the frame's `allow`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// The camera.
    Camera,
    /// The microphone.
    Microphone,
    /// The device's location.
    Geolocation,
    /// Writing to the clipboard.
    ClipboardWrite,
}

impl Permission {
    fn key(self) -> &'static str {
        match self {
            Permission::Camera => "camera",
            Permission::Microphone => "microphone",
            Permission::Geolocation => "geolocation",
            Permission::ClipboardWrite => "clipboardWrite",
        }
    }
}

impl Csp {
    /// No origin beyond the host's own.
    pub fn new() -> Csp {
        Csp::default()
    }

    /// An origin the view may fetch from or open a socket to (`connect-src`).
    pub fn connect_domain(mut self, origin: impl Into<String>) -> Csp {
        self.connect.push(origin.into());
        self
    }

    /// An origin of scripts, styles, images, fonts and media (`https://*.example.com` too).
    pub fn resource_domain(mut self, origin: impl Into<String>) -> Csp {
        self.resource.push(origin.into());
        self
    }

    /// An origin the view may embed in a frame of its own (`frame-src`).
    pub fn frame_domain(mut self, origin: impl Into<String>) -> Csp {
        self.frame.push(origin.into());
        self
    }

    /// An origin the page's `<base>` may name (`base-uri`).
    pub fn base_uri_domain(mut self, origin: impl Into<String>) -> Csp {
        self.base_uri.push(origin.into());
        self
    }

    /// Lets the view compile WebAssembly (`'wasm-unsafe-eval'`).
    pub fn wasm_unsafe_eval(mut self) -> Csp {
        self.wasm_unsafe_eval = true;
        self
    }

    fn to_json(&self) -> Option<Value> {
        let mut csp = Map::new();
        for (key, origins) in [
            ("connectDomains", &self.connect),
            ("resourceDomains", &self.resource),
            ("frameDomains", &self.frame),
            ("baseUriDomains", &self.base_uri),
        ] {
            if !origins.is_empty() {
                csp.insert(key.into(), json!(origins));
            }
        }
        if self.wasm_unsafe_eval {
            csp.insert("wasmUnsafeEval".into(), Value::Bool(true));
        }
        (!csp.is_empty()).then_some(Value::Object(csp))
    }

    /// Every origin named, for the build to check.
    pub(crate) fn origins(&self) -> impl Iterator<Item = &str> {
        [&self.connect, &self.resource, &self.frame, &self.base_uri].into_iter().flatten().map(String::as_str)
    }
}

impl App {
    /// An app at `uri` (`ui://billing/invoice-view`), listed as `name`, whose page is `html`:
    /// a whole HTML5 document, with [`FUSION_APP_JS_MARKER`] where the bridge script goes.
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> App {
        App {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            html: html.into(),
            csp: Csp::default(),
            permissions: Vec::new(),
            domain: None,
            prefers_border: None,
        }
    }

    /// A title for people, where hosts show one.
    pub fn title(mut self, title: impl Into<String>) -> App {
        self.title = Some(title.into());
        self
    }

    /// What the view shows, for hosts that list apps.
    pub fn description(mut self, description: impl Into<String>) -> App {
        self.description = Some(description.into());
        self
    }

    /// The origins the view may reach ([`Csp`]).
    pub fn csp(mut self, csp: Csp) -> App {
        self.csp = csp;
        self
    }

    /// A browser capability the view asks for; a view still checks it has it.
    pub fn permission(mut self, permission: Permission) -> App {
        if !self.permissions.contains(&permission) {
            self.permissions.push(permission);
        }
        self
    }

    /// A dedicated origin for the view's sandbox, in the form the host documents.
    pub fn domain(mut self, domain: impl Into<String>) -> App {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the host draws a border and background around the view.
    pub fn prefers_border(mut self, border: bool) -> App {
        self.prefers_border = Some(border);
        self
    }

    /// The page as served: the bridge script in place of the marker.
    pub fn html(&self) -> String {
        self.html.replace(FUSION_APP_JS_MARKER, FUSION_APP_JS)
    }

    /// `_meta` of the resource, listed and read: `{"ui": {csp, permissions, domain, prefersBorder}}`.
    pub fn meta(&self) -> MetaObject {
        let mut ui = Map::new();
        if let Some(csp) = self.csp.to_json() {
            ui.insert("csp".into(), csp);
        }
        if !self.permissions.is_empty() {
            let granted: Map<String, Value> =
                self.permissions.iter().map(|permission| (permission.key().to_owned(), json!({}))).collect();
            ui.insert("permissions".into(), Value::Object(granted));
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), Value::String(domain.clone()));
        }
        if let Some(border) = self.prefers_border {
            ui.insert("prefersBorder".into(), Value::Bool(border));
        }
        let mut meta = MetaObject::new();
        meta.insert("ui".into(), Value::Object(ui));
        meta
    }

    /// Why the app cannot be served, if it cannot.
    pub(crate) fn problem(&self) -> Option<String> {
        let Some(rest) = self.uri.strip_prefix("ui://") else {
            return Some(format!("its URI {:?} does not start with \"ui://\", the scheme MCP Apps reserve", self.uri));
        };
        if rest.is_empty() {
            return Some("its URI \"ui://\" names no view; write it like \"ui://billing/invoice-view\"".into());
        }
        if !self.html.trim_start().get(..15).is_some_and(|head| head.eq_ignore_ascii_case("<!doctype html>")) {
            return Some("its page does not start with <!DOCTYPE html>: hosts render a whole HTML5 document".into());
        }
        self.csp
            .origins()
            .find(|origin| !(origin.starts_with("https://") || origin.starts_with("wss://")) || origin.len() < 9)
            .map(|origin| format!("its CSP names {origin:?}: write an origin as https://host (or wss://host)"))
    }

    /// The name it is listed under.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Its title and description, as listed.
    pub(crate) fn about(&self) -> (Option<&str>, Option<&str>) {
        (self.title.as_deref(), self.description.as_deref())
    }
}
