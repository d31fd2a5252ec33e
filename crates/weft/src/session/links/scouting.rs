//! Multicast scouting on the links loop, for every session that scouts: answering the
//! Scouts that come to the group ([`Answering`]), and a router's or peer's autoconnect
//! ([`Autoconnecting`]: Scouts sent at growing intervals, as timers, and the Hellos that
//! answer read when they come). No thread of its own, no polling: each waits in the
//! loop's epoll for its socket, and reads at most a bounded number of datagrams per
//! turn (the rest at the next turn, at once).

use std::os::fd::RawFd;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::super::discovery;
use super::super::Inner;
use crate::scouting::responder::Responder;
use crate::scouting::{Received, Scouter, SCOUT_PERIOD_MAX, SCOUT_PERIOD_MIN};

/// Most datagrams an autoconnecting session reads per turn.
const MOST_PER_TURN: usize = 64;

/// A session answering Scouts.
pub(crate) struct Answering {
    inner: Weak<Inner>,
    responder: Responder,
    /// Datagrams may still wait (the last turn stopped at its bound).
    more: bool,
}

impl Answering {
    /// `inner` answering with `responder`.
    pub(crate) fn new(inner: &Arc<Inner>, responder: Responder) -> Self {
        Self {
            inner: Arc::downgrade(inner),
            responder,
            more: true,
        }
    }

    /// The session.
    pub(super) const fn inner(&self) -> &Weak<Inner> {
        &self.inner
    }

    /// The group socket.
    pub(super) fn raw_fd(&self) -> RawFd {
        self.responder.raw_fd()
    }

    /// When to run again whatever the socket says: at once while datagrams may wait.
    pub(super) fn due(&self) -> Option<Instant> {
        self.more.then(Instant::now)
    }

    /// Answers the Scouts waiting.
    pub(super) fn run(&mut self) {
        let Some(inner) = self.inner.upgrade() else {
            self.more = false;
            return;
        };
        let listening = inner
            .listening
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        self.more = self.responder.answer_waiting(&listening);
    }
}

/// A session scouting for the nodes it connects to.
pub(crate) struct Autoconnecting {
    inner: Weak<Inner>,
    scouter: Scouter,
    next_scout: Instant,
    period: Duration,
    /// A Scout could not be sent (said once).
    warned: bool,
    /// Datagrams may still wait (the last turn stopped at its bound).
    more: bool,
}

impl Autoconnecting {
    /// `inner` scouting with `scouter`, whose first Scout leaves at once.
    pub(crate) fn new(inner: &Arc<Inner>, scouter: Scouter) -> Self {
        Self {
            inner: Arc::downgrade(inner),
            scouter,
            next_scout: Instant::now(),
            period: SCOUT_PERIOD_MIN,
            warned: false,
            more: true,
        }
    }

    /// The session.
    pub(super) const fn inner(&self) -> &Weak<Inner> {
        &self.inner
    }

    /// The socket the Hellos come to.
    pub(super) fn raw_fd(&self) -> RawFd {
        self.scouter.raw_fd()
    }

    /// When to run again whatever the socket says: the next Scout, or at once while
    /// datagrams may wait.
    pub(super) fn due(&self) -> Option<Instant> {
        Some(if self.more {
            Instant::now()
        } else {
            self.next_scout
        })
    }

    /// Sends the Scout due, and connects to the nodes whose Hellos wait.
    pub(super) fn run(&mut self, now: Instant) {
        let Some(inner) = self.inner.upgrade() else {
            self.more = false;
            return;
        };
        if now >= self.next_scout {
            if let Err(e) = self.scouter.send() {
                if !self.warned {
                    tracing::warn!("scouting: {e}");
                    self.warned = true;
                }
            }
            self.next_scout = now + self.period;
            self.period = (self.period * 2).min(SCOUT_PERIOD_MAX);
        }
        self.more = true;
        for _ in 0..MOST_PER_TURN {
            match self.scouter.try_recv() {
                Received::Hello(hello) => discovery::consider(&inner, &hello),
                Received::Other => {}
                Received::Nothing => {
                    self.more = false;
                    break;
                }
            }
        }
    }
}
