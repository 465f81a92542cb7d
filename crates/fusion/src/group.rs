//! Groups: a tool made of actions.

use crate::action::Action;
use crate::guard::{Concurrency, RateLimit, Stage};
use crate::middleware::{Layers, Middleware, Placement};

/// A group of actions, exposed as one MCP tool (grouped exposition) or as one tool per
/// action (flat exposition).
pub struct Group<S = ()> {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) title: Option<String>,
    pub(crate) actions: Vec<Action<S>>,
    pub(crate) middleware: Layers,
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
            middleware: Layers::default(),
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

    /// Limits the calls of every action of this group, counted together under the group's name
    /// and the limit's name.
    pub fn rate_limit(mut self, limit: RateLimit) -> Group<S> {
        self.rate_limits.push(limit);
        self
    }

    /// Adds a middleware around every action of the group, after every guard (inside the
    /// server's, outside the action's).
    pub fn middleware(mut self, middleware: impl Middleware) -> Group<S> {
        self.middleware.push(Placement::Inner, middleware);
        self
    }

    /// Adds a middleware of every action of the group just outside a guard stage.
    pub fn middleware_before(mut self, stage: Stage, middleware: impl Middleware) -> Group<S> {
        self.middleware.push(Placement::Before(stage), middleware);
        self
    }

    /// Adds a middleware of every action of the group just inside a guard stage.
    pub fn middleware_after(mut self, stage: Stage, middleware: impl Middleware) -> Group<S> {
        self.middleware.push(Placement::After(stage), middleware);
        self
    }
}
