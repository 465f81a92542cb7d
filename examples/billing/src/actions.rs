//! The `billing` actions: their inputs (whose doc comments are what the model reads), their
//! outputs, and the handlers that turn store outcomes into results or envelopes.

use std::time::Duration;

use chrono::NaiveDate;
use mcp_fusion::middleware::BoxError;
use mcp_fusion::prompt::{ContentBlock, PromptMessage, Role};
use mcp_fusion::resource::ResourceContents;
use mcp_fusion::wire::{FieldPath, ToolError};
use mcp_fusion::{Ctx, Elicited, FieldIssue, Json, Validate, Validated};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::store::{Change, Currency, Invoice, NewInvoice, Status, Store, Totals, Write};

/// The resource of the totals per status.
pub const SUMMARY_URI: &str = "billing://summary";

/// The template of one invoice's resource.
pub const INVOICE_URI_TEMPLATE: &str = "billing://invoices/{id}";

/// Page size when the model sends no `limit`.
const DEFAULT_LIMIT: u32 = 20;

/// Ids are `inv_2026_0001`; the bound keeps a not-found envelope, which repeats the id, within
/// the 50-character echo cut.
const MAX_ID_CHARS: u32 = 40;

/// A cursor is `c` and at most 15 hex digits; the bound keeps the envelope refusing a forged
/// one, which repeats it, within the 50-character echo cut.
const MAX_CURSOR_CHARS: u32 = 16;

/// Keeps amounts far inside `i64` so sums of payments cannot overflow.
const MAX_AMOUNT_CENTS: i64 = 1_000_000_000_000;

/// Arguments of `list_invoices`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ListInvoices {
    /// Only invoices with this status; all when omitted.
    pub status: Option<Status>,
    /// How many invoices per page, 1 to 100 (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page, unchanged; omit it for the first page.
    #[schemars(length(max = MAX_CURSOR_CHARS))]
    pub cursor: Option<String>,
}

/// A page of invoices.
#[derive(Debug, Serialize, JsonSchema)]
pub struct InvoicePage {
    /// The invoices, oldest first.
    pub invoices: Vec<Invoice>,
    /// Pass it as `cursor` to read the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

/// Arguments of `get_invoice`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GetInvoice {
    /// The invoice id, like `inv_2026_0001`.
    #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"), length(max = MAX_ID_CHARS), example = &"inv_2026_0001")]
    pub id: String,
}

/// Arguments of `create_invoice`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CreateInvoice {
    /// The customer's email address, where the invoice is sent.
    #[schemars(email, example = &"ana@example.com")]
    pub customer_email: String,
    /// The invoice total in cents of its currency (1250 = 12.50).
    #[schemars(range(min = 1, max = MAX_AMOUNT_CENTS))]
    pub amount_cents: i64,
    /// The currency of the amount.
    pub currency: Currency,
    /// When payment is due (`2026-01-31`); none when omitted.
    pub due_date: Option<NaiveDate>,
    /// A unique string (like a UUID) for this operation; send the same one when you retry it,
    /// and it takes effect once: the retry returns the first call's result.
    #[schemars(length(min = 1, max = 255))]
    pub idempotency_key: Option<String>,
}

/// Arguments of `pay_invoice`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct PayInvoice {
    /// The invoice id, like `inv_2026_0001`.
    #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"), length(max = MAX_ID_CHARS), example = &"inv_2026_0001")]
    pub id: String,
    /// The payment in cents of the invoice's currency: at most the open balance; partial payments add up.
    #[schemars(range(min = 1, max = MAX_AMOUNT_CENTS))]
    pub amount_cents: i64,
    /// A unique string (like a UUID) for this operation; send the same one when you retry it,
    /// and it takes effect once: the retry returns the first call's result.
    #[schemars(length(min = 1, max = 255))]
    pub idempotency_key: Option<String>,
}

/// Arguments of `void_invoice`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct VoidInvoice {
    /// The invoice id, like `inv_2026_0001`.
    #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"), length(max = MAX_ID_CHARS), example = &"inv_2026_0001")]
    pub id: String,
    /// Why the invoice is voided, kept with it (1 to 200 characters).
    #[schemars(length(min = 1, max = 200), example = &"Duplicate of inv_2026_0002")]
    pub reason: String,
    /// A unique string (like a UUID) for this operation; send the same one when you retry it,
    /// and it takes effect once: the retry returns the first call's result.
    #[schemars(length(min = 1, max = 255))]
    pub idempotency_key: Option<String>,
}

