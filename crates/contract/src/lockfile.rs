//! `fusion.lock`: the contracts of a server, in canonical JSON (keys sorted, two-space indent,
//! a final newline), with a sha256 digest per tool, prompt and resource template and one for
//! the server. Nothing in it depends on when it was written, so the same server always locks
//! to the same bytes.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use sha2::{Digest as _, Sha256};

use crate::contract::{
    Contracts, PromptContract, PromptContracts, ResourceTemplateContract, ResourceTemplateContracts, ToolContract,
};

/// The lockfile format this build writes. It reads every version from 1: version 1 locked
/// tools only; version 2 adds prompts and resource templates.
pub const LOCKFILE_VERSION: u64 = 2;

/// The most tools — and, apart, the most prompts or resource templates — a lockfile holds:
/// far above any real server, and low enough that a lockfile is read, compared and logged in
/// moments.
pub const MAX_LOCKFILE_TOOLS: usize = 10_000;

/// The largest lockfile [`Lockfile::read`] reads: 16 MiB, far above
/// [`MAX_LOCKFILE_TOOLS`] real contracts.
pub const MAX_LOCKFILE_BYTES: u64 = 16 << 20;

/// A locked set of contracts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Lockfile {
    /// The tool contracts, by tool name.
    pub contracts: Contracts,
    /// The prompt contracts, by prompt name.
    pub prompts: PromptContracts,
    /// The resource template contracts, by URI template.
    pub resource_templates: ResourceTemplateContracts,
}

/// One section of the lockfile: a map of contracts, each under the key it is listed by.
trait Section: Serialize + DeserializeOwned {
    /// The section's key in the file.
    const KEY: &'static str;
    /// How a message names one entry (`tool "billing"`).
    const NOUN: &'static str;
    /// How a message names many.
    const PLURAL: &'static str;
    /// The key the contract itself states, which must be the one it is filed under.
    fn key(&self) -> &str;
}

impl Section for ToolContract {
    const KEY: &'static str = "tools";
    const NOUN: &'static str = "tool";
    const PLURAL: &'static str = "tools";
    fn key(&self) -> &str {
        &self.name
    }
}

impl Section for PromptContract {
    const KEY: &'static str = "prompts";
    const NOUN: &'static str = "prompt";
    const PLURAL: &'static str = "prompts";
    fn key(&self) -> &str {
        &self.name
    }
}

impl Section for ResourceTemplateContract {
    const KEY: &'static str = "resourceTemplates";
    const NOUN: &'static str = "resource template";
    const PLURAL: &'static str = "resource templates";
    fn key(&self) -> &str {
        &self.uri_template
    }
}

/// Why a lockfile could not be read. Each message says what is wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum LockfileError {
    /// The file could not be read.
    #[error("cannot read {path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// What the system said.
        reason: String,
    },
    /// The file is larger than the reader takes.
    #[error(
        "{path} is larger than {max_bytes} bytes, more than any lockfile of {MAX_LOCKFILE_TOOLS} tools; check the path, or regenerate it with `fusion lock`"
    )]
    TooLarge {
        /// The file.
        path: String,
        /// The most bytes read.
        max_bytes: u64,
    },
    /// More tools (or prompts, or resource templates) than a lockfile holds.
    #[error(
        "the lockfile has {count} {what}, more than the {MAX_LOCKFILE_TOOLS} a lockfile may hold; lock a server of fewer {what} with `fusion lock`"
    )]
    TooMany {
        /// `tools`, `prompts` or `resource templates`.
        what: &'static str,
        /// How many were found.
        count: usize,
    },
    /// Not JSON, or cut off.
    #[error(
        "the lockfile is not valid JSON (line {line}, column {column}: {reason}); regenerate it with `fusion lock`"
    )]
    Syntax {
        /// Where the JSON breaks.
        line: usize,
        /// Where the JSON breaks.
        column: usize,
        /// What the parser said.
        reason: String,
    },
    /// JSON, but not a lockfile of ours.
    #[error("this is not a fusion.lock: {0}; regenerate it with `fusion lock`")]
    Foreign(String),
    /// A lockfile of another format version.
    #[error(
        "the lockfile has version {found}, this fusion reads versions 1 to {LOCKFILE_VERSION}; regenerate it with `fusion lock`"
    )]
    Version {
        /// The version found.
        found: String,
    },
    /// A part of the lockfile is missing or malformed.
    #[error("the lockfile is malformed at {at}: {reason}; regenerate it with `fusion lock`")]
    Shape {
        /// Where.
        at: String,
        /// What is wrong.
        reason: String,
    },
    /// A digest does not match the contract it covers: the file was edited by hand.
    #[error(
        "the digest of {what} does not match its contents (expected {expected}, found {found}): the lockfile was edited by hand; regenerate it with `fusion lock`"
    )]
    Digest {
        /// `tool "billing"`, `prompt "dunning_letter"` or `the server`.
        what: String,
        /// The digest of the contents.
        expected: String,
        /// The digest written.
        found: String,
    },
}

