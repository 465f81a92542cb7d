//! Envelopes within a budget: hosts cut what a tool returns (around 10,000 characters, less in
//! some), and programmatic callers may keep only a head. An envelope over its budget keeps its
//! message and recovery, which come first, and cuts what is long after them — the actions it
//! names, its details, its field lines — saying how many were left out and where to see them.

use crate::{FieldProblem, ToolError, ValidationError};

/// The budget of an envelope unless a server sets its own, in characters: under what the
/// hosts known to cut results keep.
pub const DEFAULT_ENVELOPE_BUDGET: usize = 8_000;

/// The least budget honoured: a smaller one could not hold a message and its recovery.
pub const MIN_ENVELOPE_BUDGET: usize = 1_000;

/// The longest a detail's value stays in an envelope over its budget.
const DETAIL_CHARS: usize = 300;

/// The longest a field line's sentence stays in a validation error over its budget.
const FIELD_CHARS: usize = 600;

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// Whether `rendered` takes at most `budget` characters; no counting when its bytes do.
fn fits(rendered: &str, budget: usize) -> bool {
    rendered.len() <= budget || chars(rendered) <= budget
}

/// `text` cut to `max` characters, the last one `…`, when longer.
fn shortened(text: &str, max: usize) -> String {
    if chars(text) <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The largest `k` in `0..=n` for which `fits(k)` holds, `fits` holding for every smaller one.
pub(crate) fn most_that_fit(n: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (0, n);
    while low < high {
        let mid = (low + high).div_ceil(2);
        if fits(mid) { low = mid } else { high = mid - 1 }
    }
    low
}

impl ToolError {
    /// The error as it fits `budget` characters rendered (at least [`MIN_ENVELOPE_BUDGET`]):
    /// unchanged when it does; else its details cut to 300 characters each, then as many of
    /// its actions and details as fit after the message and recovery, with a detail saying
    /// how many more there are and where to see them all; the message and recovery
    /// themselves are cut only when they alone would not fit.
    ///
    /// ```
    /// use mcp_fusion_wire::{ErrorCode, ToolError};
    ///
    /// let names = (0..1_000).map(|i| format!("crm.tool_{i}"));
    /// let error = ToolError::new(ErrorCode::UnknownAction, "Unknown tool 'crm.tol_7'.")
    ///     .suggest("Did you mean \"crm.tool_7\"? Call one of the available tools.")
    ///     .actions(names);
    /// let cut = error.clone().within(8_000);
    /// assert!(cut.render().chars().count() <= 8_000);
    /// assert_eq!(cut.message, error.message);
    /// assert!(cut.find_detail("more_actions").unwrap().ends_with("more: tools/list lists them all."));
    /// ```
    pub fn within(self, budget: usize) -> ToolError {
        let budget = budget.max(MIN_ENVELOPE_BUDGET);
        if fits(&self.render(), budget) {
            return self;
        }
        let mut head = self;
        let actions = std::mem::take(&mut head.available_actions);
        let details: Vec<(String, String)> = std::mem::take(&mut head.details)
            .into_iter()
            .map(|(key, value)| (key, shortened(&value, DETAIL_CHARS)))
            .collect();
        // The message and recovery alone within half the budget, the lists after them.
        head.message = shortened(&head.message, budget / 4);
        head.recovery = head.recovery.take().map(|recovery| shortened(&recovery, budget / 4));
        let with = |actions_kept: usize, details_kept: usize| {
            let mut error = head.clone();
            error.available_actions = actions[..actions_kept].to_vec();
            error.details = details[..details_kept].to_vec();
            if actions_kept < actions.len() {
                let more = actions.len() - actions_kept;
                error.details.push(("more_actions".into(), format!("{more} more: tools/list lists them all.")));
            }
            if details_kept < details.len() {
                let more = details.len() - details_kept;
                error.details.push(("more_details".into(), format!("{more} more details not shown.")));
            }
            error
        };
        let actions_kept = most_that_fit(actions.len(), |k| fits(&with(k, 0).render(), budget));
        let details_kept = most_that_fit(details.len(), |k| fits(&with(actions_kept, k).render(), budget));
        with(actions_kept, details_kept)
    }
}

impl ValidationError {
    /// The error as it fits `budget` characters rendered (at least [`MIN_ENVELOPE_BUDGET`]):
    /// unchanged when it does; else each field line cut to 600 characters, then the first
    /// field lines that fit, and a last line saying how many more problems there are.
    ///
    /// ```
    /// use mcp_fusion_wire::{FieldProblem, ValidationError};
    ///
    /// let mut error = ValidationError::new("crm.search");
    /// for i in 0..500 {
    ///     error = error.field(FieldProblem { name: format!("key_{i}"), text: "Unrecognized key. Expected only the known fields 'query'; remove it.".into() });
    /// }
    /// let cut = error.within(8_000);
    /// assert!(cut.render().chars().count() <= 8_000);
    /// assert!(cut.fields.last().unwrap().text.ends_with("the rest are reported on the next call."));
    /// ```
    pub fn within(self, budget: usize) -> ValidationError {
        let budget = budget.max(MIN_ENVELOPE_BUDGET);
        if fits(&self.render(), budget) {
            return self;
        }
        let mut head = self;
        let fields: Vec<FieldProblem> = std::mem::take(&mut head.fields)
            .into_iter()
            .map(|field| FieldProblem { name: shortened(&field.name, 100), text: shortened(&field.text, FIELD_CHARS) })
            .collect();
        let with = |kept: usize| {
            let mut error = head.clone();
            error.fields = fields[..kept].to_vec();
            if kept < fields.len() {
                let more = fields.len() - kept;
                error.fields.push(FieldProblem {
                    name: "(root)".into(),
                    text: format!(
                        "{more} more problems are not listed. Expected the fields above fixed first; the rest are reported on the next call."
                    ),
                });
            }
            error
        };
        let kept = most_that_fit(fields.len(), |k| fits(&with(k).render(), budget));
        let mut cut = with(kept);
        if !fits(&cut.render(), budget) {
            // Contract changes are the one part left whole so far.
            cut.contract_awareness = None;
        }
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorCode;

    #[test]
    fn an_error_within_its_budget_is_left_as_it_is() {
        let error = ToolError::not_found("No invoice inv_1.").suggest("List them.").actions(["billing.list_invoices"]);
        assert_eq!(error.clone().within(8_000), error);
    }

    #[test]
    fn long_details_are_cut_first_and_then_counted() {
        let mut error = ToolError::new(ErrorCode::Conflict, "m".repeat(5_000)).suggest("r".repeat(5_000));
        for i in 0..50 {
            error = error.detail(format!("d{i}"), "v".repeat(1_000));
        }
        let cut = error.within(1_000);
        assert!(chars(&cut.render()) <= 1_000, "{}", chars(&cut.render()));
        assert_eq!(chars(&cut.message), 250);
        assert!(cut.message.ends_with('…'));
        assert!(cut.find_detail("more_details").is_some_and(|more| more.ends_with("more details not shown.")));
    }
}
