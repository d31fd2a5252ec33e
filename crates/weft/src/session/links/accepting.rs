//! Listeners and the handshakes of the links they accept: every connection waiting to be
//! accepted is taken at once; each starts its handshake if one of the
//! `transport.unicast.accept_pending` places is free (else it is closed unanswered), to be
//! over within `transport.unicast.accept_timeout`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Token};

use super::refusals::Source;
use super::{Entry, Outcome, Purpose, Runner};
use crate::link::Listener;
use crate::session::Inner;
use crate::transport::Caller;
use crate::transport::Handshake;

/// Counts an accepted link's handshake in progress; releases it when dropped.
pub(super) struct PendingAccept(Arc<Inner>);

impl PendingAccept {
    /// How many `transport.unicast.accept_pending` places of `inner` are free.
    fn free(inner: &Inner) -> usize {
        inner
            .config
            .accept_pending
            .saturating_sub(inner.pending_accepts.load(Ordering::Acquire))
    }

    /// Takes one of the `transport.unicast.accept_pending` places, if one is free.
    fn take(inner: &Arc<Inner>) -> Option<Self> {
        let limit = inner.config.accept_pending;
        inner
            .pending_accepts
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(inner.clone()))
    }
}

impl Drop for PendingAccept {
    fn drop(&mut self) {
        self.0.pending_accepts.fetch_sub(1, Ordering::AcqRel);
    }
}

/// First and longest pause of a listener after failed accepts (out of descriptors...).
const PAUSE_MIN: Duration = Duration::from_millis(20);
const PAUSE_MAX: Duration = Duration::from_secs(1);

/// A listener served by the loop.
pub(super) struct Accepting {
    /// The session it accepts for.
    inner: std::sync::Weak<Inner>,
    listener: Listener,
    /// After failed accepts: no accept before this, and the next pause.
    paused_until: Option<Instant>,
    pause: Duration,
    failures: u64,
    /// Connections closed unanswered since the last one accepted (no place free).
    refused: u64,
}

impl Accepting {
    /// The session it accepts for.
    pub(super) const fn inner(&self) -> &std::sync::Weak<Inner> {
        &self.inner
    }

    /// The listening socket.
    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        self.listener.raw_fd()
    }

    /// When the listener accepts again after failures, if it paused.
    pub(super) const fn paused_until(&self) -> Option<Instant> {
        self.paused_until
    }

    /// Pauses after an accept failed: from [`PAUSE_MIN`], doubling up to [`PAUSE_MAX`],
    /// logged once per episode with how many failed.
    fn failed(&mut self, e: &std::io::Error) {
        if self.failures == 0 {
            tracing::warn!("accept failed: {e} (pausing accepts, up to {PAUSE_MAX:?})");
        }
        self.failures += 1;
        self.paused_until = Some(Instant::now() + self.pause);
        self.pause = (self.pause * 2).min(PAUSE_MAX);
    }

    fn succeeded(&mut self) {
        if self.failures > 1 {
            tracing::warn!("accepting again after {} failed accepts", self.failures);
        }
        self.failures = 0;
        self.pause = PAUSE_MIN;
        self.paused_until = None;
    }
}

impl Runner {
    /// Serves `listener` from now on.
    pub(super) fn add_listener(&mut self, inner: &Arc<Inner>, listener: Listener, caller: &Caller) {
        if let Err(e) = listener.set_nonblocking() {
            tracing::error!("cannot serve a listener: {e}");
            return;
        }
        let token = self.token();
        let fd = listener.raw_fd();
        if let Err(e) = self
            .poll
            .registry()
            .register(&mut SourceFd(&fd), token, Interest::READABLE)
        {
            tracing::error!("cannot serve a listener: {e}");
            return;
        }
        self.entries.insert(
            token,
            Entry::Listener(Box::new(Accepting {
                inner: Arc::downgrade(inner),
                listener,
                paused_until: None,
                pause: PAUSE_MIN,
                failures: 0,
                refused: 0,
            })),
        );
        // Connections that came before it was registered.
        self.accept_all(token, caller);
    }