impl Lockfile {
    /// Locks the contracts of `tools` (and no prompts or templates: see
    /// [`with_prompts`](Lockfile::with_prompts) and
    /// [`with_resource_templates`](Lockfile::with_resource_templates)).
    pub fn new(contracts: Contracts) -> Lockfile {
        Lockfile { contracts, ..Lockfile::default() }
    }

    /// The same lockfile, with these prompts locked.
    pub fn with_prompts(self, prompts: PromptContracts) -> Lockfile {
        Lockfile { prompts, ..self }
    }

    /// The same lockfile, with these resource templates locked.
    pub fn with_resource_templates(self, resource_templates: ResourceTemplateContracts) -> Lockfile {
        Lockfile { resource_templates, ..self }
    }

    /// The digest of one tool's contract: `sha256:` and the hex of its canonical compact JSON.
    pub fn tool_digest(contract: &ToolContract) -> String {
        entry_digest(contract)
    }

    /// The digest of the whole server: of the object mapping each section (`prompts`,
    /// `resourceTemplates`, `tools`) to the map from each entry's key to its digest.
    pub fn server_digest(&self) -> String {
        let sections = json!({
            (PromptContract::KEY): digests(&self.prompts),
            (ResourceTemplateContract::KEY): digests(&self.resource_templates),
            (ToolContract::KEY): digests(&self.contracts),
        });
        digest(&canonical(&sections))
    }

