//! What a caller is offered: the tools of the actions it may call, a grouped tool listing only
//! those (its discriminator's enum, its description), and the access an addressed action asks
//! for, so a transport can ask for missing scopes before the call runs.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ClientCapabilities, Tool};
use serde_json::{Map, Value};

use super::{Catalog, Route};
use crate::auth::Caller;
use crate::compiled::CompiledGroup;
use crate::guard::RequireCaller;

/// The most offers kept; callers with other scopes past it are listed afresh.
const MAX_OFFERS: usize = 64;

/// The lists made for callers so far, by what decides them.
pub(super) struct Offers {
    /// Every scope some action asks for: a caller's other scopes change nothing it is shown.
    asked: BTreeSet<String>,
    made: Mutex<HashMap<Offer, Arc<[Tool]>>>,
}

/// What decides a caller's list: whether it is identified, and which asked-for scopes it holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Offer {
    identified: bool,
    scopes: Vec<String>,
}

impl Offers {
    /// `None` when no action of `groups` asks anything: every caller is shown every tool.
    pub(super) fn of(groups: &[Arc<CompiledGroup>]) -> Option<Offers> {
        let mut asks = false;
        let mut asked = BTreeSet::new();
        for action in groups.iter().flat_map(|group| &group.actions) {
            asks |= action.access.asks();
            asked.extend(action.access.scopes().iter().cloned());
        }
        asks.then(|| Offers { asked, made: Mutex::default() })
    }

    fn offer(&self, caller: &Caller) -> Offer {
        match caller {
            Caller::Authenticated(identity) => Offer {
                identified: true,
                scopes: self.asked.iter().filter(|scope| identity.has_scope(scope)).cloned().collect(),
            },
            Caller::Anonymous | Caller::Refused(_) => Offer { identified: false, scopes: Vec::new() },
        }
    }
}

impl Catalog {
    /// The tools `tools/list` shows `caller`: each group's actions it may call — a group none
    /// of whose actions it may call is left out, a grouped tool lists only those actions.
    pub(crate) fn tools_for(&self, caller: &Caller) -> Vec<Tool> {
        let Some(offers) = &self.offers else { return self.tools.clone() };
        let offer = offers.offer(caller);
        if let Some(made) = offers.made.lock().unwrap_or_else(PoisonError::into_inner).get(&offer) {
            return made.to_vec();
        }
        let tools: Arc<[Tool]> = self.groups.iter().flat_map(|group| offered(group, caller)).collect();
        let mut made = offers.made.lock().unwrap_or_else(PoisonError::into_inner);
        if made.len() >= MAX_OFFERS {
            made.clear();
        }
        made.insert(offer, Arc::clone(&tools));
        tools.to_vec()
    }

    /// The tools `caller` (`None`: a list made for no one caller) may see from a client with
    /// `client`'s capabilities: what it may call, less the tools only an app may call when the
    /// client renders no apps. `tools/list`, `search_tools` and `get_tool_details` all show
    /// this and nothing else.
    pub(crate) fn seen_by(&self, caller: Option<&Caller>, client: Option<&ClientCapabilities>) -> Vec<Tool> {
        let mut tools = match caller {
            Some(caller) => self.tools_for(caller),
            None => self.tools.clone(),
        };
        tools.retain(|tool| crate::apps::model_sees(tool, client));
        tools
    }

    /// What the action `tool` addresses (with `arguments`, for a grouped tool's discriminator)
    /// asks of its caller; `None` when the call does not address an action (routing then
    /// says why).
    #[cfg_attr(not(feature = "http"), allow(dead_code, reason = "asked by HTTP's step-up check only"))]
    pub(crate) fn access_of(&self, tool: &str, arguments: Option<&Map<String, Value>>) -> Option<&RequireCaller> {
        match *self.routes.get(tool)? {
            Route::Action { group, action, .. } => Some(&self.groups[group].actions[action].access),
            Route::Group { group, .. } => {
                let group = &self.groups[group];
                let action = arguments?.get(group.discriminator.as_deref()?)?.as_str()?;
                Some(&group.action(action)?.access)
            }
        }
    }
}

/// The tools of `group` offered to `caller`.
fn offered(group: &CompiledGroup, caller: &Caller) -> Vec<Tool> {
    let offered = |action: &str| group.action(action).is_some_and(|action| action.access.offered_to(caller));
    match &group.relist {
        Some(relist) if !group.actions.iter().all(|action| action.access.offered_to(caller)) => {
            if group.actions.iter().any(|action| action.access.offered_to(caller)) {
                relist(&offered)
            } else {
                Vec::new()
            }
        }
        _ => group.tools.clone(),
    }
}
