//! Closing a transport: flushing what is pending, the Close message, ending the sending
//! side, and waiting for the peer's end; or aborting at once when the peer takes nothing.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use weft_proto::transport::CloseReason;
use weft_transport::connection::EndReason;

use super::drops::DropReason;
use super::{reactor, Caller, Transport, CLOSE_DRAIN};

impl Transport {
    /// Closes this transport at once, without flushing: its peer does not read. What
    /// waits in the overflow is dropped, and counted.
    pub(super) fn abort(&self) {
        if !self.mark_closed() {
            return;
        }
        self.note_end(|| "closed by this node (its peer took nothing)".to_owned());
        let (closed, unqueueable, paused) = {
            let mut st = self.lock();
            st.out.abort(EndReason::LinkFailed);
            while st.out.poll_event().is_some() {}
            let (closed, unqueueable) = st.take_drops();
            (closed, unqueueable, std::mem::take(&mut st.paused_sources))
        };
        self.count_drops(DropReason::Closed, closed);
        self.count_drops(DropReason::Unqueueable, unqueueable);
        paused.into_iter().for_each(reactor::resume);
        // A thread waiting for the socket to take a write sees the shutdown at once.
        self.link.shutdown();
    }

    /// Marks the transport closed and wakes every thread waiting on it (the writer, and
    /// senders blocked for room, which then give up with `Closed`); returns whether it was
    /// open until now. Must not be called with the state lock held.
    pub(super) fn mark_closed(&self) -> bool {
        let was_open = !self.closed.swap(true, Ordering::AcqRel);
        let _st = self.lock();
        self.idle.notify_all();
        was_open
    }

    /// Closes the transport, telling the peer why, after writing what is pending (so that
    /// a put followed by a close is not lost): a thread serving links writes only what
    /// the socket takes at once, and does not wait for the peer's end.
    pub(crate) fn close(&self, reason: CloseReason, caller: &Caller) {
        self.start_close(reason, caller);
        self.wait_closed(Instant::now() + CLOSE_DRAIN, caller);
    }

    /// The first half of [`Transport::close`]: writes what is pending and the Close,
    /// and ends the sending side, without waiting for the peer to end its own. Closing
    /// many transports, start them all, then wait for them all
    /// ([`Transport::wait_closed`]).
    pub(crate) fn start_close(&self, reason: CloseReason, caller: &Caller) {
        let flush_by = (!caller.serves_links()).then(|| Instant::now() + FLUSH_ON_CLOSE);
        self.start_close_by(reason, flush_by, caller);
    }

    /// As [`Transport::start_close`], writing what is pending until `flush_by` at most
    /// (`None`: only what the socket takes at once). Closing every transport of a
    /// session, one peer that takes nothing cannot make the others wait their turn: they
    /// all share one time.
    pub(crate) fn start_close_by(
        &self,
        reason: CloseReason,
        flush_by: Option<Instant>,
        caller: &Caller,
    ) {
        for link in self.priority_links.take_all() {
            link.close(reason, caller);
        }
        if self.is_closed() {
            return;
        }
        self.note_end(|| format!("closed by this node ({reason})"));
        // A serial line is the next session's as soon as this one closes.
        self.link.stop_reading();
        let mut st = self.lock();
        st.out.close(reason);
        loop {
            let result;
            (st, result) = self.write_loop(st);
            let now = Instant::now();
            let Some(deadline) = flush_by.filter(|by| now < *by) else {
                break;
            };
            if result.is_err() || st.out.is_ended() {
                break;
            }
            let wait = deadline
                .saturating_duration_since(now)
                .min(Duration::from_millis(10));
            if st.out.stalled_since().is_some() {
                // The socket is full: wait for room, then write on.
                drop(st);
                self.link.writable_within(wait);
                st = self.lock();
            } else {
                // Another thread writes: it wakes this one when it is done.
                st = self.wait_idle(st, Some(wait));
            }
        }
        self.after_events(st);
        self.flush_held_by(flush_by);
        if !self.mark_closed() {
            return;
        }
        let _writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        // Only the sending side: closing a socket whose peer's bytes are still unread
        // makes the kernel reset the connection, and the peer's kernel then discards
        // what it had received but not yet read — the last messages sent. The reader
        // thread reads to the end of stream (the peer closes on our Close) first.
        self.link.shutdown_write();
    }

    /// Writes what the link sealed beyond its socket (TLS records, the Close among them)
    /// before its end, waiting for room until `flush_by` (`None`: what the socket takes
    /// at once).
    fn flush_held_by(&self, flush_by: Option<Instant>) {
        loop {
            let held = {
                let _writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
                self.link.flush_held()
            };
            let now = Instant::now();
            match (held, flush_by) {
                (Ok(false), Some(by)) if now < by => {
                    let wait = by.saturating_duration_since(now);
                    self.link
                        .writable_within(wait.min(Duration::from_millis(10)));
                }
                _ => return,
            }
        }
    }

    /// Waits until `deadline` at most for the peer to have closed its side after
    /// [`Transport::start_close`] (its link was read to the end). Returns at once for a
    /// thread serving links (the I/O threads are the ones reading it).
    pub(crate) fn wait_closed(&self, deadline: Instant, caller: &Caller) {
        if caller.serves_links() {
            return;
        }
        super::before_blocking();
        let mut done = self.reader_done.lock().unwrap_or_else(|e| e.into_inner());
        while !*done {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            done = self
                .reader_exit
                .wait_timeout(done, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Marks the transport's link as read to its end, waking who waits for it.
    /// Why this transport ended, once it has: closed by this node or by the peer (with
    /// the Close's reason), its lease expired, a malformed batch, or its link ended
    /// without a Close. The first cause known is kept.
    pub(crate) fn end_reason(&self) -> Option<&str> {
        self.end_reason.get().map(String::as_str)
    }

    /// Records why the transport ends, unless a cause is known already.
    pub(super) fn note_end(&self, why: impl FnOnce() -> String) {
        if self.end_reason.get().is_none() {
            let _ = self.end_reason.set(why());
        }
    }

    pub(super) fn set_ended(&self) {
        let then = {
            let mut done = self.reader_done.lock().unwrap_or_else(|e| e.into_inner());
            *done = true;
            std::mem::take(&mut *self.on_end.lock().unwrap_or_else(|e| e.into_inner()))
        };
        self.reader_exit.notify_all();
        for f in then {
            f();
        }
    }

    /// Calls `then` once the transport has ended (closed, and its link read to its end, or
    /// never served): at once
    /// if it has, else on the thread that ends it.
    pub(crate) fn when_ended(&self, then: Box<dyn FnOnce() + Send>) {
        let done = self.reader_done.lock().unwrap_or_else(|e| e.into_inner());
        if *done {
            drop(done);
            then();
            return;
        }
        self.on_end
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(then);
    }
}

/// How long a close waits for a write in progress before giving up on pending data.
pub(crate) const FLUSH_ON_CLOSE: Duration = Duration::from_secs(5);