    /// The file's bytes: canonical JSON, keys sorted, two-space indent, a final newline.
    pub fn to_canonical_json(&self) -> String {
        let file = json!({
            "digest": self.server_digest(),
            "lockfileVersion": LOCKFILE_VERSION,
            (PromptContract::KEY): entries(&self.prompts),
            (ResourceTemplateContract::KEY): entries(&self.resource_templates),
            (ToolContract::KEY): entries(&self.contracts),
        });
        let mut text = serde_json::to_string_pretty(&canonical(&file)).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a lockfile's text, checking its shape and every digest.
    pub fn parse(text: &str) -> Result<Lockfile, LockfileError> {
        let value: Value = serde_json::from_str(text).map_err(|e| LockfileError::Syntax {
            line: e.line(),
            column: e.column(),
            reason: e.to_string().split(" at line ").next().unwrap_or_default().to_owned(),
        })?;
        let Value::Object(file) = value else {
            return Err(LockfileError::Foreign("the file is JSON but not an object".into()));
        };
        let version = match file.get("lockfileVersion") {
            None => return Err(LockfileError::Foreign("it has no \"lockfileVersion\"".into())),
            Some(Value::Number(n)) if n.as_u64().is_some_and(|v| (1..=LOCKFILE_VERSION).contains(&v)) => n.as_u64(),
            Some(other) => return Err(LockfileError::Version { found: other.to_string() }),
        };
        let lockfile = if version == Some(1) {
            Lockfile::new(section(&file)?)
        } else {
            Lockfile { contracts: section(&file)?, prompts: section(&file)?, resource_templates: section(&file)? }
        };
        let written = file.get("digest").and_then(Value::as_str).ok_or_else(|| shape("digest", "missing"))?;
        // Version 1 digested the tools alone.
        let actual = match version {
            Some(1) => digest(&canonical(&digests(&lockfile.contracts))),
            _ => lockfile.server_digest(),
        };
        if written != actual {
            return Err(LockfileError::Digest {
                what: "the server".into(),
                expected: actual,
                found: written.to_owned(),
            });
        }
        Ok(lockfile)
    }

    /// Reads the lockfile at `path`, refusing one larger than [`MAX_LOCKFILE_BYTES`].
    pub fn read(path: &Path) -> Result<Lockfile, LockfileError> {
        Lockfile::read_at_most(path, MAX_LOCKFILE_BYTES)
    }

    /// Reads the lockfile at `path`, refusing one larger than `max_bytes` after reading at
    /// most one byte more: a wrong path to a device or a huge file fails at once.
    pub fn read_at_most(path: &Path, max_bytes: u64) -> Result<Lockfile, LockfileError> {
        let io = |e: std::io::Error| LockfileError::Io { path: path.display().to_string(), reason: e.to_string() };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|file| file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes))
            .map_err(io)?;
        if bytes.len() as u64 > max_bytes {
            return Err(LockfileError::TooLarge { path: path.display().to_string(), max_bytes });
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| io(std::io::Error::new(std::io::ErrorKind::InvalidData, "the file is not UTF-8 text")))?;
        Lockfile::parse(&text)
    }

    /// Writes the lockfile to `path`.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        std::fs::write(path, self.to_canonical_json())
    }
}

/// The digest of one entry's contract.
fn entry_digest<T: Serialize>(contract: &T) -> String {
    digest(&canonical(&serde_json::to_value(contract).unwrap_or(Value::Null)))
}

/// A section's map from each key to its entry's digest.
fn digests<T: Section>(section: &BTreeMap<String, T>) -> Value {
    section.iter().map(|(key, contract)| (key.clone(), Value::String(entry_digest(contract)))).collect()
}

/// A section as the file holds it: each key to its contract and digest.
fn entries<T: Section>(section: &BTreeMap<String, T>) -> Value {
    section
        .iter()
        .map(|(key, contract)| {
            let contract_json = serde_json::to_value(contract).unwrap_or(Value::Null);
            (key.clone(), json!({"contract": contract_json, "digest": entry_digest(contract)}))
        })
        .collect()
}

/// Reads one section, checking each entry's key and digest. `tools` must be there; a version 2
/// file without `prompts` or `resourceTemplates` is malformed too, since the writer always
/// writes them.
fn section<T: Section>(file: &Map<String, Value>) -> Result<BTreeMap<String, T>, LockfileError> {
    let entries = match file.get(T::KEY) {
        Some(Value::Object(entries)) => entries,
        _ => return Err(shape(T::KEY, &format!("expected an object of {}", T::PLURAL))),
    };
    // Counted before any contract is decoded or digested, so an oversized file costs only
    // its parse.
    if entries.len() > MAX_LOCKFILE_TOOLS {
        return Err(LockfileError::TooMany { what: T::PLURAL, count: entries.len() });
    }
    let mut contracts = BTreeMap::new();
    for (key, entry) in entries {
        let at = format!("{}.{key}", T::KEY);
        let contract = entry.get("contract").ok_or_else(|| shape(&at, "no \"contract\""))?;
        let contract: T =
            serde_json::from_value(contract.clone()).map_err(|e| shape(&format!("{at}.contract"), &e.to_string()))?;
        if contract.key() != key {
            return Err(shape(&at, &format!("the contract names the {} {:?}", T::NOUN, contract.key())));
        }
        let written = entry.get("digest").and_then(Value::as_str).ok_or_else(|| shape(&at, "no \"digest\""))?;
        let actual = entry_digest(&contract);
        if written != actual {
            return Err(LockfileError::Digest {
                what: format!("{} {key:?}", T::NOUN),
                expected: actual,
                found: written.to_owned(),
            });
        }
        contracts.insert(key.clone(), contract);
    }
    Ok(contracts)
}

