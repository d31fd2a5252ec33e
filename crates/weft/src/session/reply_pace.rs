//! Replies paced by their reader ([`Session::get_paced`](super::Session::get_paced)): the
//! replies waiting in a get's channel hold at most about `max_bytes`; beyond, the link that
//! brings more is not read until the reader takes some, so that the replier waits (TCP's
//! own back-pressure) instead of the node holding what it sends.
//!
//! The I/O thread handing a reply on never waits, and never under a lock: it asks for a
//! hook to run once the batch is handed on (`transport::after_this_read`) with the link
//! held (`hold_this_link`); the hook waits for room, the link then served by another
//! thread if it has to (`before_blocking`). A reply from this node's own queryables made
//! on another application thread (a storage's answering thread) waits for room past the
//! bound, as a remote replier does; one made on the thread that asked (a queryable answering
//! inline, before the reader starts) or by a timer ending the get is queued without
//! waiting.

use std::sync::mpsc::{Receiver, RecvError, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::api::Reply;
use crate::transport::{AfterRead, Caller};

/// The longest an I/O thread's hook waits for a reader to take replies: a reader gone
/// quiet that long (its HTTP client stalled, say) no longer holds the link.
const WAIT_MAX: Duration = Duration::from_secs(30);

/// The bytes of a reply, as paced: its payload and key.
pub(crate) fn reply_bytes(reply: &Reply) -> usize {
    match &reply.result {
        Ok(s) => s.payload.len() + s.key_expr.len(),
        Err(e) => e.payload.len(),
    }
}

/// What a get's channel holds, shared by its sink and its reader.
#[derive(Debug)]
pub(crate) struct Pace {
    state: Mutex<Queued>,
    room: Condvar,
    max: usize,
}

#[derive(Debug, Default)]
struct Queued {
    bytes: usize,
    /// The reader is gone: nothing waits for it.
    closed: bool,
}

impl Pace {
    /// A pace of at most about `max` bytes queued.
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(Queued::default()),
            room: Condvar::new(),
            max: max.max(1),
        })
    }

    /// A reply of `bytes` was queued: over the bound, the link it came on waits for room
    /// once its batch is handed on (for a thread serving links; elsewhere nothing waits).
    pub(crate) fn queued(self: &Arc<Self>, bytes: usize, caller: &Caller) {
        let over = {
            let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.bytes += bytes;
            st.bytes > self.max && !st.closed
        };
        if let Some(turn) = caller.turn().filter(|_| over) {
            turn.hold_link_for(self.clone());
        }
    }

    /// The reader took a reply of `bytes`.
    fn taken(&self, bytes: usize) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.bytes = st.bytes.saturating_sub(bytes);
        if st.bytes <= self.max / 2 {
            self.room.notify_all();
        }
    }

    /// The reader is gone.
    fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        self.room.notify_all();
    }

    /// Over the bound, waits as [`Pace::wait`] does; else returns at once. For an
    /// application thread replying to its own session's paced get.
    pub(crate) fn wait_while_over(&self) {
        let over = {
            let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
            st.bytes > self.max && !st.closed
        };
        if over {
            self.wait();
        }
    }

    /// Waits until half the bound is free, the reader is gone, or [`WAIT_MAX`] passed.
    fn wait(&self) {
        let deadline = Instant::now() + WAIT_MAX;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if st.bytes <= self.max / 2 || st.closed {
            return;
        }
        crate::transport::before_blocking();
        while st.bytes > self.max / 2 && !st.closed {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            st = self
                .room
                .wait_timeout(st, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// What a thread serving links does once its batch brought replies beyond a pace: it
/// waits for their reader.
impl AfterRead for Pace {
    fn run(&self) {
        self.wait();
    }
}

/// The replies of a paced get ([`Session::get_paced`](super::Session::get_paced)): a
/// channel that closes once the get is over; taking a reply makes room for more.
#[derive(Debug)]
pub struct PacedReplies {
    replies: Receiver<Reply>,
    pace: Arc<Pace>,
}

impl PacedReplies {
    pub(crate) const fn new(replies: Receiver<Reply>, pace: Arc<Pace>) -> Self {
        Self { replies, pace }
    }

    /// The next reply; `Err` once the get is over and every reply was taken.
    pub fn recv(&self) -> Result<Reply, RecvError> {
        let reply = self.replies.recv()?;
        self.pace.taken(reply_bytes(&reply));
        Ok(reply)
    }

    /// As [`PacedReplies::recv`], waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Reply, RecvTimeoutError> {
        let reply = self.replies.recv_timeout(timeout)?;
        self.pace.taken(reply_bytes(&reply));
        Ok(reply)
    }
}

impl Iterator for PacedReplies {
    type Item = Reply;

    fn next(&mut self) -> Option<Reply> {
        self.recv().ok()
    }
}

impl Drop for PacedReplies {
    fn drop(&mut self) {
        self.pace.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_once_half_is_taken_or_the_reader_goes() {
        let pace = Pace::new(100);
        // Not on an I/O thread: queuing never waits.
        pace.queued(150, &Caller::App);
        let waiter = {
            let pace = pace.clone();
            std::thread::spawn(move || pace.wait())
        };
        pace.taken(60);
        pace.taken(40);
        waiter.join().unwrap();
        assert_eq!(pace.state.lock().unwrap().bytes, 50);
        pace.queued(500, &Caller::App);
        let waiter = {
            let pace = pace.clone();
            std::thread::spawn(move || pace.wait())
        };
        pace.close();
        waiter.join().unwrap();
    }
}
