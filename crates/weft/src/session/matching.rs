//! Matching: whether any subscriber (for a publisher) or queryable (for a querier) matches
//! a key expression, as far as this session knows (its own entities and what the connected
//! nodes declared to it), and listeners told when that changes.
//!
//! A client learns of other nodes' subscribers through its publishers' interests, and of
//! their queryables through its queriers' interests (see [`Inner::declare_querier`]); a
//! peer or a router is told of them unsolicited.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{NetworkQos, WhatAmI, WireExpr};
use weft_proto::network::{Interest, InterestMode, InterestOptions, NetworkMessage, QueryTarget};

use super::outbound::send_control;
use super::{Inner, SessionError, State};

/// How often a listener's thread checks, without a change, that its session still exists.
const ALIVE_CHECK: Duration = Duration::from_secs(1);

/// What a matching status is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchingKind {
    /// Subscribers on keys intersecting the key expression (a publisher's).
    Subscribers,
    /// Queryables a query on the key expression with this target would reach (a
    /// querier's).
    Queryables(QueryTarget),
}

/// Wakes the threads watching matching statuses whenever declarations, interests or faces
/// change (the route caches' epoch).
#[derive(Default)]
pub(crate) struct ChangeSignal {
    generation: Mutex<u64>,
    changed: Condvar,
}

impl ChangeSignal {
    /// Something changed: every watcher looks again.
    pub(crate) fn notify(&self) {
        let mut g = self
            .generation
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *g = g.wrapping_add(1);
        self.changed.notify_all();
    }

    fn generation(&self) -> u64 {
        *self
            .generation
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits until the generation is no longer `seen`, or `timeout` passed.
    fn wait(&self, seen: u64, timeout: Duration) {
        let g = self
            .generation
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = self
            .changed
            .wait_timeout_while(g, timeout, |g| *g == seen)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

/// Whether anything of `kind` matches `key` in `st`.
pub(crate) fn matches(st: &State, key: KeyExpr<'_>, kind: MatchingKind) -> bool {
    match kind {
        MatchingKind::Subscribers => {
            st.own
                .subscribers_of_session()
                .any(|s| s.key.as_key_expr().intersects(key))
                || !st.declared.subscribers.faces_intersecting(key).is_empty()
        }
        MatchingKind::Queryables(QueryTarget::AllComplete) => {
            st.own
                .queryables_of_session()
                .any(|(_, q)| q.complete && q.key.as_key_expr().includes(key))
                || st.faces.values().any(|f| {
                    f.queryables.by_id.iter().any(|(id, k)| {
                        f.complete_queryables.contains(id) && k.as_key_expr().includes(key)
                    })
                })
        }
        MatchingKind::Queryables(_) => {
            st.own
                .queryables_of_session()
                .any(|(_, q)| q.key.as_key_expr().intersects(key))
                || !st.declared.queryables.faces_intersecting(key).is_empty()
        }
    }
}

/// The interest a client's querier sends its router: the queryables on its key, now and
/// later.
pub(crate) fn querier_interest_msg(id: u32, key: &str) -> NetworkMessage<'_> {
    let mut i = Interest::new(
        id,
        InterestMode::CurrentFuture,
        InterestOptions::QUERYABLES,
        Some(WireExpr::key(key)),
    );
    i.qos = NetworkQos::DECLARE;
    NetworkMessage::Interest(i)
}

impl Inner {
    /// Whether anything of `kind` matches `key` now.
    pub(crate) fn matching(&self, key: &OwnedKeyExpr, kind: MatchingKind) -> bool {
        matches(&self.lock(), key.as_key_expr(), kind)
    }

    /// Keeps a querier of `key`; in client mode, asks the connected nodes which
    /// queryables match it. Returns its id.
    pub(crate) fn declare_querier(&self, key: OwnedKeyExpr) -> Result<u32, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let (id, targets) = {
            let mut st = self.lock();
            let id = Self::next_id(&mut st);
            st.own.queriers.insert(id, key.clone());
            let targets: Vec<_> = if self.config.mode == WhatAmI::Client {
                st.faces.values().map(|f| f.transport.clone()).collect()
            } else {
                Vec::new()
            };
            (id, targets)
        };
        let msg = querier_interest_msg(id, key.as_str());
        for t in targets {
            send_control(&*t, &msg);
        }
        Ok(id)
    }

    /// Forgets the querier `id`, and withdraws its interest.
    pub(crate) fn undeclare_querier(&self, id: u32) {
        let targets: Vec<_> = {
            let mut st = self.lock();
            if st.own.queriers.remove(&id).is_none() || self.config.mode != WhatAmI::Client {
                return;
            }
            st.faces.values().map(|f| f.transport.clone()).collect()
        };
        let mut i = Interest::new(id, InterestMode::Final, InterestOptions::default(), None);
        i.qos = NetworkQos::DECLARE;
        let msg = NetworkMessage::Interest(i);
        for t in targets {
            send_control(&*t, &msg);
        }
    }
}

/// Calls its callback with `true` when something of its kind starts matching its key
/// expression (at once if something does when it is declared), and `false` when nothing
/// does any more; stops when dropped or when its session closes. The callback runs on the
/// listener's own thread.
pub struct MatchingListener {
    stop: Arc<AtomicBool>,
    signal: Arc<super::matching::ChangeSignal>,
    thread: Option<JoinHandle<()>>,
}

impl MatchingListener {
    /// Starts watching `key` for `kind` on `inner`.
    pub(crate) fn start(
        inner: &Arc<Inner>,
        key: OwnedKeyExpr,
        kind: MatchingKind,
        callback: impl Fn(bool) + Send + 'static,
    ) -> Result<Self, SessionError> {
        if inner.is_closing() {
            return Err(SessionError::Closed);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let signal = inner.matching_signal.clone();
        let watched = Arc::downgrade(inner);
        let (thread_stop, thread_signal) = (stop.clone(), signal.clone());
        let thread = std::thread::Builder::new()
            .name("weft-matching".into())
            .spawn(move || watch(&watched, &thread_signal, &thread_stop, &key, kind, callback))
            .map_err(|e| SessionError::Thread(e.to_string()))?;
        Ok(Self {
            stop,
            signal,
            thread: Some(thread),
        })
    }
}

/// The listener's thread: looks at the status after every change, and calls `callback`
/// when it differs from the last one told (`false` at first).
fn watch(
    inner: &Weak<Inner>,
    signal: &ChangeSignal,
    stop: &AtomicBool,
    key: &OwnedKeyExpr,
    kind: MatchingKind,
    callback: impl Fn(bool),
) {
    let mut told = false;
    loop {
        let seen = signal.generation();
        if stop.load(Ordering::Acquire) {
            return;
        }
        let Some(status) = inner
            .upgrade()
            .filter(|i| !i.is_closing())
            .map(|i| i.matching(key, kind))
        else {
            return;
        };
        if status != told {
            told = status;
            callback(status);
        }
        signal.wait(seen, ALIVE_CHECK);
    }
}

impl Drop for MatchingListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.signal.notify();
        if let Some(t) = self.thread.take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_at_a_change_or_its_timeout() {
        let signal = Arc::new(ChangeSignal::default());
        let seen = signal.generation();
        let waker = signal.clone();
        let t = std::thread::spawn(move || waker.notify());
        signal.wait(seen, Duration::from_secs(20));
        t.join().expect("the notifier ran");
        assert_ne!(signal.generation(), seen);
        let start = std::time::Instant::now();
        signal.wait(signal.generation(), Duration::from_millis(20));
        assert!(start.elapsed() >= Duration::from_millis(20));
    }
}
