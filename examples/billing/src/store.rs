//! Invoices in a SQLite file: opening, schema migrations, the demo seed, and the queries the
//! actions need.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{Datelike as _, NaiveDate, SecondsFormat, Utc};
use mcp_fusion::CommitGate;
use mcp_fusion::guard::{IdempotencyKey, KeyBinding};
use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension as _, Row, Transaction, TransactionBehavior, params,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Each entry moves the schema one version up; `PRAGMA user_version` records how many ran.
/// Append only: a released step never changes.
const MIGRATIONS: &[&str] = &[
    "CREATE TABLE invoices (
        seq            INTEGER PRIMARY KEY,
        id             TEXT    NOT NULL UNIQUE,
        customer_email TEXT    NOT NULL,
        amount_cents   INTEGER NOT NULL CHECK (amount_cents >= 1),
        paid_cents     INTEGER NOT NULL DEFAULT 0 CHECK (paid_cents >= 0 AND paid_cents <= amount_cents),
        currency       TEXT    NOT NULL CHECK (currency IN ('EUR', 'USD', 'BRL')),
        status         TEXT    NOT NULL CHECK (status IN ('open', 'paid', 'void')),
        due_date       TEXT,
        created_at     TEXT    NOT NULL,
        void_reason    TEXT
    );
    CREATE INDEX invoices_by_status ON invoices (status, seq);",
    // The idempotency key of each write made with one, committed with the write: a retry
    // after a crash, when the server's memory of keys is gone, finds it here.
    "CREATE TABLE idempotency_keys (
        action     TEXT NOT NULL,
        key        TEXT NOT NULL,
        invoice_id TEXT NOT NULL,
        PRIMARY KEY (action, key)
    ) WITHOUT ROWID;",
    // What each key is bound to: the digests of the caller's scope and of the arguments, so a
    // key sent again by another caller, or with other arguments, is refused instead of
    // answered with this write. A key kept under an earlier version of the schema has neither:
    // nothing says whose it is, so it is refused to everyone.
    "ALTER TABLE idempotency_keys ADD COLUMN scope TEXT;
    ALTER TABLE idempotency_keys ADD COLUMN arguments TEXT;",
];

/// How many times a query SQLite answered "busy" or "locked" runs again, each after a longer
/// pause (10 ms, then 20, 40, 80, 160): on top of the busy timeout, which covers most waits,
/// this covers the ones SQLite reports at once.
const BUSY_RETRIES: u32 = 5;

/// How long a query waits for another connection's write lock (another server on the file).
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Why the store failed. Handlers pass it on as a plain error, so the model sees it as an
/// `INTERNAL_ERROR`, never as something it could fix by changing its arguments.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file could not be opened or is not a usable SQLite database.
    #[error("cannot use {path} as the billing database: {reason}")]
    Open {
        /// The file given.
        path: PathBuf,
        /// What SQLite said.
        reason: String,
    },
    /// The file was written by a newer build with a schema this one does not know.
    #[error(
        "the database {path} has schema version {found}, newer than this server's {SCHEMA_VERSION}: upgrade billing-server"
    )]
    TooNew {
        /// The file given.
        path: PathBuf,
        /// Its `user_version`.
        found: i64,
    },
    /// A query failed. The SQLite message is part of the text (not a source) so the
    /// wrapped envelope says what happened without repeating it in the log chain.
    #[error("database error: {0}")]
    Sqlite(rusqlite::Error),
    /// A stored value does not fit the model (the file was edited by hand).
    #[error("corrupt invoice row: {0}")]
    Corrupt(String),
    /// The blocking task running the query died.
    #[error("database task failed: {0}")]
    Task(String),
    /// The call was answered (timed out, or cancelled) before its write committed, so the
    /// write was rolled back.
    #[error("the call was answered before its write committed; the write was rolled back")]
    Abandoned,
    /// The call's idempotency key was kept with an earlier write of another caller or other
    /// arguments; nothing was written. The envelope travels as the error's source, so the
    /// model gets it unchanged.
    #[error("the idempotency key is bound to another request")]
    KeyConflict(#[source] mcp_fusion::wire::ToolError),
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> StoreError {
        StoreError::Sqlite(error)
    }
}

