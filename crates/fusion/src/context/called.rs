//! Actions as the model calls them: an envelope that names an action (`available_actions`, a
//! recovery) says the name a call can use under the server's tools — `billing.get_invoice`
//! for an action of a grouped tool, the tool's own name for a flat or standalone one
//! (`billing_get_invoice`, `create_task`) — whatever its author wrote.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use mcp_fusion_wire::ToolError;

/// Every local action's name as a call says it, by qualified and by bare name.
#[derive(Debug, Default)]
pub(crate) struct CalledNames {
    /// Qualified name (`billing.get_invoice`, or a standalone `create_task`) → called name.
    by_qualified: HashMap<String, String>,
    /// Bare action name → the qualified names of the actions so named, in catalog order.
    by_bare: HashMap<String, Vec<String>>,
    /// Names already logged as naming no action (each once).
    logged: Mutex<HashSet<String>>,
}

impl CalledNames {
    /// The names of `actions`: (qualified, bare, called) for each.
    pub(crate) fn new<'a>(actions: impl IntoIterator<Item = (&'a str, &'a str, String)>) -> CalledNames {
        let mut names = CalledNames::default();
        for (qualified, bare, called) in actions {
            names.by_qualified.insert(qualified.to_owned(), called);
            names.by_bare.entry(bare.to_owned()).or_default().push(qualified.to_owned());
        }
        names
    }

    /// How a call names the action `name`, said by `from` (a qualified action): `name` is a
    /// qualified name, or a bare one of `from`'s group, or a bare one only one action has.
    /// `None` when no local action is so named.
    pub(crate) fn called(&self, name: &str, from: &str) -> Option<&str> {
        if let Some(called) = self.by_qualified.get(name) {
            return Some(called);
        }
        let qualified = self.by_bare.get(name)?;
        let group = from.split_once('.').map(|(group, _)| group);
        let own = qualified.iter().find(|q| q.split_once('.').map(|(g, _)| g) == group);
        let only = match qualified.as_slice() {
            [only] => Some(only),
            _ => None,
        };
        self.by_qualified.get(own.or(only)?.as_str()).map(String::as_str)
    }

    /// `error` with each action it names said as a call names it; a name no local action has
    /// (a typo, or a tool of another server) stays as written and is logged once.
    /// The recovery says a listed action as the list now does.
    pub(crate) fn rename(&self, mut error: ToolError, from: &str) -> ToolError {
        let mut renamed = Vec::new();
        for name in &mut error.available_actions {
            match self.called(name, from) {
                Some(called) if called != name => renamed.push((std::mem::replace(name, called.to_owned()), called)),
                Some(_) => {}
                None => self.unknown(name, from),
            }
        }
        if let Some(recovery) = error.recovery.as_mut().filter(|_| !renamed.is_empty()) {
            let said = |name: &str| {
                renamed.iter().find(|(written, _)| written == name).map(|(_, called)| (*called).to_owned())
            };
            *recovery = map_whole_names(recovery, said);
        }
        error
    }

    /// Logs, once per name, that `from` named an action the server does not have.
    pub(crate) fn unknown(&self, name: &str, from: &str) {
        let mut logged = self.logged.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // Bounded: past a few hundred distinct names the log has made its point.
        if logged.len() < 256 && logged.insert(name.to_owned()) {
            tracing::warn!(
                action = %from,
                named = %mcp_fusion_wire::echo(name),
                "an envelope names no action of this server (or, bare, one that several groups have): write it qualified (`group.action`), or pass `Ctx::action_name(the_action_fn)`"
            );
        }
    }
}

/// `text` with each whole name in it (a run of letters, digits, `_`, `.` and `-`, less the
/// full stops that end a sentence after it) that `say` gives another for replaced by that one.
pub(crate) fn map_whole_names(text: &str, say: impl Fn(&str) -> Option<String>) -> String {
    let in_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(start) = rest.find(in_name) {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let end = from.find(|c: char| !in_name(c)).unwrap_or(from.len());
        let (name, after) = from.split_at(end);
        let bare = name.trim_end_matches('.');
        match say(bare) {
            Some(said) => {
                out.push_str(&said);
                out.push_str(&name[bare.len()..]);
            }
            None => out.push_str(name),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> CalledNames {
        CalledNames::new([
            ("tasks.list_tasks", "list_tasks", "tasks_list_tasks".to_owned()),
            ("tasks.get", "get", "tasks_get".to_owned()),
            ("notes.get", "get", "notes.get".to_owned()),
            ("create_task", "create_task", "create_task".to_owned()),
        ])
    }

    #[test]
    fn qualified_bare_and_own_group_names_are_said_as_called() {
        let names = names();
        assert_eq!(names.called("tasks.list_tasks", "notes.get"), Some("tasks_list_tasks"));
        assert_eq!(names.called("list_tasks", "create_task"), Some("tasks_list_tasks"));
        assert_eq!(names.called("get", "tasks.list_tasks"), Some("tasks_get"));
        assert_eq!(names.called("get", "notes.get"), Some("notes.get"));
        assert_eq!(names.called("get", "create_task"), None, "two actions are named get");
        assert_eq!(names.called("create_task", "tasks.get"), Some("create_task"));
        assert_eq!(names.called("tasks.nope", "tasks.get"), None);
    }

    #[test]
    fn an_envelope_is_renamed_and_an_unknown_name_kept() {
        let error = ToolError::not_found("No task 3.").actions(["list_tasks", "tasks.lsit_tasks"]);
        let renamed = names().rename(error, "tasks.get");
        assert_eq!(renamed.available_actions, ["tasks_list_tasks", "tasks.lsit_tasks"]);

        let error = ToolError::not_found("No task 3.")
            .suggest("Call tasks.list_tasks (not tasks.list_tasks_old) to see them. Then tasks.list_tasks.")
            .actions(["tasks.list_tasks"]);
        let renamed = names().rename(error, "tasks.get");
        assert_eq!(
            renamed.recovery.as_deref(),
            Some("Call tasks_list_tasks (not tasks.list_tasks_old) to see them. Then tasks_list_tasks.")
        );
    }
}
