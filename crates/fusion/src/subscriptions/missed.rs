//! The changes told lately, so a listen hears what changed between its acknowledgment and the
//! moment it is held.
//!
//! rmcp sends `notifications/subscriptions/acknowledged` before it hands the listen request to
//! the server, and the server passes its guards before it holds the listen. A client that
//! changes something as soon as it is acknowledged (a tool call that adds a tool) would
//! otherwise never hear of its own change. The server notes how many changes it had told when
//! it accepted the filter, before the acknowledgment; holding the listen, it sends again what
//! came after, under the same lock that tells the listens already held, so no change falls
//! between the two.

use std::collections::VecDeque;
use std::sync::Arc;

use rmcp::model::SubscriptionFilter;
use rmcp::service::{SubscriptionSendError, SubscriptionSink};

/// A listing that changed, so the `list_changed` notification that tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListChanged {
    /// `tools/list`: `notifications/tools/list_changed`.
    Tools,
    /// `resources/list` or `resources/templates/list`: `notifications/resources/list_changed`.
    Resources,
}

impl ListChanged {
    /// The notification's method.
    pub(crate) fn method(self) -> &'static str {
        match self {
            ListChanged::Tools => "notifications/tools/list_changed",
            ListChanged::Resources => "notifications/resources/list_changed",
        }
    }

    /// Whether a `subscriptions/listen` request was accepted with this notification.
    pub(crate) fn accepted_by(self, filter: &SubscriptionFilter) -> bool {
        let accepted = match self {
            ListChanged::Tools => filter.tools_list_changed,
            ListChanged::Resources => filter.resources_list_changed,
        };
        accepted == Some(true)
    }

    /// Tells one listen.
    pub(crate) async fn tell_listener(self, sink: &SubscriptionSink) -> Result<(), SubscriptionSendError> {
        match self {
            ListChanged::Tools => sink.notify_tool_list_changed().await,
            ListChanged::Resources => sink.notify_resource_list_changed().await,
        }
    }
}

/// A change listens are told of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// A listing changed.
    Listing(ListChanged),
    /// The resource at this URI changed.
    Updated(Arc<str>),
}

impl Change {
    /// Whether a listen accepted with `filter` hears of this change.
    fn accepted_by(&self, filter: &SubscriptionFilter) -> bool {
        match self {
            Change::Listing(which) => which.accepted_by(filter),
            Change::Updated(uri) => {
                filter.resource_subscriptions.as_ref().is_some_and(|uris| uris.iter().any(|known| **known == **uri))
            }
        }
    }

    /// Tells one listen.
    pub(crate) async fn tell_listener(&self, sink: &SubscriptionSink) -> Result<(), SubscriptionSendError> {
        match self {
            Change::Listing(which) => which.tell_listener(sink).await,
            Change::Updated(uri) => sink.notify_resource_updated(uri.to_string()).await,
        }
    }
}

/// How many changes are kept: far more than a listen meets between its acknowledgment and its
/// holding; a listen that missed more hears of everything it accepted.
const KEPT: usize = 64;

/// The last changes told, each with its number.
#[derive(Debug, Default)]
pub(super) struct Recent {
    /// How many changes were told in all: the number of the last one.
    told: u64,
    log: VecDeque<(u64, Change)>,
}

impl Recent {
    /// How many changes were told so far.
    pub(super) fn told(&self) -> u64 {
        self.told
    }

    /// Notes a change being told.
    pub(super) fn record(&mut self, change: Change) {
        self.told += 1;
        if self.log.len() == KEPT {
            self.log.pop_front();
        }
        self.log.push_back((self.told, change));
    }

    /// What a listen accepted with `filter` missed of the changes told after the first `since`:
    /// once each, or every change it accepted when more were told than are kept.
    pub(super) fn since(&self, since: u64, filter: &SubscriptionFilter) -> Vec<Change> {
        if since >= self.told {
            return Vec::new();
        }
        let kept_from = self.log.front().map_or(self.told + 1, |(number, _)| *number);
        if since + 1 < kept_from {
            return everything(filter);
        }
        let mut missed: Vec<Change> = Vec::new();
        for (_, change) in self.log.iter().filter(|(number, _)| *number > since) {
            if change.accepted_by(filter) && !missed.contains(change) {
                missed.push(change.clone());
            }
        }
        missed
    }
}

/// Every change a listen accepted with `filter` can hear of.
fn everything(filter: &SubscriptionFilter) -> Vec<Change> {
    let listings = [ListChanged::Tools, ListChanged::Resources].into_iter().filter(|which| which.accepted_by(filter));
    let uris = filter.resource_subscriptions.iter().flatten().map(|uri| Change::Updated(Arc::from(uri.as_str())));
    listings.map(Change::Listing).chain(uris).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(tools: bool, uris: &[&str]) -> SubscriptionFilter {
        let mut filter = SubscriptionFilter::new();
        filter.tools_list_changed = Some(tools);
        filter.resource_subscriptions = Some(uris.iter().map(|uri| (*uri).to_owned()).collect());
        filter
    }

    fn updated(uri: &str) -> Change {
        Change::Updated(Arc::from(uri))
    }

    #[test]
    fn a_listen_hears_once_each_accepted_change_told_after_its_mark() {
        let mut recent = Recent::default();
        recent.record(Change::Listing(ListChanged::Tools));
        let mark = recent.told();
        recent.record(updated("file:///a"));
        recent.record(Change::Listing(ListChanged::Tools));
        recent.record(Change::Listing(ListChanged::Resources));
        recent.record(updated("file:///b"));
        recent.record(Change::Listing(ListChanged::Tools));
        let missed = recent.since(mark, &filter(true, &["file:///a"]));
        assert_eq!(missed, vec![updated("file:///a"), Change::Listing(ListChanged::Tools)]);
        assert!(recent.since(recent.told(), &filter(true, &["file:///a"])).is_empty());
    }

    #[test]
    fn nothing_told_after_the_mark_is_nothing_missed() {
        let mut recent = Recent::default();
        assert!(recent.since(0, &filter(true, &[])).is_empty());
        recent.record(Change::Listing(ListChanged::Tools));
        assert!(recent.since(1, &filter(true, &[])).is_empty());
        assert!(recent.since(0, &filter(false, &[])).is_empty());
    }

    #[test]
    fn a_listen_that_missed_more_than_is_kept_hears_of_everything_it_accepted() {
        let mut recent = Recent::default();
        for _ in 0..KEPT + 1 {
            recent.record(updated("file:///other"));
        }
        assert_eq!(recent.log.len(), KEPT);
        let missed = recent.since(0, &filter(true, &["file:///a"]));
        assert_eq!(missed, vec![Change::Listing(ListChanged::Tools), updated("file:///a")]);
        // Within what is kept, only what happened.
        assert!(recent.since(1, &filter(true, &["file:///a"])).is_empty());
    }
}
