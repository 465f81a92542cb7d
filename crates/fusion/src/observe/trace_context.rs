//! W3C trace context a request carries in its `_meta` (`traceparent`, `tracestate`, `baggage`;
//! SEP-414), checked before anything reads it: it comes from the client.

/// The trace a client says a request belongs to: a well-formed `traceparent`, and the
/// `tracestate` and `baggage` that came with it when they are well-formed too.
///
/// ```
/// use mcp_fusion::observe::TraceContext;
///
/// let trace = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None, None).unwrap();
/// assert_eq!(trace.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
/// // All zeros names no trace; upper case is not the format.
/// assert!(TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None, None).is_none());
/// assert!(TraceContext::parse("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", None, None).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
    baggage: Option<String>,
}

/// The longest `tracestate` kept: W3C Trace Context asks a propagator to take 512 characters of
/// it, and lets it drop what is longer.
const MAX_TRACESTATE: usize = 512;

/// The longest `baggage` kept, as W3C Baggage bounds it.
const MAX_BAGGAGE: usize = 8192;

impl TraceContext {
    /// The trace context of `traceparent` (version `00` or a later one, its trace and parent
    /// ids lowercase hex and not all zeros), with `tracestate` and `baggage` when they are
    /// printable ASCII within their bounds (else left out); `None` when `traceparent` is not
    /// well-formed.
    pub fn parse(traceparent: &str, tracestate: Option<&str>, baggage: Option<&str>) -> Option<TraceContext> {
        let mut parts = traceparent.split('-');
        let (version, trace_id, parent_id, flags) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex =
            |part: &str, len: usize| part.len() == len && part.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        let zeros = |part: &str| part.bytes().all(|b| b == b'0');
        // Version 00 has exactly four parts; a later version may add more after them.
        let rest_ok = match version {
            "00" => parts.next().is_none(),
            "ff" => false,
            _ => true,
        };
        let well_formed = hex(version, 2)
            && rest_ok
            && hex(trace_id, 32)
            && !zeros(trace_id)
            && hex(parent_id, 16)
            && !zeros(parent_id)
            && hex(flags, 2);
        if !well_formed {
            return None;
        }
        let kept = |value: Option<&str>, max: usize| {
            value.filter(|v| v.len() <= max && v.bytes().all(|b| (b' '..=b'~').contains(&b))).map(str::to_owned)
        };
        Some(TraceContext {
            traceparent: traceparent.to_owned(),
            tracestate: kept(tracestate, MAX_TRACESTATE),
            baggage: kept(baggage, MAX_BAGGAGE),
        })
    }

    /// The trace id: 32 lowercase hex digits.
    pub fn trace_id(&self) -> &str {
        &self.traceparent[3..35]
    }

    /// The `traceparent` as sent.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate`, when one came and was well-formed.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The `baggage`, when one came and was well-formed.
    pub fn baggage(&self) -> Option<&str> {
        self.baggage.as_deref()
    }

    /// Makes `span` a child of the client's span in OpenTelemetry, with its trace state and
    /// baggage.
    #[cfg(feature = "otlp")]
    pub(crate) fn continue_in(&self, span: &tracing::Span) {
        use opentelemetry::propagation::{TextMapCompositePropagator, TextMapPropagator as _};
        use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;

        let mut carrier = std::collections::HashMap::new();
        carrier.insert("traceparent".to_owned(), self.traceparent.clone());
        if let Some(tracestate) = &self.tracestate {
            carrier.insert("tracestate".to_owned(), tracestate.clone());
        }
        if let Some(baggage) = &self.baggage {
            carrier.insert("baggage".to_owned(), baggage.clone());
        }
        let propagator = TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]);
        // Fails only for a span the OpenTelemetry layer does not see: then there is nothing to
        // continue.
        let _ = span.set_parent(propagator.extract(&carrier));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn garbage_is_no_trace_context() {
        for bad in [
            "",
            "00",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n",
            "00-é4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        ] {
            assert_eq!(TraceContext::parse(bad, None, None), None, "{bad:?}");
        }
        // A later version may carry more.
        let later = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-comes";
        assert_eq!(TraceContext::parse(later, None, None).unwrap().trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
    }

    #[test]
    fn state_and_baggage_are_kept_only_when_well_formed() {
        let trace = TraceContext::parse(PARENT, Some("rojo=00f067aa0ba902b7"), Some("user=ana")).unwrap();
        assert_eq!((trace.tracestate(), trace.baggage()), (Some("rojo=00f067aa0ba902b7"), Some("user=ana")));
        let long = "k=".to_owned() + &"v".repeat(MAX_BAGGAGE);
        let trace = TraceContext::parse(PARENT, Some("a=1\r\nb=2"), Some(&long)).unwrap();
        assert_eq!((trace.tracestate(), trace.baggage(), trace.traceparent()), (None, None, PARENT));
    }
}
