//! Compiling a group: its names checked, each action's schemas generated and compiled, each
//! action's chain assembled, and the group's tools laid out. Done once per group, when the
//! server is built or when the group is added to a running server.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Icon;
use serde_json::{Map, Value};

use super::awareness::Awareness;
use crate::action::Action;
use crate::catalog::{ActionSpec, CalledNames, Exposition, GroupSpec, Layout, group_tools, published};
use crate::compiled::{CompiledAction, CompiledGroup};
use crate::error::BuildError;
use crate::group::Group;
use crate::guard::{
    ConcurrencyGuard, GroupScope, GuardSpec, GuardedEntry, RateLimit, RequireCaller, ServerGuards, StageLayers,
    built_in,
};
use crate::guard::{Layers, assemble};
use crate::handler::ErasedHandler;
use crate::logging::Levels;
use crate::subscriptions::Subscriptions;
use crate::validation::{
    Checker, Formats, close_unknown_keys, input_generator, into_object, is_object_schema, output_generator,
    property_names,
};

/// What the server's builder set for every group: kept by the server, so a group added while
/// it runs is compiled the same way as those it started with.
pub(crate) struct Settings {
    pub exposition: Exposition,
    pub mask_internal_errors: bool,
    /// Whether strings that spell numbers and booleans are read as them, unless an action or
    /// a mount says otherwise.
    pub forgiving_scalars: bool,
    /// Whether input schemas are published in the strict subset, unless a group or a mount
    /// says otherwise.
    pub strict_schemas: bool,
    /// The most characters an envelope of a call takes.
    pub envelope_budget: usize,
    /// Whether `tools/list` shows the tools that find the mounted ones instead of them.
    pub tool_search: bool,
    /// Those two tools, compiled, when `tool_search`.
    pub search: Option<super::search::SearchTools>,
    /// What every entry's built-in guards take from the server.
    pub guards: ServerGuards,
    pub middleware: Layers,
    pub awareness: Option<Awareness>,
    /// Who is told when a resource changes.
    pub subscriptions: Arc<Subscriptions>,
    /// The logging level each session set.
    pub log_levels: Levels,
    /// How the state of multi round-trip requests is sealed.
    pub request_state: crate::rounds::Sealing,
    /// Each local action as a call names it, as of the current catalog.
    pub names: Arc<arc_swap::ArcSwap<CalledNames>>,
}

/// What a resource or a prompt asks of the guards: they are compiled as a read-only action of
/// no group.
pub(super) struct ReadOnly<'a> {
    pub require_identity: bool,
    pub scopes: &'a [String],
    pub rate_limits: &'a [RateLimit],
    pub timeout: Option<Duration>,
}

/// Compiles a resource's or a prompt's handler, named `qualified`, into an action: a checker
/// of `schema`, its decoder, and a chain of the server's guards and middleware.
pub(super) fn compile_read_only<S: Send + Sync + 'static>(
    settings: &Settings,
    qualified: &str,
    handler: &dyn ErasedHandler<S>,
    schema: &Map<String, Value>,
    asks: &ReadOnly<'_>,
    state: &Arc<S>,
) -> Result<CompiledAction, BuildError> {
    let checker = Checker::new(schema, Vec::new(), Formats::Asserted)
        .map_err(|reason| BuildError::Schema { action: qualified.to_owned(), reason })?
        .value_free(settings.guards.value_free_errors);
    let qualified: Arc<str> = qualified.into();
    let scope = GroupScope { name: &qualified, rate_limits: &[], concurrency: None };
    let spec = GuardSpec::read(asks.require_identity, asks.scopes, asks.rate_limits, asks.timeout);
    let guards = guards(settings, &scope, &spec, &qualified, schema)?;
    let chain = assemble(guards, &[&settings.middleware], handler.endpoint(Arc::clone(state)));
    let mut action = CompiledAction::new(
        Arc::clone(&qualified),
        0,
        Some(checker),
        handler.decoder(),
        chain,
        settings.mask_internal_errors,
    );
    action.access = RequireCaller::new(qualified, asks.require_identity, asks.scopes.to_vec());
    action.value_free = settings.guards.value_free_errors;
    Ok(action)
}

