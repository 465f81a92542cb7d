//! Everything `fusion` reads from a file or stdin, read with a size cap: a stray
//! `/dev/urandom` or a runaway export fails at once instead of filling the memory.

use std::io::Read;
use std::path::Path;

use anyhow::Context as _;

/// The default of `--max-input-bytes`: 16 MiB, far above any real `tools/list`, lockfile or
/// envelope.
pub const DEFAULT_MAX_INPUT_BYTES: u64 = 16 << 20;

/// The text of `reader`, at most `max` bytes of it: only `max + 1` bytes are ever read, so an
/// endless input costs no more than that. `what` names the input in the errors.
pub fn read_capped(reader: impl Read, what: &str, max: u64) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut bytes).with_context(|| format!("reading {what}"))?;
    if bytes.len() as u64 > max {
        anyhow::bail!(
            "{what} is larger than {max} bytes (the --max-input-bytes limit); if it is what you meant to read, raise the limit with --max-input-bytes"
        );
    }
    String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{what} is not UTF-8 text"))
}

/// The text of the file at `path`, at most `max` bytes, as [`read_capped`] reads it.
pub fn read_file(path: &Path, what: &str, max: u64) -> anyhow::Result<String> {
    let file = std::fs::File::open(path).with_context(|| format!("reading {what}"))?;
    read_capped(file, what, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_up_to_the_cap_and_no_further() {
        assert_eq!(read_capped(&b"abc"[..], "x", 3).unwrap(), "abc");
        let error = read_capped(&b"abcd"[..], "the lockfile a.lock", 3).unwrap_err().to_string();
        assert!(error.starts_with("the lockfile a.lock is larger than 3 bytes (the --max-input-bytes limit); "));
        // An endless reader: only the cap and one byte are read.
        let endless = std::io::repeat(b'y');
        assert!(read_capped(endless, "stdin", 1 << 10).is_err());
        assert_eq!(read_capped(&[0xff, 0xfe][..], "stdin", 10).unwrap_err().to_string(), "stdin is not UTF-8 text");
    }
}
