//! The MCP Fusion demo server: invoices in a SQLite file behind one tool, `billing`, whose
//! every failure reaches the model as an envelope it can act on.
//!
//! The binary (`billing-server`) parses flags and serves stdio; this library builds the same
//! server in process, so tests can call it without a transport.

mod actions;
mod store;

pub use actions::{
    CreateInvoice, EXPORT_HEADER, ExportInvoices, GetInvoice, InvoicePage, ListInvoices, PayInvoice, VoidInvoice,
};
pub use actions::{DunningLetter, INVOICE_URI_TEMPLATE, SUMMARY_URI, Summary, Tone};
pub use store::{Currency, Invoice, SCHEMA_VERSION, Status, Store, StoreError, Totals, Write};

use std::time::Duration;

use mcp_fusion::apps::App;
use mcp_fusion::contract::Lockfile;
use mcp_fusion::guard::{Concurrency, FailurePolicy, Idempotency, MemoryKeys, RateLimit, RedisStore};
use mcp_fusion::prompt::Prompt;
use mcp_fusion::resource::{Resource, ResourceTemplate, SubscriptionLimits};
use mcp_fusion::skill::Skill;
use mcp_fusion::task::{TaskSupport, Tasks};
use mcp_fusion::{Action, BuildError, Exposition, FusionServer, Group};

/// How the server behaves beyond its data; one field per command-line switch.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Replace the text of internal errors by an incident id (the details go to the log), or
    /// show it; `None` keeps the framework's default (masked in release builds).
    pub mask_internal_errors: Option<bool>,
    /// Calls of the `billing` tool running at once, and waiting in line; the rest are shed.
    pub concurrency: Option<Concurrency>,
    /// Calls per window, per session, across all actions.
    pub rate_limit: Option<RateLimit>,
    /// How long an action may run before it fails with `TIMEOUT`.
    pub timeout: Option<Duration>,
    /// Refuse anonymous calls (set when HTTP requires a bearer token).
    pub require_identity: bool,
    /// Count the rate limit and keep idempotency keys in this Redis, shared by every replica
    /// using it (default: this process's memory).
    pub redis: Option<RedisStore>,
    /// When the store cannot answer: admit or refuse, and how long to wait for it.
    pub rate_limit_failure: Option<(FailurePolicy, Duration)>,
    /// The known-good contracts: changes since are told to the model in validation errors.
    pub lockfile: Option<Lockfile>,
    /// How many idempotency keys memory keeps without Redis (0: the framework's default).
    /// The database keeps every write's key too, so memory is only a cache in front of it.
    pub idempotency_keys: usize,
    /// What clients may hold of resource subscriptions.
    pub subscription_limits: SubscriptionLimits,
    /// Every entry asks for a scope: [`READ_SCOPE`] to list and read invoices, the summary,
    /// the invoice resources and the prompt, [`WRITE_SCOPE`] to create, pay and void (set when
    /// HTTP checks OAuth access tokens).
    pub scopes: bool,
    /// How long the user's answer to a question (`void_invoice`'s confirmation) is taken on
    /// MCP 2026-07-28 (default: the framework's 10 minutes).
    pub request_state_ttl: Option<Duration>,
    /// How long `export_invoices` takes at least (default [`DEFAULT_EXPORT_DELAY`]).
    pub export_delay: Option<Duration>,
    /// How long a replica vouches for a task it runs before renewing (default: the
    /// framework's 30 s); a task whose replica died reads `failed` once it lapsed.
    pub task_lease: Option<Duration>,
    /// One tool per action (`billing_list_invoices`, …) instead of the one grouped `billing`
    /// tool.
    pub flat: bool,
    /// Publish every tool's input schema in the strict subset OpenAI's and Anthropic's strict
    /// tool use accept (the server still checks the full schema).
    pub strict_schemas: bool,
    /// No error repeats a value the caller sent: only field names, declared constraints and
    /// allowed values.
    pub value_free_errors: bool,
    /// Refuse a string that spells a number or a boolean (`"200"`) instead of reading it
    /// with a warning.
    pub no_forgiving_scalars: bool,
}

