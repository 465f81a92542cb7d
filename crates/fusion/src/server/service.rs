//! The server as rmcp sees it: `initialize` and `discover`; tools, resources, prompts,
//! completions and logging; tasks; and an answer that names the problem for requests whose
//! params do not decode.

#![allow(
    deprecated,
    reason = "the handler serves every protocol version, with what later ones deprecate: resources/subscribe, logging"
)]

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use mcp_fusion_contract::MOUNTS_CAPABILITY;
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams, CompleteResult,
    CustomRequest, CustomResult, DiscoverResult, ErrorCode, GetPromptRequestParams, GetPromptResponse,
    GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, JsonObject, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
    PromptsCapability, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult, ReadResourceRequestParams,
    ReadResourceResponse, Reference, ResourcesCapability, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, TASKS_EXTENSION_ID, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::FusionServer;
use super::gates::Gate;
use super::resources::page;
use crate::cache::{Listing, with_hint};
use crate::context::{RequestInfo, checked_log_level, list_caller, sessionless};
use crate::resumable::ResumableStream;

impl ServerHandler for FusionServer {
    fn get_info(&self) -> ServerConfig {
        // The catalog can change while the server runs (groups added or removed).
        let mut capabilities = ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build();
        // Resources and templates can come and go while the server runs, too.
        if self.inner.resources_declared.load(Ordering::Relaxed) {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = Some(true);
            resources.list_changed = Some(true);
            capabilities.resources = Some(resources);
        }
        if self.inner.prompts.any() {
            capabilities.prompts = Some(PromptsCapability::default());
        }
        if self.inner.prompts.any() || self.inner.resources.load().any_template() {
            capabilities.completions = Some(JsonObject::new());
        }
        // Before 2026-07-28 a session sets its level; from then on each request names its own.
        capabilities.logging = Some(JsonObject::new());
        let mounts: Vec<Value> = self.inner.catalog.load().mounted_namespaces().map(Value::from).collect();
        if !mounts.is_empty() {
            let mut namespaces = JsonObject::new();
            namespaces.insert("namespaces".into(), Value::Array(mounts));
            capabilities.experimental = Some([(MOUNTS_CAPABILITY.to_owned(), namespaces)].into());
        }
        if !self.inner.extensions.is_empty() {
            capabilities.extensions = Some(self.inner.extensions.clone());
        }
        if self.inner.tasks.configured || self.inner.catalog.load().runs_tasks() {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        }
        let mut config = ServerConfig::new(capabilities).with_server_info(self.inner.info.clone());
        if let Some(instructions) = &self.inner.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        #[cfg(feature = "http")]
        let issued = crate::context::issued_session(&context.extensions);
        #[cfg(not(feature = "http"))]
        let issued = None;
        // A shared session restored here hears its calls' events at the level it set elsewhere.
        #[cfg(feature = "http")]
        if let (Some(relay), Some(id)) = (self.relay(), &issued)
            && let Some(level) = relay.level_of(id).await
        {
            self.inner.settings.log_levels.set(context.peer.clone(), level);
        }
        self.inner.peers.add(context.peer, issued);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = list_caller(&context);
        let hint = self.inner.cache.list(Listing::Tools, caller.is_some());
        let catalog = self.inner.catalog.load();
        let client = context.client_capabilities();
        let tools = catalog.listed(catalog.seen_by(caller.as_ref(), client.as_ref()));
        Ok(with_hint!(ListToolsResult::with_all_items(tools), hint))
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let info = self.get_info();
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), info))
    }

    /// `logging/setLevel`, for clients before 2026-07-28: the session hears its calls'
    /// `tracing` events at `level` and above (see [`crate::logging`]).
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let before_removal = context.peer.peer_info().is_some_and(|info| info.protocol_version.has_initialize());
        if !before_removal {
            let instead = removed_in_2026("logging/setLevel").unwrap_or_default();
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: logging/setLevel was removed in MCP 2026-07-28; {instead}"),
                None,
            ));
        }
        #[cfg(feature = "http")]
        if let (Some(relay), Some(id)) = (self.relay(), crate::context::issued_session(&context.extensions)) {
            // Every replica holding the session sets it there too, this one included.
            relay.set_level(&id, request.level).await;
        }
        self.inner.settings.log_levels.set(context.peer, request.level);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let server = self.clone();
        let work = async move {
            let ArgumentInfo { name, value, .. } = &request.argument;
            let completion = match &request.r#ref {
                Reference::Prompt(prompt) => server.inner.prompts.complete(&prompt.name, name, value).await?,
                Reference::Resource(template) => {
                    server.inner.resources.load_full().complete(&template.uri, name, value).await?
                }
                _ => {
                    return Err(ErrorData::invalid_params(
                        "Unknown reference type: use ref/prompt or ref/resource",
                        None,
                    ));
                }
            };
            Ok(CompleteResult::new(completion))
        };
        self.through_gate(Gate::Complete, RequestInfo::from_context(context), work).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let value_free = self.inner.settings.guards.value_free_errors;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let caller = list_caller(&context);
        let hint = self.inner.cache.list(Listing::Prompts, caller.is_some());
        let (prompts, next) = match caller {
            Some(caller) => page(&self.inner.prompts.listed_for(&caller), cursor, value_free)?,
            None => page(self.inner.prompts.listed(), cursor, value_free)?,
        };
        let mut result = ListPromptsResult::with_all_items(prompts);
        result.next_cursor = next;
        Ok(with_hint!(result, hint))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        checked_log_level(&context)?;
        let info = RequestInfo::from_context(context).answering(request.input_responses, request.request_state);
        FusionServer::get_prompt(self, &request.name, request.arguments, info).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let value_free = self.inner.settings.guards.value_free_errors;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let resources = self.inner.resources.load();
        let caller = list_caller(&context);
        let hint = self.inner.cache.list(Listing::Resources, caller.is_some());
        let (resources, next) = match caller {
            Some(caller) => page(&resources.listed_for(&caller), cursor, value_free)?,
            None => page(resources.listed(), cursor, value_free)?,
        };
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        Ok(with_hint!(result, hint))
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let value_free = self.inner.settings.guards.value_free_errors;
        let cursor = request.as_ref().and_then(|r| r.cursor.as_deref());
        let resources = self.inner.resources.load();
        let caller = list_caller(&context);
        let hint = self.inner.cache.list(Listing::ResourceTemplates, caller.is_some());
        let (templates, next) = match caller {
            Some(caller) => page(&resources.listed_templates_for(&caller), cursor, value_free)?,
            None => page(resources.listed_templates(), cursor, value_free)?,
        };
        let mut result = ListResourceTemplatesResult::with_all_items(templates);
        result.next_cursor = next;
        Ok(with_hint!(result, hint))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        checked_log_level(&context)?;
        let info = RequestInfo::from_context(context).answering(request.input_responses, request.request_state);
        FusionServer::read_resource(self, &request.uri, info).await
    }

    /// `skills/list` (SEP-2640): a page of the skills' entries.
    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let per_caller = list_caller(&context).is_some();
        let server = self.clone();
        let work = async move { server.skills_page(cursor.as_deref(), per_caller) };
        self.through_gate(Gate::ListSkills, RequestInfo::from_context(context), work).await
    }

    /// `skills/get` (SEP-2640): one skill's entry, by the URI of its `SKILL.md`.
    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let server = self.clone();
        let work = async move { server.skill_entry(&request.uri) };
        self.through_gate(Gate::GetSkill, RequestInfo::from_context(context), work).await
    }

    /// `resources/directory/read` (SEP-2640): a page of a skill directory's children.
    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        let per_caller = list_caller(&context).is_some();
        let server = self.clone();
        let work = async move { server.directory_page(&request.uri, request.cursor.as_deref(), per_caller) };
        self.through_gate(Gate::ReadDirectory, RequestInfo::from_context(context), work).await
    }

    /// `resources/subscribe`, for protocol versions before 2026-07-28: a URI a read would
    /// accept, in a session that can carry the notification, through the server's guards, and
    /// within what the session and the server may hold.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let info = RequestInfo::from_context(context);
        let uri = request.uri.as_str();
        let subscriptions = &self.inner.settings.subscriptions;
        let resources = self.inner.resources.load_full();
        if let Err(why) = resources.subscribable(uri, subscriptions.limits().uri_bytes()) {
            return Err(resources.unsubscribable(uri, why, self.inner.settings.guards.value_free_errors));
        }
        resources.may_subscribe(uri, &info.caller)?;
        drop(resources);
        let Some(peer) = info.peer.clone().filter(|_| info.peer_accepts_requests) else {
            return Err(ErrorData::invalid_request(
                "Cannot subscribe without a session: this server answers each HTTP request on its own \
                 (stateless), so no notification can reach the client. Read the resource again when \
                 you need it fresh.",
                None,
            ));
        };
        let session = self.connection.session(&peer);
        #[cfg(feature = "http")]
        let issued = info.session_id.clone();
        self.pass_gate(Gate::Subscribe, ("uri", uri), info).await?;
        subscriptions.subscribe(session, uri, peer)?;
        // Shared sessions: the subscription is the session's on every replica, and so is its bound.
        #[cfg(feature = "http")]
        if let (Some(relay), Some(id)) = (self.relay(), issued) {
            let limit = subscriptions.limits().uris_per_session();
            if let Err(held) = relay.subscribe(&id, uri, limit).await {
                subscriptions.unsubscribe(session, uri);
                return Err(crate::subscriptions::Refused::Session { held, asked: 1, limit }.into());
            }
        }
        Ok(())
    }

    /// `resources/unsubscribe`: forgets the session's subscription (none is no error).
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let session = self.connection.session(&context.peer);
        self.inner.settings.subscriptions.unsubscribe(session, &request.uri);
        #[cfg(feature = "http")]
        if let (Some(relay), Some(id)) = (self.relay(), crate::context::issued_session(&context.extensions)) {
            relay.unsubscribe(&id, &request.uri).await;
        }
        Ok(())
    }

    /// `subscriptions/listen` (2026-07-28 and later): changes of the tools' and the resources'
    /// listings, and the URIs among those asked for that a read would accept (rmcp keeps what
    /// was asked for and declared). A request for more URIs than one listen may hold accepts
    /// nothing here and is refused by [`listen`](Self::listen): this crate's transports refuse
    /// it before rmcp decodes it, but behind another transport rmcp matches the accepted URIs
    /// against the requested ones pairwise, which only a short list keeps cheap.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let limits = self.inner.settings.subscriptions.limits();
        let mut accepted = SubscriptionFilter::new();
        if let Some(uris) = &requested.resource_subscriptions {
            if uris.len() > limits.uris_per_listen() {
                return Some(accepted);
            }
            let resources = self.inner.resources.load();
            let mut seen = HashSet::new();
            let subscribable = |uri: &&String| resources.subscribable(uri, limits.uri_bytes()).is_ok();
            let uris = uris.iter().filter(|uri| seen.insert(uri.as_str())).filter(subscribable);
            accepted.resource_subscriptions = Some(uris.cloned().collect());
        }
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        // rmcp acknowledges the listen next, before `listen` holds it.
        self.connection.listen_accepted();
        Some(accepted)
    }

    /// Holds a listen request until it ends: through the server's guards first, and within
    /// what one listen, the session and the server may hold.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let since = self.connection.listen_mark();
        let subscriptions = &self.inner.settings.subscriptions;
        let limits = subscriptions.limits();
        let asked = context.requested().resource_subscriptions.as_ref().map_or(0, Vec::len);
        if asked > limits.uris_per_listen() {
            let data = json!({"found": asked, "limit": limits.uris_per_listen()});
            return Err(ErrorData::invalid_params(limits.too_many_for_one_listen(asked), Some(data)));
        }
        let request = RequestInfo::from_context(context.request_context().clone());
        if let Some(uris) = &context.accepted().resource_subscriptions {
            let resources = self.inner.resources.load();
            uris.iter().try_for_each(|uri| resources.may_subscribe(uri, &request.caller))?;
        }
        let session = self.connection.session(&context.request_context().peer);
        self.pass_gate(Gate::Listen, ("request", "subscriptions/listen"), request).await?;
        let (number, missed) = subscriptions.listen(session, context.sink().clone(), since)?;
        for change in missed {
            if let Err(error) = change.tell_listener(context.sink()).await {
                tracing::debug!("a change told before this listen was held not delivered: {error}");
            }
        }
        context.cancelled().await;
        subscriptions.stop_listening(number);
        Ok(())
    }

    /// rmcp routes a request whose params do not decode to this handler; say what is wrong
    /// with them instead of claiming the method does not exist.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if crate::task::experimental::is_served(&request.method) {
            return self.experimental_tasks(request, context).await;
        }
        // 2026-07-28 has no handshake, no level to set and no resource subscriptions: whatever
        // its params, such a request names a method that is not there any more (rmcp answers
        // the removed ping itself).
        if sessionless(&context)
            && let Some(instead) = removed_in_2026(&request.method)
        {
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {} was removed in MCP 2026-07-28; {instead}", request.method),
                None,
            ));
        }
        match request.method.as_str() {
            "tools/call" => Err(ErrorData::invalid_params(call_params_problem(request.params.as_ref()), None)),
            "skills/list" | "skills/get" | "resources/directory/read" if !self.inner.skills.is_empty() => {
                Err(ErrorData::invalid_params(
                    super::skills::params_problem(&request.method, request.params.as_ref()),
                    None,
                ))
            }
            "tools/list"
            | "initialize"
            | "ping"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "prompts/list"
            | "prompts/get"
            | "completion/complete"
            | "logging/setLevel" => Err(ErrorData::invalid_params(
                format!("Invalid params for {}: they do not match the MCP schema", request.method),
                None,
            )),
            _ => {
                let method = mcp_fusion_wire::Sent::text(&request.method);
                Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, format!("Method not found: {method}"), None))
            }
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let info = RequestInfo::from_context(context);
        let (server, asking) = (self.clone(), info.clone());
        let work = async move { server.get_task_state(&request.task_id, &asking).await };
        self.through_gate(Gate::GetTask, info, work).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let responses = match serde_json::to_value(&request.input_responses) {
            Ok(serde_json::Value::Object(responses)) => responses,
            _ => JsonObject::new(),
        };
        let info = RequestInfo::from_context(context);
        let (server, asking) = (self.clone(), info.clone());
        let work = async move { server.update_task_of(&request.task_id, responses, &asking).await };
        self.through_gate(Gate::UpdateTask, info, work).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let info = RequestInfo::from_context(context);
        let (server, asking) = (self.clone(), info.clone());
        let work = async move { server.cancel_task_of(&request.task_id, &asking).await };
        self.through_gate(Gate::CancelTask, info, work).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.catalog.load().tool(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        checked_log_level(&context)?;
        let info = RequestInfo::from_context(context).answering(request.input_responses, request.request_state);
        let stream = info.extensions.get::<ResumableStream>().cloned();
        let response = self.respond(&request.name, request.arguments, info).await;
        // A call that closed its stream answers once its client is back to read it.
        if let Some(stream) = stream {
            stream.reopened().await;
        }
        response
    }
}

