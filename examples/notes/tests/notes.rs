//! The notes server through `mcp_fusion::testing`: a real MCP client in process, over a real
//! SQLite file.

use std::path::Path;
use std::time::Duration;

use mcp_fusion::prelude::*;
use mcp_fusion::testing::TestClient;
use notes_server::{Note, NoteList, Notes};
use serde_json::json;

/// A client of a notes server on a new database in `dir`.
async fn notes(dir: &Path) -> TestClient {
    let server = notes_server::server(Notes::open(&dir.join("notes.db")).unwrap()).unwrap();
    TestClient::connect(server).await
}

#[tokio::test]
async fn notes_are_added_listed_read_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let test = notes(dir.path()).await;
    let tools: Vec<String> = test.tools().iter().map(|tool| tool.name.to_string()).collect();
    assert_eq!(tools, ["notes"]);

    let first: Note = test.call("notes.add", json!({"text": "buy milk"})).await.unwrap().json().unwrap();
    let second: Note = test.call("notes.add", json!({"text": "call Ada"})).await.unwrap().json().unwrap();
    assert_eq!((first.id, second.id), (1, 2));

    let listed: NoteList = test.call("notes.list", json!({})).await.unwrap().json().unwrap();
    assert_eq!(listed.notes, [second, Note { id: 1, text: "buy milk".into() }]);

    let read = test.call("notes.get", json!({"id": 1})).await.unwrap();
    assert_eq!(read.structured(), Some(&json!({"id": 1, "text": "buy milk"})));

    let deleted: Note = test.call("notes.delete", json!({"id": 1})).await.unwrap().json().unwrap();
    assert_eq!(deleted.text, "buy milk");
    let gone = test.call("notes.get", json!({"id": 1})).await.unwrap_err();
    assert_eq!(gone.error.code, ErrorCode::NotFound);
    assert_eq!(gone.error.message, "No note has the id 1.");
    assert_eq!(gone.error.available_actions, ["notes.list"]);
}

#[tokio::test]
async fn a_bad_argument_heals_before_the_handler_runs() {
    let dir = tempfile::tempdir().unwrap();
    let test = notes(dir.path()).await;
    let empty = test.call("notes.add", json!({"text": ""})).await.unwrap_err();
    assert_eq!(empty.error.code, ErrorCode::ValidationError);
    assert_eq!(empty.action.as_deref(), Some("notes.add"));
    assert_eq!(empty.fields[0].name, "text");

    let unknown = test.call("notes.edit", json!({"id": 1})).await.unwrap_err();
    assert!(unknown.error.message.contains("edit"), "{unknown:?}");
    let listed: NoteList = test.call("notes.list", json!({})).await.unwrap().json().unwrap();
    assert!(listed.notes.is_empty(), "nothing was added: {listed:?}");
}

#[tokio::test]
async fn a_database_error_through_question_mark_is_an_internal_error_naming_the_action() {
    let dir = tempfile::tempdir().unwrap();
    let test = notes(dir.path()).await;
    // Behind the server's back: the table is gone, so the next query fails in rusqlite.
    rusqlite::Connection::open(dir.path().join("notes.db")).unwrap().execute_batch("DROP TABLE notes").unwrap();

    let failed = test.call("notes.list", json!({})).await.unwrap_err();
    assert_eq!(failed.error.code, ErrorCode::InternalError);
    if cfg!(debug_assertions) {
        // Debug builds show the model what failed…
        assert!(failed.error.message.contains("[notes.list]"), "{failed:?}");
        assert!(failed.error.message.contains("no such table: notes"), "{failed:?}");
    } else {
        // …release builds name an incident, and the error goes to the log only.
        assert!(!failed.error.message.contains("no such table"), "{failed:?}");
    }
}

#[tokio::test]
async fn the_rate_limit_of_add_answers_rate_limited_with_when_to_retry() {
    let dir = tempfile::tempdir().unwrap();
    let test = notes(dir.path()).await;
    for n in 0..30 {
        test.call("notes.add", json!({"text": format!("note {n}")})).await.unwrap();
    }
    let limited = test.call("notes.add", json!({"text": "one too many"})).await.unwrap_err();
    assert_eq!(limited.error.code, ErrorCode::RateLimited);
    assert!(limited.error.retry_after.is_some_and(|after| after > 0), "{limited:?}");
    // Reads have no limit of their own.
    test.call("notes.list", json!({})).await.unwrap();
}

/// Waits a minute: longer than any timeout.
#[action(timeout = Duration::from_secs(2))]
async fn slow(_ctx: Ctx<Notes>) -> Result<Json<Note>> {
    tokio::time::sleep(Duration::from_secs(60)).await;
    Ok(Json(Note { id: 0, text: String::new() }))
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fires_on_the_paused_clock() {
    let dir = tempfile::tempdir().unwrap();
    let server = FusionServer::builder("notes-server", "0.1.0")
        .group(notes_server::group().action(slow()))
        .build(Notes::open(&dir.path().join("notes.db")).unwrap())
        .unwrap();
    let test = TestClient::connect(server).await;
    let started = tokio::time::Instant::now();
    let timed_out = test.call("notes.slow", json!({})).await.unwrap_err();
    assert_eq!(timed_out.error.code, ErrorCode::Timeout);
    // The clock moved by the timeout, not by the handler's minute.
    assert_eq!(started.elapsed().as_secs(), 2);
}
