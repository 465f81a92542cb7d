//! Did-you-mean: the known name closest to what was sent.

/// Similarity a candidate needs to be suggested (Jaro, as clap uses).
const THRESHOLD: f64 = 0.7;

/// The candidate most similar to `sent`, if any is similar enough.
pub(crate) fn closest<'a>(sent: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let sent = sent.to_lowercase();
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro(&sent, &candidate.to_lowercase()), candidate))
        .filter(|(score, _)| *score >= THRESHOLD)
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
    }
}
