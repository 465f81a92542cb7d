//! The MIME type a skill's file is served as, and whether it travels as text.

/// The MIME type of `SKILL.md` and every Markdown file.
pub(crate) const MARKDOWN: &str = "text/markdown";

/// What a Git LFS pointer file starts with: the file was checked out without its LFS object.
const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/v1\n";

/// The MIME type of a file named `name` holding `bytes`: by its extension, from
/// [`mime_guess`]'s table (the IANA registry and Apache's `mime.types`), else `text/plain` for
/// text and `application/octet-stream` for anything else.
pub(crate) fn of(name: &str, bytes: &[u8]) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, extension)| extension.to_ascii_lowercase());
    let Some(extension) = extension else {
        return fallback(bytes);
    };
    if let Some(known) = text_override(&extension)
        && is_text(bytes)
    {
        return known;
    }
    mime_guess::from_ext(&extension).first_raw().unwrap_or_else(|| fallback(bytes))
}

/// The types where the table's answer is wrong or vague for the text files skills ship: `.ts`
/// is an MPEG transport stream there, `.dot` a Word template (a Graphviz graph in a skill, as
/// in obra/superpowers: IANA registers `text/vnd.graphviz`), `.cjs` unknown (CommonJS, the
/// JavaScript of `.js`), `.py` plain text, `.yaml` an unregistered `text/x-yaml` (RFC 9512
/// registers `application/yaml`). Markdown is `text/markdown` whatever the table says. A file
/// that is not text keeps the table's type (a Word `.dot` is binary).
fn text_override(extension: &str) -> Option<&'static str> {
    match extension {
        "md" | "markdown" => Some(MARKDOWN),
        "ts" | "mts" | "cts" => Some("text/x-typescript"),
        "cjs" => Some("text/javascript"),
        "dot" | "gv" => Some("text/vnd.graphviz"),
        "py" => Some("text/x-python"),
        "yaml" | "yml" => Some("application/yaml"),
        _ => None,
    }
}

/// The type of a file whose extension says nothing.
fn fallback(bytes: &[u8]) -> &'static str {
    if is_text(bytes) { "text/plain" } else { "application/octet-stream" }
}

/// Whether `bytes` can travel as a resource's `text` and come back byte for byte: UTF-8
/// without NUL, which some clients cut a string at. Anything else is sent as a base64 `blob`.
pub(crate) fn is_text(bytes: &[u8]) -> bool {
    !bytes.contains(&0) && std::str::from_utf8(bytes).is_ok()
}

/// Whether `bytes` is a Git LFS pointer (the small text file Git keeps in place of a large
/// file until `git lfs pull` fetches it) rather than the file it stands for.
pub(crate) fn is_lfs_pointer(bytes: &[u8]) -> bool {
    // The spec caps a pointer at 1024 bytes; its `oid` line is what a text file would not have.
    bytes.len() < 1024
        && bytes.starts_with(LFS_POINTER)
        && bytes.windows(b"\noid sha256:".len()).any(|window| window == b"\noid sha256:")
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
        assert_eq!(of("unknown.zzzz", b"words"), "text/plain");
        assert!(is_text("é".as_bytes()) && !is_text(b"a\0b") && !is_text(&[0xff]));
    }

    #[test]
    fn fonts_schemas_and_code_are_typed_from_the_registry_table() {
        assert_eq!(of("Inter.ttf", &[0, 1, 0, 0]), "font/ttf");
        assert_eq!(of("Inter.woff2", b"wOF2\0"), "font/woff2");
        assert_eq!(of("schema.xsd", b"<xs:schema/>"), "text/xml");
        assert_eq!(of("index.ts", b"export {}"), "text/x-typescript");
        assert_eq!(of("stream.ts", &[0x47, 0, 0x11]), "video/vnd.dlna.mpeg-tts");
        assert_eq!(of("config.yml", b"a: 1"), "application/yaml");
        assert_eq!(of("flow.dot", b"digraph G { a -> b }"), "text/vnd.graphviz");
        assert_eq!(of("letter.dot", &[0xd0, 0xcf, 0x11, 0xe0, 0]), "application/msword");
        assert_eq!(of("server.cjs", b"module.exports = {}"), "text/javascript");
        assert_eq!(of("logo.png", &[0x89, b'P', b'N', b'G']), "image/png");
        assert_eq!(
            of("report.docx", b"PK\x03\x04"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        );
    }

    #[test]
    fn a_git_lfs_pointer_is_recognised() {
        let pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n";
        assert!(is_lfs_pointer(pointer));
        assert!(!is_lfs_pointer(b"version https://git-lfs.github.com/spec/v1\nno oid here\n"));
        assert!(!is_lfs_pointer(&[0x89, b'P', b'N', b'G']));
    }
}
