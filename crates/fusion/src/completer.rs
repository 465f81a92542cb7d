//! Completers: what an author gives to complete an argument of a prompt or a parameter of a
//! resource template, erased once so every kind of entry keeps the same shape.

use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;

/// A completer with the server's state bound: the prefix typed so far → the values.
pub(crate) type Completer = Arc<dyn Fn(String) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

/// A completer as its author gives it, before the state is known.
pub(crate) type StateCompleter<S> = Box<dyn Fn(Arc<S>, String) -> BoxFuture<'static, Vec<String>> + Send + Sync>;

/// Erases an author's completer `async fn(Arc<S>, prefix) -> Vec<String>`.
pub(crate) fn state_completer<S, F, Fut>(completer: F) -> StateCompleter<S>
where
    S: Send + Sync + 'static,
    F: Fn(Arc<S>, String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Vec<String>> + Send + 'static,
{
    Box::new(move |state, prefix| Box::pin(completer(state, prefix)))
}
