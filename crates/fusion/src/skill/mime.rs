//! The MIME type a skill's file is served as, and whether it travels as text.

/// The MIME type of `SKILL.md` and every Markdown file.
pub(crate) const MARKDOWN: &str = "text/markdown";

/// The MIME type of a file named `name` holding `bytes`: by its extension, else `text/plain`
/// for text and `application/octet-stream` for anything else.
pub(crate) fn of(name: &str, bytes: &[u8]) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase());
    let known = match extension.as_deref() {
        Some("md" | "markdown") => MARKDOWN,
        Some("txt") => "text/plain",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("py") => "text/x-python",
        Some("rs") => "text/x-rust",
        Some("sh") => "application/x-sh",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("toml") => "application/toml",
        Some("xml") => "application/xml",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        _ => "",
    };
    match known {
        "" if is_text(bytes) => "text/plain",
        "" => "application/octet-stream",
        known => known,
    }
}

/// Whether `bytes` can travel as a resource's `text` and come back byte for byte: UTF-8
/// without NUL, which some clients cut a string at. Anything else is sent as a base64 `blob`.
pub(crate) fn is_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_by_extension_else_by_contents() {
        assert_eq!(of("FORMS.md", b"# Forms"), "text/markdown");
        assert_eq!(of("extract.PY", b"print()"), "text/x-python");
        assert_eq!(of("NOTES", b"plain words"), "text/plain");
        assert_eq!(of("blob.bin", &[0, 159, 146, 150]), "application/octet-stream");
        assert!(is_text("é".as_bytes()) && !is_text(b"a\0b") && !is_text(&[0xff]));
    }
}
