//! How long to wait before reconnecting: exponential, with jitter, and bounded.

use std::time::Duration;

/// Waits between attempts to reach an upstream: `initial`, doubled after each failure up to
/// `max` (at most 30 s, so the `retry_after` a model is told stays short), each spread by up
/// to `jitter` (a fraction) so many gateways do not retry in step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait (capped at 30 s).
    pub max: Duration,
    /// The spread, as a fraction of the wait (0.2 = ±20 %).
    pub jitter: f64,
}

impl Default for Backoff {
    /// 500 ms, doubling to 30 s, ±20 %.
    fn default() -> Backoff {
        Backoff { initial: Duration::from_millis(500), max: Duration::from_secs(30), jitter: 0.2 }
    }
}

/// The longest a model is asked to wait.
const CEILING: Duration = Duration::from_secs(30);

impl Backoff {
    /// The wait before attempt `failures + 1`, given a number in `[0, 1)` for the jitter.
    pub fn delay(&self, failures: u32, unit: f64) -> Duration {
        let max = self.max.min(CEILING);
        let doubled = self.initial.saturating_mul(1u32.checked_shl(failures.min(20)).unwrap_or(u32::MAX));
        let base = doubled.min(max);
        let spread = (unit.clamp(0.0, 1.0) * 2.0 - 1.0) * self.jitter.clamp(0.0, 1.0);
        base.mul_f64(1.0 + spread).min(max)
    }
}

/// A number in `[0, 1)` that differs from call to call, for jitter (not for anything secret).
pub(crate) fn jitter_unit() -> f64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher
        .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_up_to_the_cap_and_spreads() {
        let backoff = Backoff::default();
        assert_eq!(backoff.delay(0, 0.5), Duration::from_millis(500));
        assert_eq!(backoff.delay(3, 0.5), Duration::from_secs(4));
        assert_eq!(backoff.delay(30, 0.5), Duration::from_secs(30));
        assert_eq!(backoff.delay(0, 0.0), Duration::from_millis(400));
        assert_eq!(backoff.delay(0, 1.0), Duration::from_millis(600));
        // Never past 30 s, whatever the settings.
        let wide = Backoff { initial: Duration::from_secs(100), max: Duration::from_secs(600), jitter: 0.5 };
        assert_eq!(wide.delay(0, 1.0), Duration::from_secs(30));
        let unit = jitter_unit();
        assert!((0.0..1.0).contains(&unit));
    }
}
