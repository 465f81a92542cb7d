use mcp_fusion::prelude::*;

/// Read a note.
#[action(read_only)]
fn get_note(_ctx: Ctx<()>) -> Result<String> {
    Ok(String::new())
}

fn main() {
    let notes = Group::new("notes", "Notes.").action(get_note());
    let _ = FusionServer::builder("notes", "0.1.0").group(notes).build(());
}
