//! Requests-per-minute and tokens-per-minute limits, as a pace: request starts are spaced by
//! `60 s / requests_per_minute`, and the tokens each reply cost push the next start back by
//! `tokens × 60 s / tokens_per_minute`. Spacing rather than a per-minute bucket never bursts
//! a minute's allowance at once, which is what gets a client rate-limited (429) by providers
//! that measure over shorter windows. Tokens never schedule a start more than
//! [`PACE_AHEAD_LIMIT`] ahead: a reply that claims absurd `usage` cannot park the run.

use std::time::{Duration, Instant};

/// How far ahead of now the tokens spent can push the next start: a minute, the span a
/// tokens-per-minute limit is measured over.
pub const PACE_AHEAD_LIMIT: Duration = Duration::from_secs(60);

/// The pace of one model's requests; shared by its workers behind a mutex.
#[derive(Debug, Clone)]
pub struct Pace {
    request_gap: Option<Duration>,
    per_token: Option<Duration>,
    next: Option<Instant>,
}

impl Pace {
    pub fn new(requests_per_minute: Option<u32>, tokens_per_minute: Option<u64>) -> Pace {
        Pace {
            request_gap: requests_per_minute
                .filter(|r| *r > 0)
                .map(|r| Duration::from_secs(60) / r),
            per_token: tokens_per_minute
                .filter(|t| *t > 0)
                .map(|t| Duration::from_secs_f64(60.0 / t as f64)),
            next: None,
        }
    }

    /// Whether any limit is set.
    pub fn is_limited(&self) -> bool {
        self.request_gap.is_some() || self.per_token.is_some()
    }

    /// Reserves the next start at or after `now`; returns it (the caller sleeps until then).
    pub fn reserve(&mut self, now: Instant) -> Instant {
        let start = self.next.map_or(now, |n| n.max(now));
        self.next = Some(start + self.request_gap.unwrap_or(Duration::ZERO));
        start
    }

    /// Records that a reply cost `tokens`: the next start moves back by their share, to at
    /// most [`PACE_AHEAD_LIMIT`] after `now`.
    pub fn spent(&mut self, tokens: u64, now: Instant) {
        if let Some(per) = self.per_token {
            let base = self.next.map_or(now, |n| n.max(now));
            let cost = per
                .saturating_mul(u32::try_from(tokens).unwrap_or(u32::MAX))
                .min(PACE_AHEAD_LIMIT);
            let limit = now + PACE_AHEAD_LIMIT;
            self.next = Some((base + cost).min(limit.max(base)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_are_spaced_by_the_request_rate() {
        let t0 = Instant::now();
        let mut p = Pace::new(Some(120), None);
        assert!(p.is_limited());
        let starts: Vec<Duration> = (0..4).map(|_| p.reserve(t0) - t0).collect();
        assert_eq!(
            starts,
            [0, 500, 1000, 1500].map(Duration::from_millis).to_vec()
        );
        // Idle time is not saved up: a request long after starts at once.
        let later = t0 + Duration::from_secs(10);
        assert_eq!(p.reserve(later), later);
        assert_eq!(p.reserve(later), later + Duration::from_millis(500));
    }

    #[test]
    fn tokens_spent_push_the_next_start_back() {
        let t0 = Instant::now();
        let mut p = Pace::new(None, Some(6000));
        assert_eq!(p.reserve(t0), t0);
        // 100 tokens at 6,000 a minute: a second.
        p.spent(100, t0);
        assert_eq!(p.reserve(t0), t0 + Duration::from_secs(1));
        let mut free = Pace::new(None, None);
        assert!(!free.is_limited());
        free.spent(1_000_000, t0);
        assert_eq!(free.reserve(t0), t0);
    }
}
