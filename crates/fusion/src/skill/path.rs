//! Paths in a skill namespace and the `skill://` URIs they are served at.

/// The scheme skills are served under.
pub(crate) const SCHEME: &str = "skill://";

/// The file every skill holds at its root.
pub(crate) const SKILL_MD: &str = "SKILL.md";

/// The `skill://` URI of `path` (`acme/billing/refunds/SKILL.md`), every byte a URI may not
/// hold as it is percent-encoded (a space as `%20`).
pub(crate) fn uri(path: &str) -> String {
    let mut uri = String::with_capacity(SCHEME.len() + path.len());
    uri.push_str(SCHEME);
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// `parent/child`, or the one that is not empty.
pub(crate) fn join(parent: &str, child: &str) -> String {
    match (parent.is_empty(), child.is_empty()) {
        (true, _) => child.to_owned(),
        (false, true) => parent.to_owned(),
        (false, false) => format!("{parent}/{child}"),
    }
}

/// The directory holding `path`: empty at the top.
pub(crate) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// The last segment of `path`.
pub(crate) fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, name)| name)
}

/// Why `path` (a prefix, or a file's path within a skill) is no relative `/`-separated path,
/// if it is not one: an empty segment, `.` or `..`, a backslash or a control character.
pub(crate) fn problem(path: &str) -> Option<&'static str> {
    if path.starts_with('/') {
        return Some("it starts with /, and a path here is relative");
    }
    for segment in path.split('/') {
        match segment {
            "" => return Some("it has an empty segment (// or a / at its end)"),
            "." | ".." => return Some("it has a . or .. segment"),
            _ if segment.contains('\\') => return Some("it holds a backslash; segments are separated by /"),
            _ if segment.chars().any(char::is_control) => return Some("it holds a control character"),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_encodes_what_a_uri_cannot_hold() {
        assert_eq!(uri("acme/billing/refunds/SKILL.md"), "skill://acme/billing/refunds/SKILL.md");
        assert_eq!(uri("my skills/a#b/ü.md"), "skill://my%20skills/a%23b/%C3%BC.md");
    }

    #[test]
    fn a_path_is_relative_and_plain() {
        assert_eq!(problem("references/FORMS.md"), None);
        assert!(problem("/etc/passwd").is_some());
        assert!(problem("a//b").is_some());
        assert!(problem("a/").is_some());
        assert!(problem("a/../b").is_some());
        assert!(problem("a\\b").is_some());
        assert!(problem("a\nb").is_some());
        assert_eq!((parent("a/b/c"), file_name("a/b/c"), parent("c"), join("", "c")), ("a/b", "c", "", "c".into()));
    }
}