/// Compiles `group`, whose handlers get `state`.
pub(crate) fn compile_group<S: Send + Sync + 'static>(
    settings: &Settings,
    group: Group<S>,
    state: &Arc<S>,
) -> Result<CompiledGroup, BuildError> {
    let Group {
        name,
        description,
        title,
        icons,
        actions,
        middleware,
        concurrency,
        rate_limits,
        without_output_schema,
        exposition,
        standalone,
        strict_schemas,
        app,
    } = group;
    let strict = strict_schemas.unwrap_or(settings.strict_schemas);
    let layout = match standalone {
        true => Layout::Standalone,
        false => Layout::Exposed(exposition.unwrap_or_else(|| settings.exposition.clone())),
    };
    check_name(if standalone { "action" } else { "group" }, &name)?;
    check_icons(|| format!("the group {name:?}"), &icons)?;
    if actions.is_empty() {
        return Err(BuildError::EmptyGroup { group: name });
    }
    let concurrency = concurrency.map(|limits| Arc::new(ConcurrencyGuard::new(format!("Tool \"{name}\""), limits)));
    let scope = GroupScope { name: &name, rate_limits: &rate_limits, concurrency: concurrency.as_ref() };
    if !standalone {
        check_checks(&name, &actions)?;
    }
    let mut compiled = Vec::with_capacity(actions.len());
    let mut specs = Vec::with_capacity(actions.len());
    let mut names = HashSet::with_capacity(actions.len());
    for action in actions {
        check_name("action", &action.name)?;
        if !names.insert(action.name.clone()) {
            return Err(BuildError::Duplicate { what: "action", name: format!("{name}.{}", action.name) });
        }
        let (action, spec) = compile_action(settings, &scope, &layout, &middleware, action, state)?;
        let mut action = action;
        action.nulls_left_out = strict;
        compiled.push(action);
        specs.push(spec);
    }
    let members: Vec<&ActionSpec> = specs.iter().collect();
    if layout.discriminator().is_some() && !without_output_schema {
        check_grouped_output(&name, &members)?;
    }
    let spec = GroupSpec {
        name: &name,
        description: &description,
        title: title.as_deref(),
        icons: &icons,
        actions: &members,
        app: app.as_ref(),
    };
    let tools = published(group_tools(&layout, &spec), strict);
    for (index, action) in compiled.iter_mut().enumerate() {
        let tool = match layout.discriminator() {
            Some(_) => tools.first(),
            None => tools.get(index),
        };
        action.output_schema = tool.is_some_and(|tool| tool.output_schema.is_some());
    }
    if let Some(awareness) = &settings.awareness {
        for (action, block) in compiled.iter_mut().zip(awareness.of_group(layout.discriminator(), &spec, &tools)) {
            action.awareness = block;
        }
    }
    let mut group = CompiledGroup::new(name.clone(), tools, compiled, concurrency);
    group.discriminator = layout.discriminator().map(str::to_owned);
    group.relist = Some(Arc::new(move |admitted: &dyn Fn(&str) -> bool| {
        let members: Vec<&ActionSpec> = specs.iter().filter(|spec| admitted(&spec.name)).collect();
        let spec = GroupSpec {
            name: &name,
            description: &description,
            title: title.as_deref(),
            icons: &icons,
            actions: &members,
            app: app.as_ref(),
        };
        published(group_tools(&layout, &spec), strict)
    }));
    Ok(group)
}

/// Each icon's `src` is an `https:` URL or a `data:` URI: the ones MCP asks clients to accept
/// (a `javascript:` or plain `http:` source is refused by careful clients, or worse, fetched).
pub(super) fn check_icons(of: impl Fn() -> String, icons: &[Icon]) -> Result<(), BuildError> {
    for icon in icons {
        let lower = icon.src.get(..8).unwrap_or(&icon.src).to_ascii_lowercase();
        let allowed = (lower.starts_with("https://") && icon.src.len() > 8) || lower.starts_with("data:");
        if !allowed {
            return Err(BuildError::Icon { of: of(), src: icon.src.chars().take(80).collect() });
        }
    }
    Ok(())
}