/// Where an invoice stands: `open` (waiting for payment), `paid` (fully paid) or `void`
/// (cancelled, never to be paid).
// Variant doc comments would turn the schema's compact `enum` into a longer `oneOf` of
// `const`s; the serde names speak for themselves.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Paid,
    Void,
}

impl Status {
    /// The stored (and serialized) name.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Paid => "paid",
            Status::Void => "void",
        }
    }

    fn parse(text: &str) -> Option<Status> {
        [Status::Open, Status::Paid, Status::Void].into_iter().find(|s| s.as_str() == text)
    }
}

/// The currencies the demo bills in, as ISO 4217 codes: `EUR`, `USD`, `BRL`.
// No variant docs, for the same reason as `Status`.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Currency {
    Eur,
    Usd,
    Brl,
}

impl Currency {
    /// The ISO 4217 code, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Currency::Eur => "EUR",
            Currency::Usd => "USD",
            Currency::Brl => "BRL",
        }
    }

    fn parse(text: &str) -> Option<Currency> {
        [Currency::Eur, Currency::Usd, Currency::Brl].into_iter().find(|c| c.as_str() == text)
    }
}

/// One invoice, as the actions return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Invoice {
    /// The invoice id, like `inv_2026_0001`.
    pub id: String,
    /// Who is billed.
    pub customer_email: String,
    /// The billed amount, in cents of `currency`.
    pub amount_cents: i64,
    /// What has been paid so far, in cents.
    pub paid_cents: i64,
    /// The currency of both amounts.
    pub currency: Currency,
    /// Where the invoice stands.
    pub status: Status,
    /// When payment is due, if a date was set.
    pub due_date: Option<NaiveDate>,
    /// When the invoice was created (RFC 3339, UTC).
    pub created_at: String,
    /// Why the invoice was voided, when it was.
    pub void_reason: Option<String>,
}

impl Invoice {
    /// What is left to pay, in cents.
    pub fn open_balance_cents(&self) -> i64 {
        self.amount_cents - self.paid_cents
    }
}

/// A new invoice's fields.
#[derive(Debug, Clone)]
pub struct NewInvoice {
    /// Who is billed.
    pub customer_email: String,
    /// The amount, in cents (at least 1).
    pub amount_cents: i64,
    /// The currency.
    pub currency: Currency,
    /// When payment is due.
    pub due_date: Option<NaiveDate>,
}

/// What a write needs of its call: the commit gate, and the idempotency key if it came with one.
#[derive(Debug, Clone, Default)]
pub struct Write {
    /// Commits only if the call was not answered (timed out, cancelled) first.
    pub gate: CommitGate,
    /// The call's idempotency key and what it is bound to: a write already made under it by
    /// the same caller with the same arguments is not made again, and one made by another
    /// caller or with other arguments refuses the call.
    pub key: Option<IdempotencyKey>,
}

impl Write {
    /// The gate and the key of `call`.
    pub fn of(call: &mcp_fusion::CallInfo) -> Write {
        Write { gate: call.commit_gate(), key: call.idempotency().cloned() }
    }
}

/// One page of invoices, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The invoices of the page.
    pub invoices: Vec<Invoice>,
    /// The position after the last invoice, when more follow.
    pub next_after: Option<i64>,
}

/// The invoices of one status in one currency, summed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Totals {
    /// Their status.
    pub status: Status,
    /// Their currency.
    pub currency: Currency,
    /// How many there are.
    pub invoices: i64,
    /// What they bill, in cents.
    pub amount_cents: i64,
    /// What is paid of it, in cents.
    pub paid_cents: i64,
}

