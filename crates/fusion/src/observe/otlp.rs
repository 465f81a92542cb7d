//! The calls' spans exported over OpenTelemetry (the `otlp` feature): a `tracing` layer for the
//! application's subscriber, and the guard that flushes what is left when the server stops.
//!
//! What is exported: each call's `call` span (target [`CALL_TARGET`]) with its `action`,
//! `session` and `caller` attributes, as a root span, and whatever happens inside it at INFO
//! or above, the handler's events (as span events) and its own spans (as child spans). Nothing
//! else: not the transport's or rmcp's spans, nor the `call finished` event, which is emitted
//! once the span has closed (the span's own start and end time carry the duration). Never an
//! argument's value, since the framework's span and events carry none; a handler's events carry
//! what the handler writes in them.
//!
//! [`layer`] sends to an OpenTelemetry collector over OTLP/HTTP with protobuf bodies, at the
//! endpoint the standard environment names (see [`layer`]); [`layer_with_exporter`] takes any
//! span exporter of the OpenTelemetry SDK, `opentelemetry_stdout::SpanExporter` for one. Spans
//! leave in batches, from the SDK's own thread: a call never waits for the collector. A failed
//! export is logged through `tracing` (targets `opentelemetry_sdk`, `opentelemetry-otlp`) and
//! its spans dropped.
//!
//! ```no_run
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! # fn main() -> Result<(), mcp_fusion::observe::otlp::OtlpError> {
//! // OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318, or http://localhost:4318 by default.
//! let (otlp, guard) = mcp_fusion::observe::otlp::layer("billing-server")?;
//! tracing_subscriber::registry().with(otlp).init();
//! // … serve; then flush the last spans before the process ends.
//! guard.shutdown()?;
//! # Ok(())
//! # }
//! ```

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkError;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanExporter};
use tracing::{Level, Metadata, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::DynFilterFn;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

use super::CALL_TARGET;

/// The instrumentation scope the spans are exported under.
const SCOPE: &str = "mcp-fusion";

/// What can go wrong setting up or stopping the export.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The OTLP exporter could not be built (a malformed endpoint or header in the
    /// environment, say).
    #[error("cannot build the OTLP span exporter: {0}")]
    Build(#[from] opentelemetry_otlp::ExporterBuildError),
    /// Flushing the last spans or stopping the exporter failed (the collector unreachable, a
    /// timeout).
    #[error("cannot flush and stop the span export: {0}")]
    Shutdown(#[from] OTelSdkError),
}

/// Keeps the export running; dropping it (or [`OtlpGuard::shutdown`]) flushes the spans not
/// yet sent and stops the exporter.
#[derive(Debug)]
#[must_use = "dropping the guard stops the export"]
pub struct OtlpGuard {
    provider: Option<SdkTracerProvider>,
}

impl OtlpGuard {
    /// Sends the spans not yet sent and stops the exporter, saying whether that worked (a drop
    /// does the same and logs a failure at WARN).
    pub fn shutdown(mut self) -> Result<(), OtlpError> {
        match self.provider.take() {
            Some(provider) => provider.shutdown().map_err(OtlpError::from),
            None => Ok(()),
        }
    }

    /// Sends the spans not yet sent, and keeps exporting.
    pub fn flush(&self) -> Result<(), OtlpError> {
        match &self.provider {
            Some(provider) => provider.force_flush().map_err(OtlpError::from),
            None => Ok(()),
        }
    }
}

impl Drop for OtlpGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            tracing::warn!(%error, "the last spans could not be exported");
        }
    }
}

/// A layer exporting the calls' spans over OTLP/HTTP (protobuf) in batches, under the resource
/// `service.name` = `service_name`, and the guard that flushes it.
///
/// The endpoint comes from the standard environment: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as
/// the full URL, else `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended, else
/// `http://localhost:4318/v1/traces` (a collector's default OTLP/HTTP receiver). Headers and
/// timeout follow `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_TIMEOUT` (and their
/// `_TRACES_` forms). Plain `http://` only: an `https://` endpoint needs TLS, which this
/// feature leaves out (`opentelemetry-otlp`'s `reqwest-rustls` feature adds it). Call it
/// outside an async context or inside one alike; the exporter's HTTP client lives on the SDK's
/// thread.
pub fn layer<S>(service_name: &str) -> Result<(impl Layer<S>, OtlpGuard), OtlpError>
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    let exporter = opentelemetry_otlp::SpanExporter::builder().with_http().build()?;
    Ok(layer_with_exporter(service_name, exporter))
}

/// A layer exporting the calls' spans through `exporter` in batches, under the resource
/// `service.name` = `service_name`, and the guard that flushes it (the same spans as
/// [`layer`]).
pub fn layer_with_exporter<S, E>(service_name: &str, exporter: E) -> (impl Layer<S>, OtlpGuard)
where
    S: Subscriber + for<'span> LookupSpan<'span>,
    E: SpanExporter + 'static,
{
    let resource = Resource::builder().with_service_name(service_name.to_owned()).build();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
    let tracer = provider.tracer(SCOPE);
    let layer = tracing_opentelemetry::layer().with_tracer(tracer).with_filter(DynFilterFn::new(exported::<S>));
    (layer, OtlpGuard { provider: Some(provider) })
}

/// Whether a span or event goes out: at INFO or above, what the framework's call target emits
/// (its `call` span; its `call finished` event comes after the span, where the layer drops it),
/// and whatever is inside a call. The context only knows the spans this filter let through, so a
/// current span there is a call or sits in one.
fn exported<S>(metadata: &Metadata<'_>, context: &Context<'_, S>) -> bool
where
    S: Subscriber + for<'span> LookupSpan<'span>,
{
    *metadata.level() <= Level::INFO && (metadata.target() == CALL_TARGET || context.lookup_current().is_some())
}
