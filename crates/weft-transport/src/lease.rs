//! Lease and keep-alive timing of a transport, with time passed in.
//!
//! Each side announces its lease; the other side declares it dead after that long without
//! receiving any batch. Each side sends something at least every `own lease / 4`: a
//! KeepAlive when it had nothing else to send (so keep-alives are never sent while data
//! flows).

use core::time::Duration;
use std::time::Instant;

/// Keep-alives sent per lease period (Zenoh's default).
pub const KEEP_ALIVES_PER_LEASE: u32 = 4;

/// What the transport should do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaseAction {
    /// Nothing until [`Liveness::next_deadline`].
    Idle,
    /// Send a KeepAlive: nothing was sent for a keep-alive period.
    SendKeepAlive,
    /// The peer sent nothing for its whole lease: it is dead.
    Expired,
}

/// Tracks when the peer was last heard and when this side last sent.
#[derive(Debug, Clone, Copy)]
pub struct Liveness {
    peer_lease: Duration,
    keep_alive: Duration,
    last_rx: Instant,
    last_tx: Instant,
}

impl Liveness {
    /// Starts tracking at `now`, with this side's and the peer's announced leases.
    pub fn new(own_lease: Duration, peer_lease: Duration, now: Instant) -> Self {
        Self {
            peer_lease,
            keep_alive: own_lease / KEEP_ALIVES_PER_LEASE,
            last_rx: now,
            last_tx: now,
        }
    }

    /// A batch was received.
    pub fn on_receive(&mut self, now: Instant) {
        self.last_rx = now;
    }

    /// A batch was sent.
    pub fn on_send(&mut self, now: Instant) {
        self.last_tx = now;
    }

    /// What to do at `now`.
    pub fn poll(&self, now: Instant) -> LeaseAction {
        if now.saturating_duration_since(self.last_rx) >= self.peer_lease {
            LeaseAction::Expired
        } else if now.saturating_duration_since(self.last_tx) >= self.keep_alive {
            LeaseAction::SendKeepAlive
        } else {
            LeaseAction::Idle
        }
    }

    /// When [`poll`](Self::poll) should be called next.
    pub fn next_deadline(&self) -> Instant {
        (self.last_rx + self.peer_lease).min(self.last_tx + self.keep_alive)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_alive_only_when_silent_and_expiry_after_the_peer_lease() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut l = Liveness::new(ms(10_000), ms(6_000), t0);
        assert_eq!(l.poll(t0 + ms(2_000)), LeaseAction::Idle);
        assert_eq!(l.poll(t0 + ms(2_500)), LeaseAction::SendKeepAlive);
        // Data sent at 2.4 s: no keep-alive due at 2.5 s.
        l.on_send(t0 + ms(2_400));
        assert_eq!(l.poll(t0 + ms(2_500)), LeaseAction::Idle);
        assert_eq!(l.next_deadline(), t0 + ms(4_900));
        l.on_receive(t0 + ms(3_000));
        assert_eq!(l.poll(t0 + ms(8_999)), LeaseAction::SendKeepAlive);
        assert_eq!(l.poll(t0 + ms(9_000)), LeaseAction::Expired);
    }
}