    /// Accepts every connection waiting on the listener of `token`.
    pub(super) fn accept_all(&mut self, token: Token, caller: &Caller) {
        let Some(Entry::Listener(l)) = self.entries.get(&token) else {
            return;
        };
        let Some(inner) = l.inner.upgrade() else {
            return;
        };
        let inner = &inner;
        loop {
            let Some(Entry::Listener(l)) = self.entries.get_mut(&token) else {
                return;
            };
            if l.paused_until.is_some_and(|t| t > Instant::now()) {
                break;
            }
            let link = match l.listener.accept() {
                Ok(link) => link,
                Err(e) if crate::link::is_timeout(&e) => {
                    // Nothing to accept now: the listener works again, and a pause that
                    // ended is over (else its timer, due in the past, would wake the loop
                    // again at once).
                    l.succeeded();
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    l.failed(&e);
                    break;
                }
            };
            l.succeeded();
            if let Err(link) = self.admit(inner, link, caller) {
                // No place, and the waiting room is full: closed unanswered.
                let Some(Entry::Listener(l)) = self.entries.get_mut(&token) else {
                    return;
                };
                if l.refused == 0 {
                    tracing::warn!(
                        "{} handshakes in progress (transport.unicast.accept_pending) and \
                         {WAITING_MAX} connections waiting: closing new connections until \
                         one ends",
                        inner.config.accept_pending
                    );
                }
                l.refused += 1;
                link.shutdown();
                continue;
            }
            let Some(Entry::Listener(l)) = self.entries.get_mut(&token) else {
                return;
            };
            if l.refused > 0 {
                tracing::info!("{} connections were closed unanswered", l.refused);
                l.refused = 0;
            }
        }
        let udp = matches!(
            self.entries.get(&token),
            Some(Entry::Listener(l)) if l.listener.hands_datagrams_over()
        );
        if udp {
            // Datagrams for links whose handshake runs may have come.
            self.advance_listener_fed(caller);
        }
    }
}

/// Connections a session's listeners hold while every `accept_pending` place is taken,
/// at most: each waits, unanswered, for a place (or `accept_timeout`).
pub(super) const WAITING_MAX: usize = 1024;

/// The `accept_pending` places one source address may hold at once: half of them (at
/// least one). An address that opens handshakes faster than they end, or lets them stall,
/// keeps the other half free for every other address: its next connections wait for one
/// of its own places, in at most half of the waiting room.
fn source_share(inner: &Inner) -> usize {
    (inner.config.accept_pending / 2).max(1)
}

/// A connection accepted while every `accept_pending` place was taken, waiting for one.
pub(super) struct Waiting {
    inner: std::sync::Weak<Inner>,
    link: crate::link::Link,
    since: Instant,
    /// For one whose first bytes came (not watched: it needs only a place), when it next
    /// tries for one, a stalled handshake's place included.
    retry_at: Option<Instant>,
}

/// How often a waiting connection whose first bytes came tries again for a place (besides
/// every time one is freed): a handshake that stalls becomes its to take after
/// [`STALLED_AFTER`].
const RETRY_EVERY: Duration = Duration::from_millis(100);

impl Waiting {
    /// The session it waits for.
    pub(super) const fn inner(&self) -> &std::sync::Weak<Inner> {
        &self.inner
    }

    /// When it next tries for a place, or is closed unanswered if none came by
    /// `accept_timeout`.
    pub(super) fn gives_up_at(&self) -> Option<Instant> {
        let inner = self.inner.upgrade()?;
        let end = self.since + inner.config.accept_timeout;
        Some(self.retry_at.map_or(end, |r| r.min(end)))
    }

    /// Its socket.
    pub(super) fn raw_fd(&self) -> std::os::fd::RawFd {
        self.link.raw_fd()
    }
}