impl Validate for VoidInvoice {
    fn validate(&self) -> Vec<FieldIssue> {
        // The schema counts characters; a reason of spaces passes it but tells nobody anything.
        if !self.reason.trim().is_empty() {
            return Vec::new();
        }
        vec![FieldIssue::new(FieldPath::root().key("reason"), "Blank reason", "a reason in words, like 'Issued twice'")]
    }
}

/// Arguments of `export_invoices`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExportInvoices {
    /// Only invoices with this status; all when omitted.
    pub status: Option<Status>,
}

/// The header of the CSV `export_invoices` writes.
pub const EXPORT_HEADER: &str = "id,customer_email,amount_cents,paid_cents,currency,status,due_date,created_at";

/// Writes every invoice (of `status`, if given) as CSV, oldest first, taking at least `delay`:
/// the demo's long work, run as a task by a client that can. It stops when cancelled.
pub async fn export_invoices(ctx: Ctx<Store>, input: ExportInvoices, delay: Duration) -> Result<String, BoxError> {
    let cancelled = ctx.call().cancellation().clone();
    let work = async {
        let mut csv = format!("{EXPORT_HEADER}\n");
        let mut after = 0;
        loop {
            let page = ctx.state().list(input.status, 100, after).await?;
            for invoice in &page.invoices {
                let due = invoice.due_date.map(|date| date.to_string()).unwrap_or_default();
                let fields = [
                    csv_field(&invoice.id),
                    csv_field(&invoice.customer_email),
                    invoice.amount_cents.to_string(),
                    invoice.paid_cents.to_string(),
                    invoice.currency.as_str().to_owned(),
                    invoice.status.as_str().to_owned(),
                    due,
                    csv_field(&invoice.created_at),
                ];
                csv.push_str(&fields.join(","));
                csv.push('\n');
            }
            match page.next_after {
                Some(next) => after = next,
                None => return Ok::<_, BoxError>(csv),
            }
        }
    };
    let (csv, ()) = tokio::select! {
        done = async { tokio::join!(work, tokio::time::sleep(delay)) } => done,
        () = cancelled.cancelled() => return Err(ToolError::new(mcp_fusion::wire::ErrorCode::cancelled(), "The export was cancelled before it finished; nothing was written.")
            .suggest("Call export_invoices again to export.")
            .into()),
    };
    csv
}

/// A CSV field: quoted when it holds a comma, a quote or a line break (RFC 4180).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text.to_owned() }
}

/// Lists invoices, a page at a time.
pub async fn list_invoices(ctx: Ctx<Store>, input: ListInvoices) -> Result<Json<InvoicePage>, BoxError> {
    let after = match input.cursor.as_deref() {
        None | Some("") => 0,
        Some(cursor) => decode_cursor(cursor).ok_or_else(|| bad_cursor(cursor))?,
    };
    let page = ctx.state().list(input.status, input.limit.unwrap_or(DEFAULT_LIMIT), after).await?;
    Ok(Json(InvoicePage { invoices: page.invoices, next_cursor: page.next_after.map(encode_cursor) }))
}

/// Reads one invoice; a void one comes with a warning, so the model does not try to collect it.
pub async fn get_invoice(ctx: Ctx<Store>, input: GetInvoice) -> Result<Json<Invoice>, BoxError> {
    let Some(invoice) = ctx.state().get(input.id.clone()).await? else {
        return Err(not_found(&input.id).into());
    };
    if invoice.status == Status::Void {
        ctx.warn(
            ToolError::new(
                "INVOICE_VOID",
                format!("Invoice \"{}\" is void: it is kept for the record and cannot be paid.", invoice.id),
            )
            .suggest("Do not ask the customer to pay it; list open invoices instead.")
            .actions(["billing.list_invoices"])
            .detail("void_reason", invoice.void_reason.as_deref().unwrap_or("")),
        );
    }
    Ok(Json(invoice))
}

