//! Did-you-mean: the known name closest to what was sent.

/// Similarity a candidate needs to be suggested (Jaro, as clap uses).
const THRESHOLD: f64 = 0.7;
/// Share of characters that must survive the edits: Jaro alone finds `id` close to
/// `void_reason` (two letters in order), which no reader would.
const EDIT_THRESHOLD: f64 = 0.5;

/// The candidate most similar to `sent`, if any is similar enough.
pub(crate) fn closest<'a>(sent: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let bytes = sent.len();
    let sent = sent.to_lowercase();
    candidates
        .into_iter()
        // Most characters must survive the edits, which a text many times longer cannot: left
        // out before the comparison, which costs one length times the other.
        .filter(|candidate| bytes <= 16 * candidate.len() + 16)
        .filter_map(|candidate| {
            let candidate_lower = candidate.to_lowercase();
            let edits = strsim::normalized_levenshtein(&sent, &candidate_lower);
            let score = strsim::jaro(&sent, &candidate_lower);
            (score >= THRESHOLD && edits >= EDIT_THRESHOLD).then_some((score, candidate))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_best_close_name() {
        let names = ["list_invoices", "get_invoice", "create_invoice", "pay_invoice", "void_invoice"];
        assert_eq!(closest("get_invoce", names), Some("get_invoice"));
        assert_eq!(closest("GET_INVOICE", names), Some("get_invoice"));
        assert_eq!(closest("nmae", ["name", "id"]), Some("name"));
        assert_eq!(closest("zzzz", names), None);
        assert_eq!(closest("x", []), None);
        // Two letters in order do not make a name close.
        assert_eq!(closest("void_reason", ["id", "reason"]), None);
        assert_eq!(closest("ehco", ["echo", "order"]), Some("echo"));
        assert_eq!(closest(&"echo".repeat(1_000), ["echo"]), None);
    }
}
