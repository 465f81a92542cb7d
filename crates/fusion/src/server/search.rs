//! `search_tools` and `get_tool_details` as actions of the server: compiled once with the
//! server's guards and middleware, so a search is validated (forgiving scalars included),
//! guarded (rate limits, concurrency, timeout), logged and cut to the envelope budget as any
//! call is. A search looks only at the tools its caller may see, and ranks them on the blocking
//! pool, a few at a time, so searching a large catalog never holds an async worker.

use std::sync::Arc;

use mcp_fusion_wire::ToolError;
use rmcp::model::ClientCapabilities;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::Semaphore;

use super::compile::{ReadOnly, Settings, compile_read_only};
use crate::action::Action;
use crate::auth::Caller;
use crate::catalog::{Catalog, GET_TOOL_DETAILS, MATCHES, SEARCH_TOOLS, details, search_tools};
use crate::compiled::CompiledAction;
use crate::context::{CallInfo, Ctx};
use crate::error::BuildError;
use crate::output::Output;

/// The two tools that find the others, compiled.
pub(crate) struct SearchTools {
    search: Arc<CompiledAction>,
    details: Arc<CompiledAction>,
}

/// The catalog a search call looks in: the one of the moment the call arrived.
#[derive(Clone)]
pub(super) struct Searched(pub Arc<Catalog>);

/// How many searches rank at once: the rest wait their turn (within their timeout), so
/// searching leaves a core to every other call.
#[derive(Clone)]
struct Ranking(Arc<Semaphore>);

#[derive(Deserialize, JsonSchema)]
struct SearchInput {
    query: String,
    limit: Option<u64>,
}

#[derive(Deserialize, JsonSchema)]
struct DetailsInput {
    name: String,
}

impl SearchTools {
    /// The two tools compiled with `settings`' guards and middleware, their inputs checked
    /// against the schemas they are listed with.
    pub(crate) fn compile(settings: &Settings) -> Result<SearchTools, BuildError> {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let ranking = Ranking(Arc::new(Semaphore::new(cores.saturating_sub(1).max(1))));
        let search_action =
            Action::<Ranking>::new(SEARCH_TOOLS, "").handler(|ctx: Ctx<Ranking>, input: SearchInput| {
                let limit = usize::try_from(input.limit.unwrap_or(MATCHES)).unwrap_or(usize::MAX);
                ranked(ctx, move |catalog, caller, client| catalog.find(&input.query, limit, caller, client))
            });
        let details_action =
            Action::<Ranking>::new(GET_TOOL_DETAILS, "").handler(|ctx: Ctx<Ranking>, input: DetailsInput| {
                ranked(ctx, move |catalog, caller, client| details(&input.name, &catalog.seen_by(Some(caller), client)))
            });
        let listed = search_tools();
        let compile = |action: Action<Ranking>| -> Result<Arc<CompiledAction>, BuildError> {
            let tool = listed.iter().find(|tool| tool.name == action.name).ok_or_else(|| BuildError::Schema {
                action: action.name.clone(),
                reason: "no listed tool of that name".to_owned(),
            })?;
            let handler = action
                .handler
                .as_deref()
                .ok_or_else(|| BuildError::Schema { action: action.name.clone(), reason: "no handler".to_owned() })?;
            let asks = ReadOnly { require_identity: false, scopes: &[], rate_limits: &[], timeout: None };
            let state = Arc::new(ranking.clone());
            let mut compiled = compile_read_only(settings, &action.name, handler, &tool.input_schema, &asks, &state)?;
            compiled.forgiving_scalars = settings.forgiving_scalars;
            compiled.read_only = true;
            Ok(Arc::new(compiled))
        };
        Ok(SearchTools { search: compile(search_action)?, details: compile(details_action)? })
    }

    /// The compiled action behind `tool`, one of the two.
    pub(super) fn action(&self, tool: &str) -> &Arc<CompiledAction> {
        match tool {
            GET_TOOL_DETAILS => &self.details,
            _ => &self.search,
        }
    }
}

/// Runs `answer` over the tools the caller may see, on the blocking pool once a ranking
/// permit is free. A panic inside it goes on unwinding here, where the call's chain catches it.
async fn ranked(
    ctx: Ctx<Ranking>,
    answer: impl FnOnce(&Catalog, &Caller, Option<&ClientCapabilities>) -> Result<Value, ToolError> + Send + 'static,
) -> Result<Output, ToolError> {
    let call: &CallInfo = ctx.call();
    let Some(Searched(catalog)) = call.extensions().get::<Searched>().cloned() else {
        return Err(ToolError::internal(format!("{} was called outside the server's call path.", call.action())));
    };
    let (caller, client) = (call.caller.clone(), call.client_capabilities.clone());
    let gate = call.commit_gate();
    let permit = Arc::clone(&ctx.state().0)
        .acquire_owned()
        .await
        .map_err(|_| ToolError::internal("tool search is shutting down"))?;
    let work = tokio::task::spawn_blocking(move || {
        // Held until the ranking ends, even when the call stopped waiting for it.
        let _permit = permit;
        // A call answered while it waited its turn (its timeout, its client gone) ranks nothing:
        // the turn goes to the next caller still waiting.
        if gate.is_abandoned() {
            return Err(ToolError::timeout("the search was answered before its turn to rank came"));
        }
        answer(&catalog, &caller, client.as_ref())
    });
    match work.await {
        Ok(answer) => answer.map(Output::structured),
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => Err(ToolError::internal("the search was stopped before it ended")),
    }
}