fn shape(at: &str, reason: &str) -> LockfileError {
    LockfileError::Shape { at: at.to_owned(), reason: reason.to_owned() }
}

fn digest(value: &Value) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let hash = Sha256::digest(&bytes);
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for byte in hash {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// `value` with every object's keys in sorted order, whatever map type serde_json was built
/// with.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), canonical(&map[k]))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contracts() -> Contracts {
        let tool = ToolContract {
            name: "billing".into(),
            title: None,
            description: Some("Invoices.".into()),
            input_schema: json!({"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "integer"}}}),
            output_schema: None,
            annotations: Map::new(),
            actions: Default::default(),
        };
        Contracts::from([("billing".to_owned(), tool)])
    }

    #[test]
    fn canonical_bytes_round_trip() {
        let lockfile = Lockfile::new(contracts());
        let text = lockfile.to_canonical_json();
        assert!(text.ends_with("}\n"));
        assert!(text.starts_with("{\n  \"digest\": \"sha256:"));
        assert!(text.find("\"a\"").unwrap() < text.find("\"z\"").unwrap(), "keys sorted");
        let read = Lockfile::parse(&text).unwrap();
        assert_eq!(read, lockfile);
        assert_eq!(read.to_canonical_json(), text);
    }

    #[test]
    fn the_documented_lockfile_is_one() {
        let guide = include_str!("../docs/governance.md");
        let start = guide.find("```json\n").expect("a JSON example") + "```json\n".len();
        let text = &guide[start..start + guide[start..].find("```").expect("its end")];
        let lockfile = Lockfile::parse(text).expect("the example parses, digests and all");
        assert_eq!(lockfile.to_canonical_json(), text, "the example is canonical");
        assert_eq!(lockfile.contracts["search"].input_schema["required"], json!(["q"]));
    }

    #[test]
    fn corrupt_truncated_and_foreign_files_are_clear_errors() {
        let text = Lockfile::new(contracts()).to_canonical_json();
        let cut = Lockfile::parse(&text[..text.len() / 2]).unwrap_err().to_string();
        assert!(cut.starts_with("the lockfile is not valid JSON (line "), "{cut}");
        assert!(Lockfile::parse("[]").unwrap_err().to_string().contains("not an object"));
        assert!(Lockfile::parse("{\"name\": \"x\"}").unwrap_err().to_string().contains("no \"lockfileVersion\""));
        assert!(Lockfile::parse("{\"lockfileVersion\": 9}").unwrap_err().to_string().contains("version 9"));
        let tampered = text.replace("Invoices.", "Invoices!");
        assert!(Lockfile::parse(&tampered).unwrap_err().to_string().contains("edited by hand"));
        let no_tools = "{\"lockfileVersion\": 1, \"tools\": 3}";
        assert!(Lockfile::parse(no_tools).unwrap_err().to_string().contains("at tools: expected an object"));
        assert!(Lockfile::parse("").unwrap_err().to_string().contains("not valid JSON"));
        assert!(Lockfile::parse("\u{0}\u{ffff}garbage").is_err());
    }

    /// A lockfile of `count` tools, digests and all.
    fn lockfile_of(count: usize) -> String {
        let tool = &contracts()["billing"];
        let contracts = (0..count)
            .map(|i| {
                let name = format!("t{i}");
                (name.clone(), ToolContract { name, ..tool.clone() })
            })
            .collect();
        Lockfile::new(contracts).to_canonical_json()
    }

    #[test]
    fn more_tools_than_the_cap_are_refused() {
        assert_eq!(Lockfile::parse(&lockfile_of(MAX_LOCKFILE_TOOLS)).unwrap().contracts.len(), MAX_LOCKFILE_TOOLS);
        let error = Lockfile::parse(&lockfile_of(MAX_LOCKFILE_TOOLS + 1)).unwrap_err();
        assert!(matches!(error, LockfileError::TooMany { what: "tools", count } if count == MAX_LOCKFILE_TOOLS + 1));
        assert_eq!(
            error.to_string(),
            "the lockfile has 10001 tools, more than the 10000 a lockfile may hold; lock a server of fewer tools with `fusion lock`"
        );
    }

    #[test]
    fn a_file_over_the_size_cap_is_refused_after_reading_one_byte_more() {
        let dir = std::env::temp_dir().join(format!("fusion-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("fusion.lock");
        let text = Lockfile::new(contracts()).to_canonical_json();
        std::fs::write(&path, &text).unwrap();
        let size = text.len() as u64;
        assert_eq!(Lockfile::read_at_most(&path, size).unwrap(), Lockfile::new(contracts()));
        let error = Lockfile::read_at_most(&path, size - 1).unwrap_err();
        assert!(matches!(&error, LockfileError::TooLarge { max_bytes, .. } if *max_bytes == size - 1), "{error}");
        assert!(error.to_string().contains(&format!(" is larger than {} bytes, ", size - 1)), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
        // An endless device fails at once, not when the memory runs out.
        if Path::new("/dev/zero").exists() {
            let error = Lockfile::read(Path::new("/dev/zero")).unwrap_err();
            assert!(matches!(error, LockfileError::TooLarge { .. }), "{error}");
        }
    }

    /// A version 1 lockfile: tools only, without the prompts and templates of version 2.
    const VERSION_1: &str = r#"{
  "digest": "sha256:4e532c12de6f2fe5663847ce8a2e441264d2f03f90dc5f646e43611426192e3b",
  "lockfileVersion": 1,
  "tools": {
    "search": {
      "contract": {
        "description": "Search the catalog.",
        "inputSchema": {
          "properties": {
            "q": {
              "type": "string"
            }
          },
          "required": [
            "q"
          ],
          "type": "object"
        },
        "name": "search"
      },
      "digest": "sha256:0806690349a3f8504d2cd91bc253a1a952710512d931929b26013ddc8bb14b26"
    }
  }
}
"#;

    #[test]
    fn a_version_1_lockfile_still_reads() {
        let lockfile = Lockfile::parse(VERSION_1).expect("version 1 reads, digests and all");
        assert_eq!(lockfile.contracts["search"].input_schema["required"], json!(["q"]));
        assert!(lockfile.prompts.is_empty() && lockfile.resource_templates.is_empty());
        // Written again, it is version 2, and reads back the same.
        let text = lockfile.to_canonical_json();
        assert!(
            text.contains("\n  \"lockfileVersion\": 2,\n  \"prompts\": {},\n  \"resourceTemplates\": {},\n"),
            "{text}"
        );
        assert_eq!(Lockfile::parse(&text).unwrap(), lockfile);
        let tampered = VERSION_1.replace("Search the catalog.", "Search the catalogue.");
        assert!(Lockfile::parse(&tampered).unwrap_err().to_string().contains("digest of tool \"search\""));
        // A version 1 file does not lock prompts: a section there is not read, so not trusted.
        let with_prompts = VERSION_1.replacen("\"tools\"", "\"prompts\": {\"x\": 1},\n  \"tools\"", 1);
        assert!(Lockfile::parse(&with_prompts).unwrap().prompts.is_empty());
    }

    fn full() -> Lockfile {
        let prompt: PromptContract = serde_json::from_value(json!({
            "name": "dunning_letter", "description": "A letter.",
            "arguments": [{"name": "id", "required": true}, {"name": "tone"}],
            "inputSchema": {"type": "object", "properties": {"tone": {"enum": ["friendly", "firm"]}}},
        }))
        .unwrap();
        let template: ResourceTemplateContract = serde_json::from_value(json!({
            "uriTemplate": "billing://invoices/{id}", "name": "invoice", "mimeType": "application/json",
        }))
        .unwrap();
        Lockfile::new(contracts())
            .with_prompts(PromptContracts::from([(prompt.name.clone(), prompt)]))
            .with_resource_templates(ResourceTemplateContracts::from([(template.uri_template.clone(), template)]))
    }

    #[test]
    fn prompts_and_templates_are_locked_and_digested() {
        let lockfile = full();
        let text = lockfile.to_canonical_json();
        assert_eq!(Lockfile::parse(&text).unwrap(), lockfile);
        assert_ne!(lockfile.server_digest(), Lockfile::new(contracts()).server_digest(), "the digest covers prompts");
        let tampered = text.replace("A letter.", "A note.");
        let error = Lockfile::parse(&tampered).unwrap_err().to_string();
        assert!(error.starts_with("the digest of prompt \"dunning_letter\" does not match"), "{error}");
        let moved = text.replace("\"billing://invoices/{id}\": {", "\"billing://bills/{id}\": {");
        let error = Lockfile::parse(&moved).unwrap_err().to_string();
        assert!(error.contains("at resourceTemplates.billing://bills/{id}: the contract names the resource template \"billing://invoices/{id}\""), "{error}");
        // Version 2 always writes every section: one missing was cut out.
        let mut file: Value = serde_json::from_str(&text).unwrap();
        file.as_object_mut().unwrap().shift_remove("resourceTemplates");
        let error = Lockfile::parse(&file.to_string()).unwrap_err().to_string();
        assert!(error.contains("at resourceTemplates: expected an object of resource templates"), "{error}");
        let error = Lockfile::parse(&text.replace("\"lockfileVersion\": 2", "\"lockfileVersion\": 3")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the lockfile has version 3, this fusion reads versions 1 to 2; regenerate it with `fusion lock`"
        );
        for version in ["0", "1.5", "-1", "\"2\"", "null"] {
            let text = text.replace("\"lockfileVersion\": 2", &format!("\"lockfileVersion\": {version}"));
            assert!(matches!(Lockfile::parse(&text), Err(LockfileError::Version { .. })), "{version}");
        }
    }

    #[test]
    fn more_prompts_than_the_cap_are_refused() {
        let prompt = full().prompts["dunning_letter"].clone();
        let prompts = (0..=MAX_LOCKFILE_TOOLS)
            .map(|i| {
                let name = format!("p{i}");
                (name.clone(), PromptContract { name, ..prompt.clone() })
            })
            .collect();
        let text = Lockfile::default().with_prompts(prompts).to_canonical_json();
        let error = Lockfile::parse(&text).unwrap_err();
        assert!(matches!(error, LockfileError::TooMany { what: "prompts", .. }), "{error}");
    }

    #[test]
    fn a_null_schema_is_written_as_none_so_the_file_verifies() {
        let mut lockfile = full();
        lockfile.contracts.get_mut("billing").unwrap().output_schema = Some(Value::Null);
        lockfile.prompts.get_mut("dunning_letter").unwrap().input_schema = Some(Value::Null);
        let text = lockfile.to_canonical_json();
        assert!(!text.contains("null"), "{text}");
        let read = Lockfile::parse(&text).expect("the digests verify");
        assert_eq!(read.prompts["dunning_letter"].input_schema, None);
        assert_eq!(read.to_canonical_json(), text);
        assert!(crate::diff_lockfiles(&lockfile, &read).is_empty());
    }

    #[test]
    fn every_float_reads_back_bit_for_bit() {
        // Each misread by serde_json's default float reader: the digest would not verify.
        for float in [3.4028234663852886e38, 1.0715660391465826e-75, -1.81996730402717e-179, f64::MAX, 0.1] {
            let mut lockfile = full();
            lockfile.contracts.get_mut("billing").unwrap().input_schema["maximum"] = json!(float);
            let text = lockfile.to_canonical_json();
            let read = Lockfile::parse(&text).unwrap_or_else(|e| panic!("{float}: {e}"));
            assert_eq!(read, lockfile, "{float}");
        }
    }
}
