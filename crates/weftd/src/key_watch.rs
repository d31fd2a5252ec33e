//! Samples per key, counted for the status page while it is watched: the first poll
//! declares a subscriber on `**` in weftd's own session, which counts every sample it
//! receives by key (cumulative counts; the page turns them into rates); after
//! [`IDLE`] without a poll the subscriber is undeclared, so that a router nobody watches
//! does not receive every sample.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use weft::{Session, Subscriber};

/// Keys counted at most: samples on other keys count under [`OTHER_KEYS`], so the table
/// (and the page's JSON) stays bounded whatever the key space.
pub(crate) const MAX_KEYS: usize = 500;

/// The row samples on keys beyond [`MAX_KEYS`] count under.
pub(crate) const OTHER_KEYS: &str = "(other keys)";

/// How long the subscriber stays without a poll.
pub(crate) const IDLE: Duration = Duration::from_secs(15);

/// Cumulative samples and bytes per key.
#[derive(Debug, Default)]
pub(crate) struct KeyCounts {
    by_key: HashMap<String, (u64, u64)>,
}

impl KeyCounts {
    /// A sample of `size` bytes on `key`.
    pub(crate) fn add(&mut self, key: &str, size: usize) {
        let key = if self.by_key.contains_key(key) || self.by_key.len() < MAX_KEYS {
            key
        } else {
            OTHER_KEYS
        };
        let entry = match self.by_key.get_mut(key) {
            Some(e) => e,
            None => self.by_key.entry(key.to_owned()).or_default(),
        };
        entry.0 += 1;
        entry.1 += size as u64;
    }

    /// Every key with its samples and bytes, by key.
    pub(crate) fn totals(&self) -> Vec<(String, u64, u64)> {
        let mut out: Vec<(String, u64, u64)> = self
            .by_key
            .iter()
            .map(|(k, (n, b))| (k.clone(), *n, *b))
            .collect();
        out.sort();
        out
    }
}

/// What one poll sees: the counts so far, and which run of the subscriber counted them
/// (a new run starts from zero).
#[derive(Debug, Default)]
pub(crate) struct KeySnapshot {
    /// Counts since the subscriber was declared, 1 for the first.
    pub(crate) run: u64,
    /// Each key's samples and bytes, by key.
    pub(crate) totals: Vec<(String, u64, u64)>,
}

/// The subscriber while it runs.
struct Active {
    _subscriber: Subscriber,
    counts: Arc<Mutex<KeyCounts>>,
    last_poll: Instant,
}

/// The counting subscriber, declared while the page polls.
pub(crate) struct KeyWatch {
    session: Session,
    /// How long the subscriber stays without a poll ([`IDLE`] in weftd).
    idle: Duration,
    state: Mutex<(Option<Active>, u64)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl KeyWatch {
    /// A watch over `session`'s samples, not yet counting; the subscriber stays `idle`
    /// without a poll.
    pub(crate) fn new(session: Session, idle: Duration) -> Arc<Self> {
        Arc::new(Self {
            session,
            idle,
            state: Mutex::new((None, 0)),
        })
    }

    /// The counts so far; declares the subscriber (and starts from zero) when none runs.
    /// When it cannot be declared, the counts are empty.
    pub(crate) fn poll(self: &Arc<Self>) -> KeySnapshot {
        let mut state = lock(&self.state);
        let (active, runs) = &mut *state;
        if active.is_none() {
            let counts = Arc::new(Mutex::new(KeyCounts::default()));
            let counted = counts.clone();
            let subscriber = self.session.declare_subscriber("**", move |s| {
                lock(&counted).add(&s.key_expr, s.payload.len());
            });
            match subscriber {
                Ok(subscriber) => {
                    *active = Some(Active {
                        _subscriber: subscriber,
                        counts,
                        last_poll: Instant::now(),
                    });
                    *runs += 1;
                    self.undeclare_when_idle();
                }
                Err(e) => {
                    tracing::warn!("status page: cannot count samples per key: {e}");
                    return KeySnapshot::default();
                }
            }
        }
        let Some(a) = active.as_mut() else {
            return KeySnapshot::default();
        };
        a.last_poll = Instant::now();
        let totals = lock(&a.counts).totals();
        KeySnapshot { run: *runs, totals }
    }

    /// Whether the subscriber runs.
    #[cfg(test)]
    fn counting(&self) -> bool {
        lock(&self.state).0.is_some()
    }

    /// A thread that undeclares the subscriber once no poll came for `idle`, then ends.
    fn undeclare_when_idle(self: &Arc<Self>) {
        let watch = Arc::downgrade(self);
        let idle = self.idle;
        let spawned = std::thread::Builder::new()
            .name("status-keys".into())
            .spawn(move || loop {
                std::thread::sleep(Duration::from_secs(1).min(idle));
                let Some(watch) = watch.upgrade() else { return };
                let mut state = lock(&watch.state);
                let unwatched = state
                    .0
                    .as_ref()
                    .is_none_or(|a| a.last_poll.elapsed() >= idle);
                if unwatched {
                    // Dropping the subscriber undeclares it.
                    state.0 = None;
                    return;
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("status page: no thread to stop counting keys: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_cumulative_per_key_and_bounded() {
        let mut c = KeyCounts::default();
        c.add("b", 10);
        c.add("a", 1);
        c.add("b", 5);
        assert_eq!(
            c.totals(),
            [("a".to_string(), 1, 1), ("b".to_string(), 2, 15)]
        );
        for i in 0..MAX_KEYS + 3 {
            c.add(&format!("k/{i}"), 2);
        }
        let totals = c.totals();
        assert_eq!(totals.len(), MAX_KEYS + 1);
        let other = totals.iter().find(|t| t.0 == OTHER_KEYS).unwrap();
        // Two keys were already there: MAX_KEYS - 2 new ones fit, 5 did not.
        assert_eq!((other.1, other.2), (5, 10));
    }

    #[test]
    fn a_poll_starts_counting_and_sees_the_samples() {
        let session = weft::open(weft::Config {
            mode: weft::WhatAmI::Peer,
            multicast_scouting: false,
            ..weft::Config::default()
        })
        .unwrap();
        let watch = KeyWatch::new(session.clone(), Duration::from_millis(300));
        assert!(!watch.counting());
        let first = watch.poll();
        assert_eq!((first.run, first.totals.len()), (1, 0));
        assert!(watch.counting());
        session
            .put("watched/a", b"xyz", &weft::PutOptions::default())
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let seen = loop {
            let s = watch.poll();
            if !s.totals.is_empty() || Instant::now() > deadline {
                break s;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(seen.run, 1);
        assert_eq!(seen.totals, [("watched/a".to_string(), 1, 3)]);
        assert_eq!(session.admin().subscribers, ["**"]);
        // Nobody polls: the subscriber goes, and the next poll starts a new run from zero.
        let deadline = Instant::now() + Duration::from_secs(10);
        while watch.counting() {
            assert!(Instant::now() < deadline, "still counting");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(session.admin().subscribers.is_empty());
        let again = watch.poll();
        assert_eq!((again.run, again.totals.len()), (2, 0));
        session.close();
    }
}