/// What came of a payment or a void: checked and applied in one transaction, so two calls
/// racing on the same invoice cannot both succeed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Applied; the invoice as it is now.
    Applied(Invoice),
    /// No invoice has that id.
    NotFound,
    /// The invoice is not open (paid or void); nothing changed.
    NotOpen(Invoice),
    /// The payment is larger than the open balance; nothing changed.
    ExceedsBalance(Invoice),
}

/// The billing database: one SQLite connection for writes, shared by every call (SQLite
/// serialises writers anyway), and a few read-only connections for reads. In WAL mode a
/// reader never waits for a writer, so a read runs at once on the calling thread: a
/// primary-key read takes a few µs, less than the hop to the blocking pool that a write takes.
#[derive(Debug, Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    readers: Arc<[Mutex<Connection>]>,
}

impl Store {
    /// Opens (creating if needed) the database at `path`, migrates it to the current schema,
    /// and seeds the demo invoices when it holds none.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_error = |error: rusqlite::Error| StoreError::Open { path: path.to_owned(), reason: error.to_string() };
        if path.is_dir() {
            return Err(StoreError::Open { path: path.to_owned(), reason: "it is a directory, not a file".into() });
        }
        let mut conn = Connection::open(path).map_err(open_error)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_error)?;
        // SQLite opens lazily: reading the header here turns "not a database" into an open error.
        let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0)).map_err(open_error)?;
        // Readers never wait for a writer, and two servers on one file take turns writing.
        let mode: String =
            conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0)).map_err(open_error)?;
        if !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(db = %path.display(), "SQLite kept journal mode {mode:?}: writers of two servers may wait longer");
        }
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew { path: path.to_owned(), found: version });
        }
        migrate(&mut conn, version).map_err(open_error)?;
        seed(&mut conn).map_err(open_error)?;
        let readers = std::thread::available_parallelism().map_or(2, |cores| cores.get().min(4));
        let readers = (0..readers)
            .map(|_| {
                // No busy timeout: a reader that would wait hands its read to the writer's path.
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                Connection::open_with_flags(path, flags).map(Mutex::new).map_err(open_error)
            })
            .collect::<Result<Arc<[_]>, _>>()?;
        Ok(Store { conn: Arc::new(Mutex::new(conn)), readers })
    }

    /// Runs the read `f` at once on a free reader connection; when every reader is taken, or
    /// SQLite answers "busy" (not in WAL mode, say), as a write runs.
    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Fn(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        for reader in self.readers.iter() {
            // A poisoned reader is skipped like a taken one: the writer's path still serves.
            let Ok(mut conn) = reader.try_lock() else { continue };
            match f(&mut conn) {
                Err(StoreError::Sqlite(error)) if is_busy(&error) => break,
                done => return done,
            }
        }
        self.run(f).await
    }

    /// Runs `f` on the connection in a blocking task, so SQLite never stalls the runtime;
    /// again, a few times, while SQLite answers "busy" (another server writing).
    async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Fn(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            // A panic mid-query rolled its transaction back on unwind; the connection is fine.
            let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
            let mut pause = Duration::from_millis(10);
            for _ in 0..BUSY_RETRIES {
                match f(&mut conn) {
                    Err(StoreError::Sqlite(error)) if is_busy(&error) => {
                        tracing::debug!("SQLite is busy ({error}); trying again in {} ms", pause.as_millis());
                        std::thread::sleep(pause);
                        pause *= 2;
                    }
                    done => return done,
                }
            }
            f(&mut conn)
        })
        .await
        .map_err(|error| StoreError::Task(error.to_string()))?
    }

    /// Up to `limit` invoices after position `after` (0 = from the start), optionally of
    /// one status.
    pub async fn list(&self, status: Option<Status>, limit: u32, after: i64) -> Result<Page, StoreError> {
        self.read(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT seq, id, customer_email, amount_cents, paid_cents, currency, status, due_date, created_at, void_reason
                 FROM invoices WHERE seq > ?1 AND (?2 IS NULL OR status = ?2) ORDER BY seq LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![after, status.map(Status::as_str), i64::from(limit) + 1], |row| {
                Ok((row.get::<_, i64>(0)?, read_invoice(row)))
            })?;
            let mut invoices = Vec::new();
            let mut last = None;
            let mut more = false;
            for row in rows {
                let (seq, invoice) = row?;
                if invoices.len() == limit as usize {
                    more = true;
                    break;
                }
                invoices.push(invoice?);
                last = Some(seq);
            }
            Ok(Page { invoices, next_after: if more { last } else { None } })
        })
        .await
    }

    /// The totals per status and currency, in that order.
    pub async fn summary(&self) -> Result<Vec<Totals>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT status, currency, COUNT(*), SUM(amount_cents), SUM(paid_cents)
                 FROM invoices GROUP BY status, currency ORDER BY status, currency",
            )?;
            let rows = stmt.query_map([], |row| {
                let status: String = row.get(0)?;
                let currency: String = row.get(1)?;
                Ok((status, currency, row.get(2)?, row.get(3)?, row.get(4)?))
            })?;
            let mut totals = Vec::new();
            for row in rows {
                let (status, currency, invoices, amount_cents, paid_cents) = row?;
                let corrupt = |what: String| StoreError::Corrupt(format!("totals: {what}"));
                totals.push(Totals {
                    status: Status::parse(&status).ok_or_else(|| corrupt(format!("unknown status {status:?}")))?,
                    currency: Currency::parse(&currency)
                        .ok_or_else(|| corrupt(format!("unknown currency {currency:?}")))?,
                    invoices,
                    amount_cents,
                    paid_cents,
                });
            }
            Ok(totals)
        })
        .await
    }

    /// The invoice with this id, if there is one.
    pub async fn get(&self, id: String) -> Result<Option<Invoice>, StoreError> {
        self.read(move |conn| find(conn, &id)).await
    }

    /// Creates an invoice with the next id of the sequence.
    ///
    /// It commits only if `gate` lets it: a call already answered with `TIMEOUT` rolls back.
    pub async fn create(&self, new: NewInvoice, call: Write) -> Result<Invoice, StoreError> {
        self.run(move |conn| {
            let tx = write(conn, &call.gate)?;
            if let Some(made) = keyed(&tx, "create_invoice", call.key.as_ref())? {
                return Ok(made);
            }
            let now = Utc::now();
            let seq: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM invoices", [], |row| row.get(0))?;
            let id = invoice_id(now.year(), seq);
            insert(
                &tx,
                &NewRow {
                    seq,
                    id: &id,
                    customer_email: &new.customer_email,
                    amount_cents: new.amount_cents,
                    paid_cents: 0,
                    currency: new.currency,
                    status: Status::Open,
                    due_date: new.due_date,
                    created_at: &now.to_rfc3339_opts(SecondsFormat::Secs, true),
                    void_reason: None,
                },
            )?;
            let invoice = find(&tx, &id)?.ok_or_else(|| StoreError::Corrupt(format!("{id} vanished after insert")))?;
            remember(&tx, "create_invoice", call.key.as_ref(), &id)?;
            commit(tx, &call.gate)?;
            Ok(invoice)
        })
        .await
    }

    /// Records a payment of `amount_cents`; the invoice becomes paid when nothing is left.
    /// It commits only if `gate` lets it.
    pub async fn pay(&self, id: String, amount_cents: i64, call: Write) -> Result<Change, StoreError> {
        self.run(move |conn| {
            let tx = write(conn, &call.gate)?;
            if let Some(paid) = keyed(&tx, "pay_invoice", call.key.as_ref())? {
                return Ok(Change::Applied(paid));
            }
            let Some(invoice) = find(&tx, &id)? else { return Ok(Change::NotFound) };
            if invoice.status != Status::Open {
                return Ok(Change::NotOpen(invoice));
            }
            if amount_cents > invoice.open_balance_cents() {
                return Ok(Change::ExceedsBalance(invoice));
            }
            tx.execute(
                "UPDATE invoices SET paid_cents = paid_cents + ?2,
                     status = CASE WHEN paid_cents + ?2 >= amount_cents THEN 'paid' ELSE status END
                 WHERE id = ?1",
                params![id, amount_cents],
            )?;
            let invoice = find(&tx, &id)?.ok_or_else(|| StoreError::Corrupt(format!("{id} vanished on payment")))?;
            remember(&tx, "pay_invoice", call.key.as_ref(), &id)?;
            commit(tx, &call.gate)?;
            Ok(Change::Applied(invoice))
        })
        .await
    }

    /// Voids an open invoice, keeping the reason. It commits only if `gate` lets it.
    pub async fn void(&self, id: String, reason: String, call: Write) -> Result<Change, StoreError> {
        self.run(move |conn| {
            let tx = write(conn, &call.gate)?;
            if let Some(voided) = keyed(&tx, "void_invoice", call.key.as_ref())? {
                return Ok(Change::Applied(voided));
            }
            let Some(invoice) = find(&tx, &id)? else { return Ok(Change::NotFound) };
            if invoice.status != Status::Open {
                return Ok(Change::NotOpen(invoice));
            }
            tx.execute("UPDATE invoices SET status = 'void', void_reason = ?2 WHERE id = ?1", params![id, reason])?;
            let invoice = find(&tx, &id)?.ok_or_else(|| StoreError::Corrupt(format!("{id} vanished on void")))?;
            remember(&tx, "void_invoice", call.key.as_ref(), &id)?;
            commit(tx, &call.gate)?;
            Ok(Change::Applied(invoice))
        })
        .await
    }
}