/// A grouped tool declares an output schema only when every action returns an object. When
/// some do and another returns `Json` of a list, a string or a number, the schema the author
/// asked for would vanish: refused, with the ways out, unless the group accepts it. An action
/// without a schema of one type (a text, content blocks, `Json<Value>`) is a choice of
/// unstructured output, and only logged.
fn check_grouped_output(group: &str, members: &[&ActionSpec]) -> Result<(), BuildError> {
    let kind = |spec: &ActionSpec| match spec.output.as_ref().and_then(|output| output.get("type")) {
        Some(Value::String(kind)) => Some(kind.clone()),
        _ => None,
    };
    let with: Vec<&ActionSpec> =
        members.iter().copied().filter(|spec| spec.output.as_ref().is_some_and(is_object_schema)).collect();
    if with.is_empty() {
        return Ok(());
    }
    let names =
        |specs: &[&ActionSpec]| specs.iter().map(|spec| format!("{:?}", spec.name)).collect::<Vec<_>>().join(", ");
    let typed: Vec<&ActionSpec> =
        members.iter().copied().filter(|spec| kind(spec).is_some_and(|kind| kind != "object")).collect();
    if typed.is_empty() {
        let untyped: Vec<&ActionSpec> = members.iter().copied().filter(|spec| kind(spec).is_none()).collect();
        if !untyped.is_empty() {
            tracing::warn!(
                group,
                without_schema = names(&untyped),
                "the group's tool declares no outputSchema: some of its actions return objects, these return text or content without one; expose the actions flat for a schema each, or call `Group::without_output_schema()` to say it is meant"
            );
        }
        return Ok(());
    }
    let found = typed
        .iter()
        .map(|spec| format!("{:?} returns {}", spec.name, kind(spec).unwrap_or_default()))
        .collect::<Vec<_>>()
        .join(", ");
    Err(BuildError::OutputSchemaDropped { group: group.to_owned(), with_schema: names(&with), found })
}

/// Each `check_with` names a read-only action of the same group.
fn check_checks<S>(group: &str, actions: &[Action<S>]) -> Result<(), BuildError> {
    for action in actions {
        let Some(check) = action.check_with.as_deref() else { continue };
        let named = check.strip_prefix(group).and_then(|rest| rest.strip_prefix('.')).unwrap_or(check);
        let found = actions.iter().find(|other| other.name == named);
        if found.is_none_or(|other| other.annotations.read_only != Some(true)) {
            return Err(BuildError::CheckWith {
                action: format!("{group}.{}", action.name),
                check: check.to_owned(),
                found: found.is_some(),
            });
        }
    }
    Ok(())
}