/// Creates an open invoice.
pub async fn create_invoice(ctx: Ctx<Store>, input: CreateInvoice) -> Result<Json<Invoice>, BoxError> {
    let new = NewInvoice {
        customer_email: input.customer_email,
        amount_cents: input.amount_cents,
        currency: input.currency,
        due_date: input.due_date,
    };
    let invoice = ctx.state().create(new, Write::of(ctx.call())).await?;
    changed(&ctx, &invoice);
    Ok(Json(invoice))
}

/// Records a (partial) payment.
pub async fn pay_invoice(ctx: Ctx<Store>, input: PayInvoice) -> Result<Json<Invoice>, BoxError> {
    let amount = input.amount_cents;
    match ctx.state().pay(input.id.clone(), amount, Write::of(ctx.call())).await? {
        Change::Applied(invoice) => {
            // In the call's span, which names the action and the session; no customer data.
            tracing::info!(status = ?invoice.status, "payment recorded");
            changed(&ctx, &invoice);
            Ok(Json(invoice))
        }
        Change::NotFound => Err(not_found(&input.id).into()),
        Change::NotOpen(invoice) => Err(not_open(&invoice, "paid").into()),
        Change::ExceedsBalance(invoice) => {
            let open = invoice.open_balance_cents();
            let currency = invoice.currency.as_str();
            Err(ToolError::validation(format!(
                "A payment of {amount} cents exceeds the open balance of invoice \"{}\" ({open} {currency} cents).",
                invoice.id
            ))
            .suggest(format!("Pay at most {open} cents: call again with amount_cents {open} or less."))
            .detail("amount_cents", amount)
            .detail("open_balance_cents", open)
            .into())
        }
    }
}

/// From this amount on (in cents), `void_invoice` asks the user to confirm before it voids.
pub const CONFIRM_VOID_CENTS: i64 = 100_000;

/// The form `void_invoice` shows the user before it voids a large invoice.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ConfirmVoid {
    /// Tick to void the invoice for good.
    pub confirm: bool,
}

/// Voids an open invoice; one of [`CONFIRM_VOID_CENTS`] or more only once the user confirmed.
pub async fn void_invoice(ctx: Ctx<Store>, input: Validated<VoidInvoice>) -> Result<Json<Invoice>, BoxError> {
    let Validated(input) = input;
    // Asked before the write, from a read that runs again in every round of the question.
    if let Some(invoice) = ctx.state().get(input.id.clone()).await?
        && invoice.status == Status::Open
        && invoice.amount_cents >= CONFIRM_VOID_CENTS
    {
        let question = format!(
            "Void invoice {} of {}.{:02} {} billed to {} for good? Reason given: {}",
            invoice.id,
            invoice.amount_cents / 100,
            invoice.amount_cents % 100,
            invoice.currency.as_str(),
            invoice.customer_email,
            mcp_fusion::wire::echo(input.reason.trim()),
        );
        match ctx.elicit::<ConfirmVoid>(question).key("confirm_void").await? {
            Elicited::Accepted(ConfirmVoid { confirm: true }) => {}
            other => return Err(other.refusal(ctx.action()).detail("invoice_id", &invoice.id).into()),
        }
    }
    match ctx.state().void(input.id.clone(), input.reason.trim().to_owned(), Write::of(ctx.call())).await? {
        Change::Applied(invoice) => {
            changed(&ctx, &invoice);
            Ok(Json(invoice))
        }
        Change::NotFound => Err(not_found(&input.id).into()),
        // A void moves no money, so the store never reports an exceeded balance for it.
        Change::NotOpen(invoice) | Change::ExceedsBalance(invoice) => Err(not_open(&invoice, "voided").into()),
    }
}

/// The totals per status and currency (`billing://summary`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct Summary {
    /// One entry per status and currency that has invoices.
    pub totals: Vec<Totals>,
}

/// Reads the totals per status and currency.
pub async fn summary(ctx: Ctx<Store>) -> Result<Json<Summary>, BoxError> {
    Ok(Json(Summary { totals: ctx.state().summary().await? }))
}

/// How firm a dunning letter is.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Tone {
    /// A first, kind reminder.
    Friendly,
    /// A last reminder before further steps.
    Firm,
}

/// Arguments of the `dunning_letter` prompt.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DunningLetter {
    /// The open invoice to remind the customer of, like `inv_2026_0002`.
    #[schemars(regex(pattern = r"^inv_[a-z0-9_]+$"), length(max = MAX_ID_CHARS))]
    pub id: String,
    /// How firm the letter is: `friendly` or `firm`.
    pub tone: Tone,
}

