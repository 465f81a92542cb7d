//! Icons (MCP 2025-11-25) on the server, tools, resources, templates and prompts, as a real
//! client lists them; a source a client should not fetch fails the build.

use crate::support;

use mcp_fusion::prompt::Prompt;
use mcp_fusion::resource::{Resource, ResourceTemplate};
use mcp_fusion::{Action, BuildError, Ctx, Exposition, FusionServer, Group, Icon, IconTheme, NoInput, action};

fn icon(name: &str) -> Icon {
    Icon::new(format!("https://example.com/{name}.png")).with_mime_type("image/png").with_sizes(vec!["48x48".into()])
}

async fn read(_ctx: Ctx<()>, _input: NoInput) -> mcp_fusion::Result<String> {
    Ok("a note".into())
}

/// Delete every note.
#[action(destructive, icon = Icon::new("data:image/svg+xml;base64,PHN2Zy8+").with_theme(IconTheme::Dark))]
async fn wipe(_ctx: Ctx<()>) -> mcp_fusion::Result<String> {
    Ok("wiped".into())
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteUri {
    id: String,
}

fn notes() -> Group<()> {
    Group::new("notes", "Notes.")
        .icon(icon("notes"))
        .action(Action::new("read", "Read the note.").handler(read))
        .action(wipe())
}

fn server(exposition: Exposition) -> FusionServer {
    FusionServer::builder("notes", "1.0.0")
        .icon(icon("server"))
        .exposition(exposition)
        .group(notes())
        .resource(
            Resource::new("notes://all", "all")
                .icon(icon("all"))
                .handler(|_ctx: Ctx<()>| async { Ok::<_, mcp_fusion::ToolError>("every note") }),
        )
        .resource_template(
            ResourceTemplate::new("notes://{id}", "note")
                .icon(icon("note"))
                .handler(|_ctx: Ctx<()>, uri: NoteUri| async move { Ok::<_, mcp_fusion::ToolError>(uri.id) }),
        )
        .prompt(
            Prompt::new("summarize", "Summarize the notes.")
                .icon(icon("summarize"))
                .handler(|_ctx: Ctx<()>, _: NoInput| async { Ok::<_, mcp_fusion::ToolError>("Summarize the notes.") }),
        )
        .build(())
        .unwrap()
}

#[tokio::test]
async fn a_client_lists_every_icon_where_it_was_given() {
    let client = support::connect(server(Exposition::grouped())).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().icons, Some(vec![icon("server")]));
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].icons, Some(vec![icon("notes")]), "a grouped tool shows its group's icons");
    let resources = client.list_all_resources().await.unwrap();
    assert_eq!(resources[0].icons, Some(vec![icon("all")]));
    let templates = client.list_all_resource_templates().await.unwrap();
    assert_eq!(templates[0].icons, Some(vec![icon("note")]));
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(prompts[0].icons, Some(vec![icon("summarize")]));

    // Flat: an action's own icons, else its group's.
    let flat = support::connect(server(Exposition::flat())).await;
    let tools = flat.list_all_tools().await.unwrap();
    let icons_of = |name: &str| tools.iter().find(|tool| tool.name == name).unwrap().icons.clone().unwrap();
    assert_eq!(icons_of("notes_read"), [icon("notes")]);
    let wiped = &icons_of("notes_wipe")[0];
    assert_eq!((wiped.src.as_str(), wiped.theme), ("data:image/svg+xml;base64,PHN2Zy8+", Some(IconTheme::Dark)));
}

#[test]
fn an_icon_a_client_should_not_fetch_fails_the_build() {
    let refused = |icon: Icon| {
        let group = Group::<()>::new("notes", "Notes.").action(Action::new("read", "Read.").icon(icon).handler(read));
        match FusionServer::builder("notes", "1.0.0").group(group).build(()) {
            Err(error @ BuildError::Icon { .. }) => error.to_string(),
            other => panic!("expected BuildError::Icon, got {:?}", other.map(|_| ())),
        }
    };
    assert_eq!(
        refused(Icon::new("javascript:alert(1)")),
        "the icon of the action \"notes.read\" has the src \"javascript:alert(1)\": an icon's src must be an https: URL (https://example.com/icon.png) or a data: URI (data:image/png;base64,...), which clients accept; serve it over https or embed it"
    );
    assert!(refused(Icon::new("http://example.com/a.png")).contains("\"http://example.com/a.png\""));
    assert!(refused(Icon::new("https://")).contains("src \"https://\""));
    let server = FusionServer::builder::<()>("notes", "1.0.0").icon(Icon::new("file:///etc/passwd")).build(());
    assert!(matches!(server, Err(BuildError::Icon { of, .. }) if of == "the server"));
    let prompt = FusionServer::builder::<()>("notes", "1.0.0")
        .prompt(
            Prompt::new("p", "P.")
                .icon(Icon::new("ftp://x"))
                .handler(|_ctx: Ctx<()>, _: NoInput| async { Ok::<_, mcp_fusion::ToolError>("p") }),
        )
        .build(());
    assert!(matches!(prompt, Err(BuildError::Icon { of, .. }) if of == "the prompt \"p\""));
}