/// How long `export_invoices` takes at least, by default: long enough to be worth a task.
pub const DEFAULT_EXPORT_DELAY: Duration = Duration::from_secs(3);

/// The scope that reads: `list_invoices`, `get_invoice`, the resources, the prompt.
pub const READ_SCOPE: &str = "billing:read";

/// The scope that writes: `create_invoice`, `pay_invoice`, `void_invoice`.
pub const WRITE_SCOPE: &str = "billing:write";

/// The app hosts render an invoice in (MCP Apps): the actions that return one invoice link
/// to it, and so does the grouped `billing` tool.
pub const INVOICE_VIEW: &str = "ui://billing/invoice-view";

/// The invoice view: its page, and the sandbox it asks for (none beyond the host's own).
pub fn invoice_view() -> App {
    App::new(INVOICE_VIEW, "invoice_view", include_str!("../apps/invoice-view.html"))
        .title("Invoice")
        .description("One invoice of the demo company: amount, what is paid and what is open; opens another by id.")
        .prefers_border(true)
}

/// The URI of the skill the server ships: how to chase an unpaid invoice with its actions.
pub const CHASE_SKILL_URI: &str = "skill://chase-unpaid-invoice/SKILL.md";

/// The skill `chase-unpaid-invoice`, its files embedded so the server serves them from any
/// working directory.
pub fn chase_unpaid_invoice() -> Skill {
    Skill::new("chase-unpaid-invoice", include_str!("../skills/chase-unpaid-invoice/SKILL.md")).file(
        "references/reminder-email.md",
        include_str!("../skills/chase-unpaid-invoice/references/reminder-email.md"),
    )
}