/// What a 2026-07-28 client does instead of a method that version removed (`None`: the method
/// was not removed).
fn removed_in_2026(method: &str) -> Option<&'static str> {
    Some(match method {
        "initialize" => "send server/discover, and your protocol version and capabilities in each request's _meta",
        "logging/setLevel" => {
            "set io.modelcontextprotocol/logLevel in the _meta of the request whose messages you want"
        }
        "resources/subscribe" | "resources/unsubscribe" => "use subscriptions/listen",
        _ => return None,
    })
}

/// What is wrong with the params of a `tools/call` that did not decode.
pub(super) fn call_params_problem(params: Option<&Value>) -> String {
    use mcp_fusion_wire::value_kind as kind;
    let Some(Value::Object(params)) = params else {
        return "Invalid params for tools/call: expected an object with \"name\" and \"arguments\"".to_owned();
    };
    match (params.get("name"), params.get("arguments")) {
        (Some(Value::String(_)), Some(arguments)) if !arguments.is_object() && !arguments.is_null() => format!(
            "Invalid params for tools/call: \"arguments\" must be a JSON object of the tool's fields, but it is {}",
            kind(arguments)
        ),
        (Some(Value::String(_)), _) => "Invalid params for tools/call: they do not match the MCP schema".to_owned(),
        (Some(name), _) => {
            format!("Invalid params for tools/call: \"name\" must be a string, but it is {}", kind(name))
        }
        (None, _) => "Invalid params for tools/call: \"name\" is missing".to_owned(),
    }
}