/// The invoice an earlier write of `action` under `key` made or changed, if there was one
/// and it was this same request (the same caller, the same arguments); a refusal if it was
/// another.
fn keyed(tx: &Transaction<'_>, action: &str, key: Option<&IdempotencyKey>) -> Result<Option<Invoice>, StoreError> {
    let Some(key) = key else { return Ok(None) };
    let kept: Option<(String, Option<String>, Option<String>)> = tx
        .query_row(
            "SELECT invoice_id, scope, arguments FROM idempotency_keys WHERE action = ?1 AND key = ?2",
            params![action, key.key()],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .optional()?;
    let Some((id, scope, arguments)) = kept else { return Ok(None) };
    let stored = KeyBinding { scope: scope.unwrap_or_default(), arguments: arguments.unwrap_or_default() };
    key.check(&stored).map_err(StoreError::KeyConflict)?;
    find(tx, &id)?.map(Some).ok_or_else(|| StoreError::Corrupt(format!("{id} vanished after {action}")))
}

/// Remembers, in the write's own transaction, that `action` under `key`, bound to its caller
/// and arguments, touched `invoice_id`.
fn remember(
    tx: &Transaction<'_>,
    action: &str,
    key: Option<&IdempotencyKey>,
    invoice_id: &str,
) -> Result<(), StoreError> {
    if let Some(key) = key {
        let binding = key.binding();
        tx.execute(
            "INSERT INTO idempotency_keys (action, key, invoice_id, scope, arguments) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![action, key.key(), invoice_id, binding.scope, binding.arguments],
        )?;
    }
    Ok(())
}

/// A write transaction, holding the write lock from its start (so it never fails half-way
/// for a writer of another server); none for a call already answered.
fn write<'c>(conn: &'c mut Connection, gate: &CommitGate) -> Result<Transaction<'c>, StoreError> {
    if gate.is_abandoned() {
        return Err(StoreError::Abandoned);
    }
    Ok(conn.transaction_with_behavior(TransactionBehavior::Immediate)?)
}

