use mcp_fusion::prelude::*;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Note {
    text: String,
}

/// List the notes.
#[action(read_only)]
async fn list_notes(_ctx: Ctx<()>) -> Result<Vec<Note>> {
    Ok(Vec::new())
}

fn main() {
    let notes = Group::new("notes", "Notes.").action(list_notes());
    let _ = FusionServer::builder("notes", "0.1.0").group(notes).build(());
}
