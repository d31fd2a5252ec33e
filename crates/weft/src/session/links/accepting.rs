//! Listeners and the handshakes of the links they accept: every connection waiting to be
//! accepted is taken at once; each starts its handshake if one of the
//! `transport.unicast.accept_pending` places is free (else it is closed unanswered), to be
//! over within `transport.unicast.accept_timeout`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Interest, Token};

use super::{Entry, Outcome, Purpose, Runner};
use crate::link::Listener;
use crate::session::Inner;
use crate::transport::Handshake;

/// Counts an accepted link's handshake in progress; releases it when dropped.
pub(super) struct PendingAccept(Arc<Inner>);

impl PendingAccept {
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
    pub(super) fn add_listener(&mut self, inner: &Arc<Inner>, listener: Listener) {
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
        self.accept_all(token);
    }

    /// Accepts every connection waiting on the listener of `token`.
    pub(super) fn accept_all(&mut self, token: Token) {
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
                Err(e) if crate::link::is_timeout(&e) => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    l.failed(&e);
                    break;
                }
            };
            l.succeeded();
            let Some(place) = PendingAccept::take(inner) else {
                // Too many handshakes in progress: this one is closed unanswered.
                if l.refused == 0 {
                    tracing::warn!(
                        "{} handshakes in progress (transport.unicast.accept_pending): \
                         closing new connections until one ends",
                        inner.config.accept_pending
                    );
                }
                l.refused += 1;
                link.shutdown();
                continue;
            };
            if l.refused > 0 {
                tracing::info!("{} connections were closed unanswered", l.refused);
                l.refused = 0;
            }
            let describe = link.describe();
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
                    Purpose::Accepted(place),
                    describe,
                ),
                Err(e) => tracing::info!("refused {describe}: {e}"),
            }
        }
        let udp = matches!(
            self.entries.get(&token),
            Some(Entry::Listener(l)) if l.listener.hands_datagrams_over()
        );
        if udp {
            // Datagrams for links whose handshake runs may have come.
            self.advance_listener_fed();
        }
    }
}

/// An accepted link's handshake is over: its transport goes to the session (which
/// enforces `max_sessions` where it adds the face), or the refusal is logged.
pub(super) fn handshake_done(
    inner: &Arc<Inner>,
    place: PendingAccept,
    describe: &str,
    outcome: Outcome,
) {
    drop(place);
    match outcome {
        Ok(pending) => {
            inner.adopt(pending, false);
        }
        Err(e) => tracing::info!("refused {describe}: {e}"),
    }
}
