//! Prompts: message templates a client fills in and hands to the model. A [`Prompt`] takes
//! typed arguments (a `Deserialize + JsonSchema` struct, checked like an action's input) and
//! returns its messages; the same guards as a call apply.
//!
//! MCP sends prompt arguments as text: a field whose schema asks for a number or a boolean
//! gets one when the text reads as one. Arguments that do not fit answer `-32602` with one
//! "You sent … Expected …" sentence per field. A prompt that fetches live data can set a
//! [`timeout`](Prompt::timeout): past it, the prompt answers with a message telling the
//! model the data could not be fetched and to go on without it, instead of hanging.
//!
//! ```
//! use mcp_fusion::prompt::Prompt;
//! use mcp_fusion::wire::ToolError;
//! use mcp_fusion::{Ctx, FusionServer};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Letter {
//!     /// The invoice id, like `inv_2026_0001`.
//!     id: String,
//! }
//!
//! async fn letter(_ctx: Ctx<()>, args: Letter) -> Result<String, ToolError> {
//!     Ok(format!("Write a friendly reminder about invoice {}.", args.id))
//! }
//!
//! let server = FusionServer::builder("billing", "1.0.0")
//!     .prompt(Prompt::new("reminder", "A payment reminder for one invoice.").handler(letter))
//!     .build(())
//!     .unwrap();
//! assert_eq!(server.prompts()[0].name, "reminder");
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use rmcp::model::{ContentBlock, PromptMessage, Role};

use crate::completer::{StateCompleter, state_completer};
use crate::context::Ctx;
use crate::guard::RateLimit;
use crate::handler::{ErasedHandler, Returns, TypedHandler};
use crate::input::ActionInput;
use crate::middleware::BoxError;
use crate::output::Output;

/// A prompt: a name, a description, typed arguments and a handler
/// `async fn(Ctx<S>, Args) -> Result<T, E>` (`T`: [`IntoMessages`]).
pub struct Prompt<S = ()> {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) icons: Vec<rmcp::model::Icon>,
    pub(crate) description: String,
    pub(crate) timeout: Option<Duration>,
    pub(crate) require_identity: bool,
    pub(crate) scopes: Vec<String>,
    pub(crate) rate_limits: Vec<RateLimit>,
    pub(crate) handler: Option<Arc<dyn ErasedHandler<S>>>,
    pub(crate) completers: Vec<(String, StateCompleter<S>)>,
}

impl<S: Send + Sync + 'static> Prompt<S> {
    /// A prompt named `name` (what `prompts/get` asks for), with a description the user and
    /// the model read.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Prompt<S> {
        Prompt {
            name: name.into(),
            title: None,
            icons: Vec::new(),
            description: description.into(),
            timeout: None,
            require_identity: false,
            scopes: Vec::new(),
            rate_limits: Vec::new(),
            handler: None,
            completers: Vec::new(),
        }
    }

    /// The handler: `async fn(Ctx<S>, Args) -> Result<T, E>`, `Args` a struct with one field
    /// per argument (its doc comments are the arguments' descriptions), `T` anything
    /// [`IntoMessages`], `E` a `ToolError` (kept) or any other error (an `INTERNAL_ERROR`
    /// naming the prompt).
    pub fn handler<F, Fut, A, T, E>(mut self, handler: F) -> Prompt<S>
    where
        F: Fn(Ctx<S>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        A: ActionInput,
        T: IntoMessages,
        E: Into<BoxError> + 'static,
    {
        self.handler = Some(Arc::new(TypedHandler::<F, A, T, E, AsMessages>::new(handler)));
        self
    }

    /// Completes `argument` (`completion/complete`) with `completer`:
    /// `async fn(Arc<S>, prefix) -> Vec<String>`; the values that start with the prefix are
    /// kept. Without one, an argument whose type is an enum completes from its values.
    pub fn complete<F, Fut>(mut self, argument: impl Into<String>, completer: F) -> Prompt<S>
    where
        F: Fn(Arc<S>, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.completers.push((argument.into(), state_completer(completer)));
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Prompt<S> {
        self.title = Some(title.into());
        self
    }

    /// Adds an icon a client may show beside it (MCP 2025-11-25): `src` an `https:` URL or a
    /// `data:` URI (anything else fails the build), with an optional MIME type, sizes and theme.
    pub fn icon(mut self, icon: rmcp::model::Icon) -> Prompt<S> {
        self.icons.push(icon);
        self
    }

    /// How long the handler may take to fetch what it needs. Past it, the prompt answers at
    /// once with one user message saying the live data could not be fetched and to go on
    /// without it (the handler is dropped).
    pub fn timeout(mut self, after: Duration) -> Prompt<S> {
        self.timeout = Some(after);
        self
    }

    /// Refuses anonymous callers with `AUTH_REQUIRED`.
    pub fn requires_identity(mut self) -> Prompt<S> {
        self.require_identity = true;
        self
    }

    /// Requires the caller to hold `scope` (`FORBIDDEN` otherwise); implies an identity.
    pub fn scope(mut self, scope: impl Into<String>) -> Prompt<S> {
        self.scopes.push(scope.into());
        self
    }

    /// Limits how often it is asked for (besides the server's limits), counted under its name
    /// and the limit's name.
    pub fn rate_limit(mut self, limit: RateLimit) -> Prompt<S> {
        self.rate_limits.push(limit);
        self
    }
}

/// What a prompt handler may return on success:
///
/// - `String` / `&'static str`: one user message of that text;
/// - rmcp's [`PromptMessage`], one or a `Vec`, as they are (text, images, audio, embedded
///   resources, either role).
pub trait IntoMessages: Send + 'static {
    /// The messages.
    fn into_messages(self) -> Vec<PromptMessage>;
}

impl IntoMessages for String {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, self)]
    }
}

impl IntoMessages for &'static str {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::new_text(Role::User, self)]
    }
}

impl IntoMessages for PromptMessage {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![self]
    }
}

impl IntoMessages for Vec<PromptMessage> {
    fn into_messages(self) -> Vec<PromptMessage> {
        self
    }
}

/// The message a prompt answers with when its deadline passed.
pub(crate) fn past_deadline(prompt: &str, deadline: Duration) -> PromptMessage {
    PromptMessage::new_text(
        Role::User,
        format!(
            "The live data for the prompt \"{prompt}\" could not be fetched within {} ms. \
             Go on without it: work from what you already know, and say that figures may be out of date.",
            deadline.as_millis()
        ),
    )
}

/// A prompt's handler: its messages, carried to `prompts/get` as they are, through the same
/// chain as a call.
struct AsMessages;

impl<T: IntoMessages> Returns<T> for AsMessages {
    fn into_output(value: T) -> Result<Output, BoxError> {
        Ok(Output::messages(value.into_messages()))
    }

    fn lost_input(_input: &'static str) -> String {
        "a middleware removed the prompt's arguments or replaced them with another type".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Payload;

    #[test]
    fn messages_travel_typed_and_a_lost_input_is_named_a_prompts_arguments() {
        let output = <AsMessages as Returns<&str>>::into_output("hi").unwrap();
        let expected =
            Payload::Messages { description: None, messages: vec![PromptMessage::new_text(Role::User, "hi")] };
        assert_eq!(output.payload(), Some(&expected));
        assert!(output.content.is_empty() && output.structured.is_none());
        assert_eq!(
            <AsMessages as Returns<&str>>::lost_input("A"),
            "a middleware removed the prompt's arguments or replaced them with another type"
        );
    }
}