impl Runner {
    /// Starts the handshake of `link`, accepted for `inner`, if it gets one of the
    /// `accept_pending` places: a free one, or, for a connection whose first bytes are
    /// there already (a peer starting its handshake), that of the oldest handshake that
    /// has stalled (see [`STALLED_AFTER`]). Else it waits, unanswered, in the waiting
    /// room (at most [`WAITING_MAX`], given back as `Err` when full): connections that
    /// stall are not closed to be opened again at once, and a peer waiting there gets the
    /// next place once its bytes come.
    fn admit(
        &mut self,
        inner: &Arc<Inner>,
        link: crate::link::Link,
        caller: &Caller,
    ) -> Result<(), crate::link::Link> {
        if inner.refusals.refuses(&link) {
            link.shutdown();
            return Ok(());
        }
        let ip = link.peer_ip();
        let ready = link.has_input_now();
        let place = if ip.is_some() && self.held_by(inner, ip) >= source_share(inner) {
            // Its address holds its share of the places: it may take only the place of a
            // stalled handshake from that address, never another address's.
            (ready && self.evict_stalled(inner, Some(ip)))
                .then(|| PendingAccept::take(inner))
                .flatten()
        } else {
            PendingAccept::take(inner).or_else(|| {
                (ready && self.evict_stalled(inner, None)).then(|| PendingAccept::take(inner))?
            })
        };
        let Some(place) = place else {
            return self.wait_for_place(inner, link);
        };
        let describe = link.describe();
        let source = Source(link.peer_ip());
        let params = inner.local_params(&link, None);
        let usrpwd = inner.config.usrpwd.as_ref();
        let handshake_token = self.token();
        let started = Handshake::accept(
            link,
            params,
            usrpwd,
            inner.config.accept_timeout,
            inner.handler(),
            self.notifier(handshake_token),
        );
        match started {
            Ok(h) => self.add_handshake(
                inner,
                handshake_token,
                h,
                Purpose::Accepted(place, source),
                describe,
                caller,
            ),
            Err(e) => inner.refusals.failed(source, &describe, &e),
        }
        Ok(())
    }

    /// The handshakes in progress of links `inner`'s listeners accepted from `ip`.
    fn held_by(&self, inner: &Arc<Inner>, ip: Option<std::net::IpAddr>) -> usize {
        self.entries
            .values()
            .filter(|e| {
                matches!(e, Entry::Handshake(h)
                    if h.inner.as_ptr() == Arc::as_ptr(inner)
                        && matches!(&h.purpose, Purpose::Accepted(_, source) if source.0 == ip))
            })
            .count()
    }

    /// Parks `link` in the waiting room, its socket watched for its first bytes: at most
    /// [`WAITING_MAX`] connections, half of them from one address.
    fn wait_for_place(
        &mut self,
        inner: &Arc<Inner>,
        link: crate::link::Link,
    ) -> Result<(), crate::link::Link> {
        let ip = link.peer_ip();
        let (mut waiting, mut from_ip) = (0, 0);
        for e in self.entries.values() {
            if let Entry::Waiting(w) = e {
                if w.inner.as_ptr() == Arc::as_ptr(inner) {
                    waiting += 1;
                    from_ip += usize::from(w.link.peer_ip() == ip);
                }
            }
        }
        // A UDP or QUIC link has no socket of its own to watch here.
        if waiting >= WAITING_MAX || from_ip >= WAITING_MAX / 2 || !link.has_own_stream_socket() {
            return Err(link);
        }
        let token = self.token();
        let fd = link.raw_fd();
        // One whose first bytes are here needs only a place: it is not watched (its
        // socket, ready, would wake the loop at once and again), but tried again when a
        // place is freed (`place_freed`) and every `RETRY_EVERY`, and closed at
        // `accept_timeout`.
        let has_input = link.has_input_now();
        if !has_input
            && self
                .poll
                .registry()
                .register(&mut SourceFd(&fd), token, Interest::READABLE)
                .is_err()
        {
            return Err(link);
        }
        self.entries.insert(
            token,
            Entry::Waiting(Box::new(Waiting {
                inner: Arc::downgrade(inner),
                link,
                since: Instant::now(),
                retry_at: has_input.then(|| Instant::now() + RETRY_EVERY),
            })),
        );
        Ok(())
    }