/// Commits, if the call was not answered meanwhile; otherwise the dropped transaction rolls
/// back.
fn commit(tx: Transaction<'_>, gate: &CommitGate) -> Result<(), StoreError> {
    if !gate.try_commit() {
        return Err(StoreError::Abandoned);
    }
    Ok(tx.commit()?)
}

/// SQLite's "another connection holds the lock": worth trying again.
fn is_busy(error: &rusqlite::Error) -> bool {
    matches!(error.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// `inv_2026_0007`: the creation year, then the sequence number.
fn invoice_id(year: i32, seq: i64) -> String {
    format!("inv_{year}_{seq:04}")
}

fn migrate(conn: &mut Connection, from: i64) -> Result<(), rusqlite::Error> {
    if from >= MIGRATIONS.len() as i64 {
        return Ok(());
    }
    // Immediate: replicas started together on one file wait for each other's migration here
    // (busy timeout), and the one that waited reads the version the other left.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let from: i64 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
    for (done, step) in MIGRATIONS.iter().enumerate().skip(usize::try_from(from).unwrap_or(0)) {
        tx.execute_batch(step)?;
        tx.pragma_update(None, "user_version", done as i64 + 1)?;
    }
    tx.commit()
}

/// The demo's invoices: fixed ids and timestamps, so every fresh database is the same.
fn seed(conn: &mut Connection) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let count: i64 = tx.query_row("SELECT COUNT(*) FROM invoices", [], |row| row.get(0))?;
    if count > 0 {
        return Ok(());
    }
    let date = |y, m, d| NaiveDate::from_ymd_opt(y, m, d);
    let rows = [
        ("ana@example.com", 120_000, 120_000, Currency::Eur, Status::Paid, date(2026, 2, 1), None),
        ("ana@example.com", 45_000, 0, Currency::Eur, Status::Open, date(2026, 3, 1), None),
        ("bruno@example.com.br", 990_000, 300_000, Currency::Brl, Status::Open, date(2026, 3, 15), None),
        ("carol@example.org", 25_000, 0, Currency::Usd, Status::Void, None, Some("Issued twice; see inv_2026_0005.")),
        ("carol@example.org", 25_000, 25_000, Currency::Usd, Status::Paid, date(2026, 2, 20), None),
        ("bruno@example.com.br", 15_000, 0, Currency::Brl, Status::Open, None, None),
    ];
    for (n, (email, amount, paid, currency, status, due, reason)) in rows.into_iter().enumerate() {
        let seq = n as i64 + 1;
        insert(
            &tx,
            &NewRow {
                seq,
                id: &invoice_id(2026, seq),
                customer_email: email,
                amount_cents: amount,
                paid_cents: paid,
                currency,
                status,
                due_date: due,
                created_at: &format!("2026-01-{:02}T09:00:00Z", 5 + n),
                void_reason: reason,
            },
        )?;
    }
    tx.commit()
}

/// Every column of one invoice, for the seed and for new invoices.
struct NewRow<'a> {
    seq: i64,
    id: &'a str,
    customer_email: &'a str,
    amount_cents: i64,
    paid_cents: i64,
    currency: Currency,
    status: Status,
    due_date: Option<NaiveDate>,
    created_at: &'a str,
    void_reason: Option<&'a str>,
}