/// Builds the `billing` server over `store`.
pub fn server(store: Store, options: &Options) -> Result<FusionServer, BuildError> {
    // With scopes on, reads ask for one scope and writes for the other.
    let (read_scope, write_scope) = if options.scopes { (Some(READ_SCOPE), Some(WRITE_SCOPE)) } else { (None, None) };
    let read = |action: Action<Store>| asking(action, read_scope, |action, scope| action.scope(scope));
    let write = |action: Action<Store>| asking(action, write_scope, |action, scope| action.scope(scope));
    let export_delay = options.export_delay.unwrap_or(DEFAULT_EXPORT_DELAY);
    let billing = Group::new(
        "billing",
        "Invoices of the demo company: list and read them, create new ones, record payments and void open ones. \
         Amounts are integer cents of the invoice's currency.",
    )
    .title("Billing")
    // `export_invoices` returns CSV text, so the tool declares no output schema; the other
    // actions' structured content still describes itself in each result.
    .without_output_schema()
    .action(read(
        Action::new("list_invoices", "List invoices, oldest first, `limit` at a time, filtered by `status`; returns the page and a `next_cursor` to send as `cursor` for the next.")
            .read_only()
            .handler(actions::list_invoices),
    ))
    .action(read(
        Action::new("get_invoice", "Read one invoice by `id`; returns it with what is paid and what is open.")
            .read_only()
            .app(INVOICE_VIEW)
            .handler(actions::get_invoice),
    ))
    .action(write(
        Action::new(
            "create_invoice",
            "Create an open invoice of `amount_cents` in `currency` for `customer_email`, due on `due_date`: writes a new invoice and returns it with its id. Send an `idempotency_key` so a retry cannot create it twice.",
        )
        .idempotent_by_key()
        .check_with("list_invoices")
        .app(INVOICE_VIEW)
        .handler(actions::create_invoice),
    ))
    .action(write(
        Action::new(
            "pay_invoice",
            "Record a payment of `amount_cents` on the open invoice `id`; partial payments add up and the invoice is paid when nothing is left. Returns the invoice as it stands.",
        )
        .idempotent_by_key()
        .check_with("get_invoice")
        .app(INVOICE_VIEW)
        .handler(actions::pay_invoice),
    ))
    .action(write(
        Action::new(
            "void_invoice",
            "Void the open invoice `id` for good, with a `reason`; returns the voided invoice. Paid invoices cannot be voided; one of 1000.00 or more is voided only once the user confirms it.",
        )
            .destructive()
            .idempotent_by_key()
            .check_with("get_invoice")
            .app(INVOICE_VIEW)
            .handler(actions::void_invoice),
    ))
    .action(read(
        Action::new(
            "export_invoices",
            "Export invoices as CSV (all, or those of one `status`), oldest first; returns the CSV text. It takes a few seconds: a client that supports tasks gets a task to poll.",
        )
        .read_only()
        .task(TaskSupport::Optional)
        .handler(move |ctx, input| actions::export_invoices(ctx, input, export_delay)),
    ));
    let billing = match options.concurrency {
        Some(limits) => billing.concurrency(limits),
        None => billing,
    };
    let mut builder = FusionServer::builder("billing-server", env!("CARGO_PKG_VERSION"));
    if let Some(mask) = options.mask_internal_errors {
        builder = builder.mask_internal_errors(mask);
    }
    if options.flat {
        builder = builder.exposition(Exposition::flat());
    }
    builder = builder
        .strict_schemas(options.strict_schemas)
        .value_free_errors(options.value_free_errors)
        .forgiving_scalars(!options.no_forgiving_scalars);
    if let Some(limit) = &options.rate_limit {
        builder = builder.rate_limit(limit.clone());
    }
    let mut tasks = Tasks::new();
    if let Some(lease) = options.task_lease {
        tasks = tasks.lease(lease);
    }
    builder = match &options.redis {
        Some(store) => builder
            .rate_limit_store(store.clone())
            .idempotency(Idempotency::new().store(store.clone()))
            .tasks(tasks.store(store.clone())),
        // Every write keeps its key and binding in its own transaction (see `Store`), so a key
        // memory forgets is still refused or replayed from the database.
        None => {
            let capacity = if options.idempotency_keys == 0 { 100_000 } else { options.idempotency_keys };
            builder.idempotency(Idempotency::new().store(MemoryKeys::new(capacity).evict_when_full())).tasks(tasks)
        }
    };
    if let Some((policy, timeout)) = options.rate_limit_failure {
        builder = builder.rate_limit_failure(policy, timeout);
    }
    if let Some(lockfile) = &options.lockfile {
        builder = builder.contract_lockfile(lockfile.clone());
    }
    if let Some(timeout) = options.timeout {
        builder = builder.timeout(timeout);
    }
    if let Some(ttl) = options.request_state_ttl {
        builder = builder.request_state_ttl(ttl);
    }
    builder
        .subscription_limits(options.subscription_limits)
        .requires_identity(options.require_identity)
        .instructions(
            "Billing demo. Call tool \"billing\" with \"action\" set to one of its actions. \
             When a call fails, read the envelope: follow its recovery and available actions. \
             To chase an unpaid invoice, follow the skill skill://chase-unpaid-invoice/SKILL.md.",
        )
        .group(billing)
        .app(invoice_view())
        .skill(chase_unpaid_invoice())
        .resource(asking(
            Resource::new(SUMMARY_URI, "summary")
                .title("Billing summary")
                .description("How many invoices there are per status and currency, what they bill and what is paid. Subscribe to hear when it changes.")
                .handler(actions::summary),
            read_scope,
            |resource, scope| resource.scope(scope),
        ))
        .resource_template(asking(
            ResourceTemplate::new(INVOICE_URI_TEMPLATE, "invoice")
                .title("Invoice")
                .description("One invoice as JSON, by id (like inv_2026_0001), with what is paid and what is open.")
                .handler(actions::get_invoice),
            read_scope,
            |template, scope| template.scope(scope),
        ))
        .prompt(asking(
            Prompt::new(
                "dunning_letter",
                "A payment reminder for one open invoice, friendly or firm, written from the invoice as it stands.",
            )
            .title("Dunning letter")
            .timeout(Duration::from_secs(2))
            .handler(actions::dunning_letter),
            read_scope,
            |prompt, scope| prompt.scope(scope),
        ))
        .build(store)
}

/// `entry` asking for `scope`, when there is one.
fn asking<T>(entry: T, scope: Option<&'static str>, ask: impl FnOnce(T, &'static str) -> T) -> T {
    match scope {
        Some(scope) => ask(entry, scope),
        None => entry,
    }
}
