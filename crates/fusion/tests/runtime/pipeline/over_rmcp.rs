//! The rows' requests that [`FusionServer`] answers only as rmcp's `ServerHandler`: sent by
//! rmcp's own client over an in-process pipe, each as the caller of the request the row is
//! called with. The caller rides in the request's HTTP parts, where the HTTP transport leaves
//! what its authenticator admitted: the one way a caller reaches the server.

use mcp_fusion::FusionServer;
use mcp_fusion::auth::Caller;
use rmcp::model::{
    ArgumentInfo, CancelTaskParams, ClientCapabilities, ClientConfig, CompleteRequestParams, GetExtensions as _,
    GetSkillRequestParams, GetTaskParams, Implementation, JsonRpcMessage, PaginatedRequestParams, ProtocolVersion,
    ReadResourceDirectoryRequestParams, Reference, UpdateTaskParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt as _, RunningService, RxJsonRpcMessage, ServiceError, TxJsonRpcMessage,
};
use rmcp::transport::{IntoTransport, Transport};
use rmcp::{RoleClient, RoleServer, ServiceExt as _};
use serde_json::json;

use super::Answer;

/// A request reached through rmcp's client, with where the value sent goes.
#[derive(Clone, Copy)]
pub(super) enum Method {
    /// `completion/complete` of `argument` of `of`, the value the prefix typed.
    Complete { of: Completed, argument: &'static str },
    /// `skills/list`, the value the cursor.
    ListSkills,
    /// `skills/get` of `skill://` + the value + `/SKILL.md`: the value a skill's name.
    GetSkill,
    /// `resources/directory/read` of `skill://` + the value.
    ReadDirectory,
    /// `tasks/get` of the task the value names.
    GetTask,
    /// `tasks/update` of the task the value names, answering nothing.
    UpdateTask,
    /// `tasks/cancel` of the task the value names.
    CancelTask,
}

/// What a completion completes an argument of.
#[derive(Clone, Copy)]
pub(super) enum Completed {
    /// The prompt of that name.
    Prompt(&'static str),
    /// The resource template of that URI template.
    Template(&'static str),
}

impl Method {
    /// Sends the request with `sent`, as `caller`, to `server`; `row` names the row in a panic.
    pub(super) async fn call(self, row: &str, server: &FusionServer, sent: &str, caller: Caller) -> Answer {
        let client = connect(server, caller).await;
        let sent = sent.to_owned();
        let answered = match self {
            Method::Complete { of, argument } => {
                let of = match of {
                    Completed::Prompt(name) => Reference::for_prompt(name),
                    Completed::Template(uri) => Reference::for_resource(uri),
                };
                let params = CompleteRequestParams::new(of, ArgumentInfo::new(argument, sent));
                client.complete(params).await.map(|done| json!(done))
            }
            Method::ListSkills => {
                let page = PaginatedRequestParams::default().with_cursor(Some(sent));
                client.list_skills(Some(page)).await.map(|listed| json!(listed))
            }
            Method::GetSkill => {
                let uri = format!("skill://{sent}/SKILL.md");
                client.get_skill(GetSkillRequestParams::new(uri)).await.map(|got| json!(got))
            }
            Method::ReadDirectory => {
                let params = ReadResourceDirectoryRequestParams::new(format!("skill://{sent}"));
                client.read_resource_directory(params).await.map(|read| json!(read))
            }
            Method::GetTask => client.get_task(GetTaskParams::new(sent)).await.map(|got| json!(got)),
            Method::UpdateTask => {
                client.update_task(UpdateTaskParams::new(sent, Default::default())).await.map(|()| json!({}))
            }
            Method::CancelTask => client.cancel_task(CancelTaskParams::new(sent)).await.map(|()| json!({})),
        };
        Answer::of(answered.map_err(|error| match error {
            ServiceError::McpError(error) => error,
            other => panic!("{row}: no JSON-RPC answer: {other}"),
        }))
    }
}

/// An rmcp client of `server` on MCP 2026-07-28, declaring the tasks extension, whose every
/// request arrives as `caller`'s.
async fn connect(server: &FusionServer, caller: Caller) -> RunningService<RoleClient, ClientConfig> {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let transport = AsCaller { inner: IntoTransport::<RoleServer, _, _>::into_transport(server_io), caller };
    let server = server.clone();
    tokio::spawn(async move {
        if let Ok(running) = server.serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities = ClientCapabilities::builder().enable_tasks().build();
    let config = ClientConfig::new(capabilities, Implementation::new("matrix", "1"));
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    config.serve_with_lifecycle(client_io, lifecycle).await.unwrap()
}

/// The server's end of a pipe whose requests carry `caller` as an HTTP request does once the
/// authenticator admitted it: in the request's parts, which rmcp hands the server with it.
struct AsCaller<T> {
    inner: T,
    caller: Caller,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for AsCaller<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let mut message = self.inner.receive().await?;
        if let JsonRpcMessage::Request(request) = &mut message {
            let (mut parts, ()) = http::Request::new(()).into_parts();
            parts.extensions.insert(self.caller.clone());
            request.request.extensions_mut().insert(parts);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
