//! Authentication throttling (`transport.auth.throttle.*`, weft's own keys): the
//! addresses whose authentications failed `failures` times in a row are refused for
//! `backoff` after their last failure. Only a table: the links loop asks it before a
//! handshake starts (a refused connection is closed at once, no handshake, no wait) and
//! tells it how authentications ended. Time is passed in.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use crate::config::AuthThrottle;

/// Addresses followed at most; beyond, those whose record ran out are forgotten first,
/// then the one that failed longest ago.
const ADDRESSES_MAX: usize = 4096;

/// One address's record.
#[derive(Debug, Clone, Copy)]
struct Record {
    /// Failures in a row.
    failures: usize,
    /// The last one.
    last: Instant,
}

/// The failures of each address, and which are refused.
#[derive(Debug)]
pub(crate) struct Throttle {
    settings: AuthThrottle,
    records: HashMap<IpAddr, Record>,
}

impl Throttle {
    /// A throttle with `settings`; `None` when they turn it off.
    pub(crate) fn new(settings: AuthThrottle) -> Option<Self> {
        (settings.failures > 0).then(|| Self {
            settings,
            records: HashMap::new(),
        })
    }

    /// Whether a handshake from `ip` is refused at `now`: how long it stays refused.
    pub(crate) fn refuses(&self, ip: IpAddr, now: Instant) -> Option<Duration> {
        let r = self.records.get(&ip)?;
        if r.failures < self.settings.failures {
            return None;
        }
        let until = r.last + self.settings.backoff;
        (until > now).then(|| until - now)
    }

    /// An authentication from `ip` failed at `now`: whether `ip` is refused from now on.
    pub(crate) fn failed(&mut self, ip: IpAddr, now: Instant) -> bool {
        if !self.records.contains_key(&ip) && self.records.len() >= ADDRESSES_MAX {
            self.make_room(now);
        }
        let r = self.records.entry(ip).or_insert(Record {
            failures: 0,
            last: now,
        });
        r.failures = r.failures.saturating_add(1);
        r.last = now;
        r.failures >= self.settings.failures
    }

    /// A handshake from `ip` authenticated: its count starts again.
    pub(crate) fn succeeded(&mut self, ip: IpAddr) {
        self.records.remove(&ip);
    }

    /// Forgets the records whose backoff ran out, else the oldest one.
    fn make_room(&mut self, now: Instant) {
        let backoff = self.settings.backoff;
        self.records
            .retain(|_, r| now.saturating_duration_since(r.last) < backoff);
        if self.records.len() >= ADDRESSES_MAX {
            if let Some(oldest) = self.records.iter().min_by_key(|(_, r)| r.last) {
                let ip = *oldest.0;
                self.records.remove(&ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle(failures: usize, backoff_secs: u64) -> Throttle {
        Throttle::new(AuthThrottle {
            failures,
            backoff: Duration::from_secs(backoff_secs),
        })
        .expect("on")
    }

    #[test]
    fn an_address_is_refused_after_its_failures_for_the_backoff() {
        let t0 = Instant::now();
        let s = |secs: u64| t0 + Duration::from_secs(secs);
        let a: IpAddr = [10, 0, 0, 1].into();
        let b: IpAddr = [10, 0, 0, 2].into();
        let mut t = throttle(3, 60);
        assert!(!t.failed(a, s(0)));
        assert!(!t.failed(a, s(1)));
        assert_eq!(t.refuses(a, s(1)), None);
        assert!(t.failed(a, s(2)));
        assert_eq!(t.refuses(a, s(3)), Some(Duration::from_secs(59)));
        assert_eq!(t.refuses(b, s(3)), None, "another address is not refused");
        assert_eq!(t.refuses(a, s(62)), None, "the backoff ran out");
        // One more failure after it: refused again at once.
        assert!(t.failed(a, s(63)));
        t.succeeded(a);
        assert_eq!(t.refuses(a, s(64)), None);
    }

    #[test]
    fn off_unless_failures_are_set_and_bounded_in_addresses() {
        assert!(Throttle::new(AuthThrottle::default()).is_none());
        let t0 = Instant::now();
        let mut t = throttle(1, 60);
        for i in 0..(ADDRESSES_MAX as u32 + 100) {
            t.failed(
                IpAddr::from(i.to_be_bytes()),
                t0 + Duration::from_millis(u64::from(i)),
            );
        }
        assert!(t.records.len() <= ADDRESSES_MAX);
    }
}
