//! A tool that serves a name sent without its namespace or group, and the call to make
//! instead. Exact names only: a misspelling is the did-you-mean's work.

use crate::similarity::did_you_mean;

/// One way to reach what a name without its namespace or group meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Candidate {
    /// A tool of its own: a mounted tool (`demo.echo`), a namespace's only tool, or a flat
    /// local tool (`billing_pay_invoice`).
    Tool {
        /// The tool's name.
        tool: String,
    },
    /// An action of a grouped tool.
    Action {
        /// The grouped tool (`demo.billing`, or `billing`).
        tool: String,
        /// Its discriminator (`action`).
        discriminator: String,
        /// The action (`pay_invoice`).
        action: String,
        /// What `available_actions` lists for it: the mounted tool, or the local action's
        /// qualified name (`billing.pay_invoice`).
        listed: String,
    },
}

impl Candidate {
    /// What `available_actions` lists for this candidate.
    pub(crate) fn listed(&self) -> &str {
        match self {
            Candidate::Tool { tool } => tool,
            Candidate::Action { listed, .. } => listed,
        }
    }

    /// The call, as a list of candidates says it: `"demo.echo"`, or `"demo.billing" with
    /// "action": "pay_invoice"`.
    pub(crate) fn call(&self) -> String {
        match self {
            Candidate::Tool { tool } => format!("\"{tool}\""),
            Candidate::Action { tool, discriminator, action, .. } => {
                format!("\"{tool}\" with \"{discriminator}\": \"{action}\"")
            }
        }
    }

    /// The call, as the one guess a recovery makes.
    pub(crate) fn guess(&self) -> String {
        match self {
            Candidate::Tool { tool } => format!("Did you mean \"{tool}\"?"),
            Candidate::Action { .. } => format!("Call {}; it serves that action.", self.call()),
        }
    }
}

/// The one guess, or the few close ones, as a recovery says them; `None` for none.
pub(crate) fn guesses(candidates: &[Candidate]) -> Option<String> {
    match candidates {
        [] => None,
        [one] => Some(one.guess()),
        several => did_you_mean(&several.iter().map(Candidate::call).collect::<Vec<_>>()),
    }
}

/// The recovery of a name several tools serve: every one of them, to be called by name.
pub(crate) fn ambiguity(candidates: &[Candidate]) -> String {
    let calls: Vec<String> = candidates.iter().map(Candidate::call).collect();
    let listed = match calls.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{}, or {last}", rest.join(", ")),
        None => String::new(),
    };
    format!(
        "Call one of them by its full name: {listed}. They are different tools, maybe of different servers: pick the one you mean, or ask the user."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_candidate_says_its_call() {
        let tool = Candidate::Tool { tool: "demo.echo".into() };
        let action = Candidate::Action {
            tool: "demo.billing".into(),
            discriminator: "action".into(),
            action: "pay_invoice".into(),
            listed: "demo.billing".into(),
        };
        assert_eq!(tool.guess(), "Did you mean \"demo.echo\"?");
        assert_eq!(action.guess(), "Call \"demo.billing\" with \"action\": \"pay_invoice\"; it serves that action.");
        assert_eq!(
            ambiguity(&[tool.clone(), action.clone(), tool]),
            "Call one of them by its full name: \"demo.echo\", \"demo.billing\" with \"action\": \"pay_invoice\", or \"demo.echo\". They are different tools, maybe of different servers: pick the one you mean, or ask the user."
        );
    }
}