/// Compiles one action of a group: its input schema, its checker, its chain.
fn compile_action<S: Send + Sync + 'static>(
    settings: &Settings,
    group: &GroupScope<'_>,
    layout: &Layout,
    middleware: &Layers,
    action: Action<S>,
    state: &Arc<S>,
) -> Result<(CompiledAction, ActionSpec), BuildError> {
    let (qualified, name_at): (Arc<str>, usize) = match layout {
        Layout::Standalone => (action.name.as_str().into(), 0),
        Layout::Exposed(_) => (format!("{}.{}", group.name, action.name).into(), group.name.len() + 1),
    };
    check_icons(|| format!("the action {qualified:?}"), &action.icons)?;
    let handler = action
        .handler
        .as_ref()
        .ok_or_else(|| BuildError::MissingHandler { what: "action", action: qualified.to_string() })?;
    let mut input = input_schema(layout.discriminator(), &qualified, handler.as_ref(), action.strict)?;
    super::param_headers::annotate(&mut input, &action.param_headers, &qualified, layout.discriminator().is_some())?;
    let output = handler.output_schema(&mut output_generator()).map(into_object);
    let checker = Checker::new(&input, action.sensitive.clone(), Formats::Asserted)
        .map_err(|reason| BuildError::Schema { action: qualified.to_string(), reason })?
        .value_free(settings.guards.value_free_errors);
    let guards = guards(settings, group, &GuardSpec::from(&action), &qualified, &input)?;
    let levels = [&settings.middleware, middleware, &action.middleware];
    let chain = assemble(guards, &levels, handler.endpoint(Arc::clone(state)));
    let mut compiled = CompiledAction::new(
        Arc::clone(&qualified),
        name_at,
        Some(checker),
        handler.decoder(),
        chain,
        settings.mask_internal_errors,
    );
    compiled.access = RequireCaller::new(Arc::clone(&qualified), action.require_identity, action.scopes.clone());
    compiled.task = action.task;
    compiled.questions_first = action.questions_first;
    compiled.forgiving_scalars = action.forgiving_scalars.unwrap_or(settings.forgiving_scalars);
    compiled.value_free = settings.guards.value_free_errors;
    compiled.read_only = action.annotations.read_only == Some(true);
    if let Some(Some(replacement)) = &action.deprecated {
        compiled.names_written.push(("replacement", replacement.clone()));
    }
    if let (Layout::Standalone, Some(check)) = (layout, &action.check_with) {
        compiled.names_written.push(("check_with", check.clone()));
    }
    let spec = ActionSpec {
        name: action.name,
        qualified,
        description: action.description,
        title: action.title,
        icons: action.icons,
        annotations: action.annotations,
        input,
        output,
        app: action.app,
    };
    Ok((compiled, spec))
}

/// The input schema the handler's type generates, which must describe an object whose
/// fields do not include the discriminator.
fn input_schema<S>(
    discriminator: Option<&str>,
    qualified: &str,
    handler: &dyn ErasedHandler<S>,
    strict: bool,
) -> Result<Map<String, Value>, BuildError> {
    let generated = into_object(handler.input_schema(&mut input_generator()));
    let input = if strict { close_unknown_keys(generated) } else { generated };
    if !is_object_schema(&input) {
        return Err(BuildError::InputNotObject {
            action: qualified.to_owned(),
            schema: Value::Object(input).to_string(),
        });
    }
    if let Some(field) = discriminator.filter(|d| property_names(&input).iter().any(|p| p == d)) {
        return Err(BuildError::FieldIsDiscriminator { action: qualified.to_owned(), field: field.to_owned() });
    }
    Ok(input)
}

impl<'a, S> From<&'a Action<S>> for GuardSpec<'a> {
    fn from(action: &'a Action<S>) -> GuardSpec<'a> {
        GuardSpec {
            require_identity: action.require_identity,
            scopes: &action.scopes,
            rate_limits: &action.rate_limits,
            deprecated: action.deprecated.as_ref().map(|replacement| replacement.as_deref()),
            deprecated_fields: &action.deprecated_fields,
            timeout: action.timeout,
            idempotent: action.annotations.idempotent == Some(true),
            read_only: action.annotations.read_only == Some(true),
            by_key: action.by_key,
            check_with: action.check_with.as_deref(),
        }
    }
}

/// The built-in guards of one entry, stage by stage in the chain's order.
pub(super) fn guards(
    settings: &Settings,
    group: &GroupScope<'_>,
    asks: &GuardSpec<'_>,
    qualified: &Arc<str>,
    input: &Map<String, Value>,
) -> Result<StageLayers, BuildError> {
    built_in(&GuardedEntry { qualified, input, server: &settings.guards, group, asks })
}

/// MCP clients accept tool names of `A-Z a-z 0-9 _ -`; keeping group and action names to
/// that set keeps every exposition valid.
pub(super) fn check_name(what: &'static str, name: &str) -> Result<(), BuildError> {
    let valid =
        (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        Ok(())
    } else {
        Err(BuildError::InvalidName { what, name: name.to_owned(), allowed: "A-Z a-z 0-9 _ -" })
    }
}