fn insert(tx: &Transaction<'_>, row: &NewRow<'_>) -> Result<(), rusqlite::Error> {
    tx.execute(
        "INSERT INTO invoices (seq, id, customer_email, amount_cents, paid_cents, currency, status, due_date, created_at, void_reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            row.seq,
            row.id,
            row.customer_email,
            row.amount_cents,
            row.paid_cents,
            row.currency.as_str(),
            row.status.as_str(),
            row.due_date.map(|d| d.to_string()),
            row.created_at,
            row.void_reason,
        ],
    )?;
    Ok(())
}

fn find(conn: &Connection, id: &str) -> Result<Option<Invoice>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, id, customer_email, amount_cents, paid_cents, currency, status, due_date, created_at, void_reason
         FROM invoices WHERE id = ?1",
    )?;
    let found = stmt.query_row([id], |row| Ok(read_invoice(row))).optional()?;
    found.transpose()
}

/// Reads the columns of the `SELECT seq, id, …` above. A value the model does not allow is
/// a corrupt row, not a query error, so the message says which row and what.
fn read_invoice(row: &Row<'_>) -> Result<Invoice, StoreError> {
    let id: String = row.get(1)?;
    let currency: String = row.get(5)?;
    let status: String = row.get(6)?;
    let due_date: Option<String> = row.get(7)?;
    let corrupt = |what: &str| StoreError::Corrupt(format!("{id}: {what}"));
    Ok(Invoice {
        customer_email: row.get(2)?,
        amount_cents: row.get(3)?,
        paid_cents: row.get(4)?,
        currency: Currency::parse(&currency).ok_or_else(|| corrupt(&format!("unknown currency {currency:?}")))?,
        status: Status::parse(&status).ok_or_else(|| corrupt(&format!("unknown status {status:?}")))?,
        due_date: due_date
            .map(|d| d.parse::<NaiveDate>().map_err(|_| corrupt(&format!("bad due_date {d:?}"))))
            .transpose()?,
        created_at: row.get(8)?,
        void_reason: row.get(9)?,
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(path: &Path) -> i64 {
        let conn = Connection::open(path).unwrap();
        conn.query_row("SELECT COUNT(*) FROM invoices", [], |row| row.get(0)).unwrap()
    }

    fn user_version(path: &Path) -> i64 {
        let conn = Connection::open(path).unwrap();
        conn.pragma_query_value(None, "user_version", |row| row.get(0)).unwrap()
    }

    #[tokio::test]
    async fn first_open_creates_migrates_and_seeds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("billing.db");
        let store = Store::open(&path).unwrap();
        assert!(path.is_file());
        assert_eq!(user_version(&path), SCHEMA_VERSION);
        let page = store.list(None, 100, 0).await.unwrap();
        let ids: Vec<&str> = page.invoices.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(
            ids,
            ["inv_2026_0001", "inv_2026_0002", "inv_2026_0003", "inv_2026_0004", "inv_2026_0005", "inv_2026_0006"]
        );
        assert_eq!(page.next_after, None);
        let statuses: Vec<Status> = page.invoices.iter().map(|i| i.status).collect();
        assert!(
            statuses.contains(&Status::Open) && statuses.contains(&Status::Paid) && statuses.contains(&Status::Void)
        );
        let currencies: Vec<Currency> = page.invoices.iter().map(|i| i.currency).collect();
        assert!([Currency::Eur, Currency::Usd, Currency::Brl].iter().all(|c| currencies.contains(c)));
    }

    #[tokio::test]
    async fn reads_see_each_write_at_once_and_go_on_when_every_reader_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("billing.db")).unwrap();
        let before = store.get("inv_2026_0003".into()).await.unwrap().unwrap().paid_cents;
        store.pay("inv_2026_0003".into(), 1_000, Write::default()).await.unwrap();
        // A reader connection, not the writer's, answers: it sees the commit.
        assert_eq!(store.get("inv_2026_0003".into()).await.unwrap().unwrap().paid_cents, before + 1_000);
        let taken: Vec<_> = store.readers.iter().map(|reader| reader.lock().unwrap()).collect();
        assert_eq!(store.get("inv_2026_0003".into()).await.unwrap().unwrap().paid_cents, before + 1_000);
        drop(taken);
    }

    #[tokio::test]
    async fn reopening_neither_remigrates_nor_reseeds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("billing.db");
        let store = Store::open(&path).unwrap();
        let created = store
            .create(
                NewInvoice {
                    customer_email: "dora@example.com".into(),
                    amount_cents: 500,
                    currency: Currency::Usd,
                    due_date: None,
                },
                Write::default(),
            )
            .await
            .unwrap();
        assert!(created.id.ends_with("_0007"), "{}", created.id);
        drop(store);
        let store = Store::open(&path).unwrap();
        Store::open(&path).unwrap();
        assert_eq!(count(&path), 7);
        assert_eq!(user_version(&path), SCHEMA_VERSION);
        assert_eq!(store.get(created.id.clone()).await.unwrap(), Some(created));
    }

    #[tokio::test]
    async fn an_emptied_table_is_seeded_again_but_a_used_one_never() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("billing.db");
        Store::open(&path).unwrap();
        Connection::open(&path).unwrap().execute("DELETE FROM invoices WHERE seq > 1", []).unwrap();
        Store::open(&path).unwrap();
        assert_eq!(count(&path), 1);
        Connection::open(&path).unwrap().execute("DELETE FROM invoices", []).unwrap();
        Store::open(&path).unwrap();
        assert_eq!(count(&path), 6);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("billing.db");
        Connection::open(&path).unwrap().pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        let error = Store::open(&path).unwrap_err();
        assert!(matches!(error, StoreError::TooNew { found, .. } if found == SCHEMA_VERSION + 1), "{error}");
    }

    #[test]
    fn directories_and_foreign_files_are_open_errors() {
        let dir = tempfile::tempdir().unwrap();
        let error = Store::open(dir.path()).unwrap_err();
        assert!(error.to_string().contains("is a directory"), "{error}");
        let text = dir.path().join("notes.txt");
        let words = "this is not a database, just some words long enough to fill a header";
        std::fs::write(&text, words).unwrap();
        let error = Store::open(&text).unwrap_err();
        assert!(error.to_string().contains("file is not a database"), "{error}");
        assert_eq!(std::fs::read_to_string(&text).unwrap(), words, "a foreign file is left untouched");
    }

    #[tokio::test]
    async fn payments_accumulate_then_close_the_invoice() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("billing.db")).unwrap();
        // inv_2026_0003: 990000 BRL, 300000 paid.
        let Change::Applied(partial) = store.pay("inv_2026_0003".into(), 90_000, Write::default()).await.unwrap()
        else {
            panic!()
        };
        assert_eq!((partial.paid_cents, partial.status), (390_000, Status::Open));
        let over = store.pay("inv_2026_0003".into(), 600_001, Write::default()).await.unwrap();
        assert!(matches!(over, Change::ExceedsBalance(ref i) if i.open_balance_cents() == 600_000));
        let Change::Applied(full) = store.pay("inv_2026_0003".into(), 600_000, Write::default()).await.unwrap() else {
            panic!()
        };
        assert_eq!((full.paid_cents, full.status), (990_000, Status::Paid));
        assert!(matches!(store.pay("inv_2026_0003".into(), 1, Write::default()).await.unwrap(), Change::NotOpen(_)));
        assert_eq!(store.pay("inv_2026_9999".into(), 1, Write::default()).await.unwrap(), Change::NotFound);
    }

    #[tokio::test]
    async fn pages_follow_each_other_and_filter() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("billing.db")).unwrap();
        let first = store.list(None, 4, 0).await.unwrap();
        assert_eq!(first.invoices.len(), 4);
        assert_eq!(first.next_after, Some(4));
        let second = store.list(None, 4, 4).await.unwrap();
        assert_eq!(second.invoices.len(), 2);
        assert_eq!(second.next_after, None);
        let open = store.list(Some(Status::Open), 100, 0).await.unwrap();
        assert!(open.invoices.iter().all(|i| i.status == Status::Open));
        assert_eq!(open.invoices.len(), 3);
    }
}
