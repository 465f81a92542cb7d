use mcp_fusion::prelude::*;

/// Read a note.
#[action(rate_limt = RateLimit::new(10, std::time::Duration::from_secs(60)))]
async fn get_note(_ctx: Ctx<()>) -> Result<String> {
    Ok(String::new())
}

fn main() {
    let notes = Group::new("notes", "Notes.").action(get_note());
    let _ = FusionServer::builder("notes", "0.1.0").group(notes).build(());
}
