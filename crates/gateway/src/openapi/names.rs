//! Tool names: an `operationId` (or method and path) in MCP's tool-name alphabet, at most 64
//! characters, shortened and told apart by a hash that is the same on every run and machine,
//! so that a tool keeps its name across restarts and lockfiles.

/// The longest tool name MCP takes.
pub(crate) const MAX_NAME: usize = 64;

/// How many characters of a long name a shortened one keeps: then `_` and 8 hex digits.
const KEPT: usize = MAX_NAME - 9;

/// `text` in MCP's tool-name alphabet (`A-Z a-z 0-9 _ -`): every other run of characters
/// becomes one `_`; a name longer than 64 characters keeps its first 55 and a hash of the
/// whole `text`, so two long names that start alike stay two names.
pub(crate) fn tool_name(text: &str) -> String {
    let mut name = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('_') {
            name.push('_');
        }
    }
    let name = name.trim_end_matches('_');
    if name.len() <= MAX_NAME { name.to_owned() } else { suffixed(name, text) }
}

/// `name` cut to 55 characters, then `_` and 8 hex digits of `key`'s hash.
pub(crate) fn suffixed(name: &str, key: &str) -> String {
    // The alphabet is ASCII, so characters are bytes.
    let stem = &name[..name.len().min(KEPT)];
    format!("{stem}_{:08x}", fnv1a(key.as_bytes()) as u32)
}

/// FNV-1a (64 bits): std's hasher is seeded at random per process, and a name must not be.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_cut_with_a_stable_hash_of_the_whole() {
        assert_eq!(tool_name("get invoice!"), "get_invoice");
        let long = |tail: &str| format!("{}{tail}", "a".repeat(70));
        let (one, two) = (tool_name(&long("One")), tool_name(&long("Two")));
        assert_ne!(one, two);
        assert_eq!((one.len(), two.len()), (64, 64));
        assert!(one.starts_with(&"a".repeat(55)) && one.as_bytes()[55] == b'_', "{one}");
        // The same on every run and every machine: FNV-1a of the whole id.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(one, format!("{}_{:08x}", "a".repeat(55), fnv1a(long("One").as_bytes()) as u32));
        assert_eq!(tool_name(&"b".repeat(64)), "b".repeat(64));
    }
}
