use mcp_fusion::prelude::*;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Note {
    text: String,
}

async fn list_notes(_ctx: Ctx<()>, _input: NoInput) -> Result<Vec<Note>> {
    Ok(Vec::new())
}

fn main() {
    let _ = Action::<()>::new("list_notes", "List the notes.").handler(list_notes);
}
