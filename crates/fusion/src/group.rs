//! Groups: a tool made of actions.

use std::sync::Arc;

use crate::action::Action;
use crate::concurrency::Concurrency;
use crate::middleware::Middleware;
use crate::rate_limit::RateLimit;

/// A group of actions, exposed as one MCP tool (grouped exposition) or as one tool per
/// action (flat exposition).
pub struct Group<S = ()> {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) title: Option<String>,
    pub(crate) actions: Vec<Action<S>>,
    pub(crate) middleware: Vec<Arc<dyn Middleware>>,
    pub(crate) concurrency: Option<Concurrency>,
    pub(crate) rate_limits: Vec<RateLimit>,
}

impl<S: Send + Sync + 'static> Group<S> {
    /// A group with a name (`billing`) and a description the model reads.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Group<S> {
        Group {
            name: name.into(),
            description: description.into(),
            title: None,
            actions: Vec::new(),
            middleware: Vec::new(),
            concurrency: None,
            rate_limits: Vec::new(),
        }
    }

    /// Adds an action.
    pub fn action(mut self, action: Action<S>) -> Group<S> {
        self.actions.push(action);
        self
    }

    /// A human-readable title for the tool.
    pub fn title(mut self, title: impl Into<String>) -> Group<S> {
        self.title = Some(title.into());
        self
    }

    /// Limits the calls of this tool running at once, with a line of waiting calls; the rest
    /// are shed with `SERVER_BUSY`.
    pub fn concurrency(mut self, limits: Concurrency) -> Group<S> {
        self.concurrency = Some(limits);
        self
    }

    /// Limits the calls of every action of this group, counted together.
    pub fn rate_limit(mut self, limit: RateLimit) -> Group<S> {
        self.rate_limits.push(limit);
        self
    }

    /// Adds a middleware around every action of the group (inside the server's).
    pub fn middleware(mut self, middleware: impl Middleware) -> Group<S> {
        self.middleware.push(Arc::new(middleware));
        self
    }
}
