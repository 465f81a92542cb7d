//! A notes server on SQLite, written as a crate downstream of MCP Fusion writes one: one
//! import (`mcp_fusion::prelude::*`), `?` on rusqlite's errors, actions written with
//! `#[action]` and with the builder side by side, a rate limit and a timeout. Its tests
//! (`tests/notes.rs`) talk to it through `mcp_fusion::testing`.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mcp_fusion::prelude::*;
use rusqlite::{Connection, OptionalExtension as _, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The server's state: the notes' SQLite database.
#[derive(Debug, Clone)]
pub struct Notes {
    db: Arc<Mutex<Connection>>,
}

impl Notes {
    /// Opens (or creates) the database at `path` and its table.
    pub fn open(path: &Path) -> rusqlite::Result<Notes> {
        let db = Connection::open(path)?;
        db.execute_batch("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)")?;
        Ok(Notes { db: Arc::new(Mutex::new(db)) })
    }

    /// The connection. A handler that panicked while holding it left no half-written
    /// statement behind (SQLite's own transactions see to that), so a poisoned lock is taken.
    fn db(&self) -> MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A note.
#[derive(Debug, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct Note {
    /// Its id.
    pub id: i64,
    /// Its text.
    pub text: String,
}

/// Every note: a list inside an object, so the tool keeps an output schema (an output schema
/// is always an object).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct NoteList {
    /// The notes, newest first.
    pub notes: Vec<Note>,
}

#[derive(Deserialize, JsonSchema)]
struct AddNote {
    /// The note's text, 1 to 2000 characters.
    #[schemars(length(min = 1, max = 2000))]
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct NoteId {
    /// The note's id, as `notes.list` or `notes.add` gave it.
    #[schemars(range(min = 1))]
    id: i64,
}

/// Add a note; it comes back with its id.
#[action(rate_limit = RateLimit::new(30, Duration::from_secs(60)))]
async fn add(ctx: Ctx<Notes>, input: AddNote) -> Result<Json<Note>> {
    let db = ctx.state().db();
    db.execute("INSERT INTO notes (text) VALUES (?1)", params![input.text])?;
    Ok(Json(Note { id: db.last_insert_rowid(), text: input.text }))
}

/// List every note, newest first.
#[action(read_only)]
async fn list(ctx: Ctx<Notes>) -> Result<Json<NoteList>> {
    let db = ctx.state().db();
    let mut statement = db.prepare("SELECT id, text FROM notes ORDER BY id DESC")?;
    let notes = statement
        .query_map([], |row| Ok(Note { id: row.get(0)?, text: row.get(1)? }))?
        .collect::<rusqlite::Result<Vec<Note>>>()?;
    Ok(Json(NoteList { notes }))
}

/// Read one note by id.
#[action(read_only, timeout = Duration::from_secs(2))]
async fn get(ctx: Ctx<Notes>, input: NoteId) -> Result<Json<Note>> {
    let db = ctx.state().db();
    let text = db.query_row("SELECT text FROM notes WHERE id = ?1", [input.id], |row| row.get(0)).optional()?;
    found(input.id, text)
}

/// The builder's form of an action: the same as `#[action]` writes.
async fn delete(ctx: Ctx<Notes>, input: NoteId) -> Result<Json<Note>> {
    let db = ctx.state().db();
    let text =
        db.query_row("DELETE FROM notes WHERE id = ?1 RETURNING text", [input.id], |row| row.get(0)).optional()?;
    found(input.id, text)
}

/// The note `id` with the text a query found, or the envelope of an id no note has.
fn found(id: i64, text: Option<String>) -> Result<Json<Note>> {
    match text {
        Some(text) => Ok(Json(Note { id, text })),
        None => Err(ToolError::not_found(format!("No note has the id {id}."))
            .suggest("Call notes.list for the ids that exist, then retry with one of them.")
            .actions(["notes.list"])
            .detail("requestedId", id)
            .into()),
    }
}

/// The `notes` group: four actions, the model's one tool.
pub fn group() -> Group<Notes> {
    Group::new("notes", "Short notes kept in SQLite: add, list, read and delete them.")
        .action(add())
        .action(list())
        .action(get())
        .action(
            Action::new("delete", "Delete a note by id; it comes back one last time. It cannot be undone.")
                .destructive()
                .timeout(Duration::from_secs(2))
                .handler(delete),
        )
}

/// The server, serving `notes`.
pub fn server(notes: Notes) -> Result<FusionServer, BuildError> {
    FusionServer::builder("notes-server", env!("CARGO_PKG_VERSION")).group(group()).build(notes)
}