    /// A waiting connection's socket is readable, or its time is up, or a place was
    /// freed: it takes a place if it can, else waits on (or is closed once it has waited
    /// `accept_timeout`).
    pub(super) fn waiting_ready(&mut self, token: Token, caller: &Caller) {
        let Some(Entry::Waiting(w)) = self.entries.remove(&token) else {
            return;
        };
        let fd = w.link.raw_fd();
        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        let Some(inner) = w.inner.upgrade() else {
            return;
        };
        if Instant::now() >= w.since + inner.config.accept_timeout {
            w.link.shutdown();
            return;
        }
        let since = w.since;
        match self.admit(&inner, w.link, caller) {
            Ok(()) => {
                // Back in the waiting room: keep its first arrival time.
                if let Some(Entry::Waiting(again)) = self
                    .entries
                    .values_mut()
                    .find(|e| matches!(e, Entry::Waiting(x) if x.link.raw_fd() == fd))
                {
                    again.since = since;
                }
            }
            Err(link) => link.shutdown(),
        }
    }

    /// A place of `inner` was freed: the connections waiting for one whose first bytes
    /// have come try again, the oldest first.
    pub(super) fn place_freed(&mut self, inner: &Arc<Inner>, caller: &Caller) {
        let mut ready: Vec<Token> = self
            .entries
            .iter()
            .filter(|(_, e)| {
                matches!(e, Entry::Waiting(w)
                    if w.inner.as_ptr() == Arc::as_ptr(inner) && w.link.has_input_now())
            })
            .map(|(t, _)| *t)
            .collect();
        ready.sort();
        for token in ready {
            if PendingAccept::free(inner) == 0 {
                break;
            }
            self.waiting_ready(token, caller);
        }
    }
}

/// How long an accepted link's handshake may have run before a new connection that has
/// sent its first bytes may take its place when every `accept_pending` place is held: a
/// peer's handshake takes milliseconds, while a connection that stalls holds its place
/// until `accept_timeout` (10 s by default). So connections that stall, however many and
/// however fast they are opened again, keep a peer out for this long at most.
pub(super) const STALLED_AFTER: Duration = Duration::from_millis(500);

impl Runner {
    /// Closes the oldest handshake of a link `inner`'s listeners accepted (from the
    /// address `from` only, when given), if it has run longer than [`STALLED_AFTER`], to
    /// free its place. Whether one was closed.
    fn evict_stalled(
        &mut self,
        inner: &Arc<Inner>,
        from: Option<Option<std::net::IpAddr>>,
    ) -> bool {
        let now = Instant::now();
        let oldest = self
            .entries
            .iter()
            .filter_map(|(t, e)| match e {
                Entry::Handshake(h)
                    if matches!(&h.purpose, Purpose::Accepted(_, source)
                        if from.is_none_or(|ip| source.0 == ip))
                        && h.inner.as_ptr() == Arc::as_ptr(inner)
                        && now.duration_since(h.started) >= STALLED_AFTER =>
                {
                    Some(*t)
                }
                _ => None,
            })
            .min();
        let Some(token) = oldest else {
            return false;
        };
        if let Some(Entry::Handshake(h)) = self.entries.remove(&token) {
            if let Some(fd) = h.registered {
                let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
            }
            let n = inner
                .stalled_handshakes_closed
                .fetch_add(1, Ordering::Relaxed)
                + 1;
            if n.is_power_of_two() {
                tracing::warn!(
                    "closed {} after {:?} in its handshake: every accept_pending place was \
                     held and a new connection came ({n} closed so far)",
                    h.describe,
                    now.duration_since(h.started)
                );
            }
        }
        true
    }
}

/// An accepted link's handshake is over: its transport goes to the session (which
/// enforces `max_sessions` where it adds the face), or the refusal is counted and logged
/// (at most once per period per source address).
pub(super) fn handshake_done(
    inner: &Arc<Inner>,
    place: PendingAccept,
    source: Source,
    describe: &str,
    outcome: Outcome,
    caller: &Caller,
) {
    drop(place);
    match outcome {
        Ok(pending) => {
            inner.refusals.succeeded(source);
            inner.adopt(pending, false, caller);
        }
        Err(e) => inner.refusals.failed(source, describe, &e),
    }
}