/// The `dunning_letter` prompt: what to write, with the invoice as it stands now.
pub async fn dunning_letter(ctx: Ctx<Store>, args: DunningLetter) -> Result<Vec<PromptMessage>, BoxError> {
    let Some(invoice) = ctx.state().get(args.id.clone()).await? else {
        return Err(not_found(&args.id).into());
    };
    if invoice.status != Status::Open {
        return Err(not_open(&invoice, "dunned").into());
    }
    let open = invoice.open_balance_cents();
    let (currency, due) = (invoice.currency.as_str(), invoice.due_date.map(|d| d.to_string()));
    let tone = match args.tone {
        Tone::Friendly => "a friendly reminder: assume the customer simply forgot, and thank them",
        Tone::Firm => {
            "a firm last reminder: state the amount and a payment deadline of 7 days, and that further steps follow"
        }
    };
    let instructions = format!(
        "Write a payment reminder e-mail to {} about invoice {}: {open} {currency} cents are open{}. Make it {tone}. \
         Use only the figures of the invoice below; do not invent any.",
        invoice.customer_email,
        invoice.id,
        due.map(|due| format!(", due {due}")).unwrap_or_default(),
    );
    let uri = INVOICE_URI_TEMPLATE.replace("{id}", &invoice.id);
    let json = serde_json::to_string(&invoice)?;
    Ok(vec![
        PromptMessage::new_text(Role::User, instructions),
        PromptMessage::new(
            Role::User,
            ContentBlock::resource(ResourceContents::text(json, uri).with_mime_type("application/json")),
        ),
    ])
}

/// Tells the subscribers of the invoice's resource and of the summary that they changed.
fn changed(ctx: &Ctx<Store>, invoice: &Invoice) {
    ctx.call().resource_updated(&INVOICE_URI_TEMPLATE.replace("{id}", &invoice.id));
    ctx.call().resource_updated(SUMMARY_URI);
}

/// The one answer to an unknown id, whichever action was asked.
fn not_found(id: &str) -> ToolError {
    ToolError::not_found(format!("No invoice with id \"{id}\"."))
        .suggest("List invoices first, then retry with a real ID.")
        .actions(["billing.list_invoices"])
        .detail("requestedId", id)
}

/// A paid or void invoice is final: neither payments nor a void apply to it.
fn not_open(invoice: &Invoice, verb: &str) -> ToolError {
    let status = invoice.status.as_str();
    ToolError::conflict(format!("Invoice \"{}\" is {status} and cannot be {verb}.", invoice.id))
        .suggest(format!(
            "Do not retry: a {status} invoice is final. Tell the user, or pick an open invoice with billing.list_invoices (status \"open\")."
        ))
        .actions(["billing.get_invoice", "billing.list_invoices"])
        .detail("id", &invoice.id)
        .detail("status", status)
}

fn bad_cursor(cursor: &str) -> ToolError {
    // The cursor is the caller's text: echoed by the one echo rule (quoted, cut, escaped).
    let echoed = mcp_fusion::wire::Sent::text(cursor);
    ToolError::validation(format!("The cursor {echoed} was not issued by billing.list_invoices."))
        .suggest("Omit \"cursor\" to read the first page, or pass the next_cursor of the previous page unchanged.")
        .actions(["billing.list_invoices"])
        .detail("cursor", echoed.as_str())
}

/// Cursors are `c` and a position in hex: opaque to the model, cheap to check.
fn encode_cursor(after: i64) -> String {
    format!("c{after:x}")
}

fn decode_cursor(cursor: &str) -> Option<i64> {
    let hex = cursor.strip_prefix('c')?;
    if hex.is_empty() || hex.len() > 15 || !hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    i64::from_str_radix(hex, 16).ok().filter(|&after| after > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_reject_anything_else() {
        for after in [1, 6, 255, 1 << 40] {
            assert_eq!(decode_cursor(&encode_cursor(after)), Some(after));
        }
        for bad in ["", "c", "c0", "6", "cG", "c-1", "cFF", "c+1", "c1234567890abcdef", "page2"] {
            assert_eq!(decode_cursor(bad), None, "{bad}");
        }
    }
}
