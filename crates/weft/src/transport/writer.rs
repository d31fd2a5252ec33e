//! Writing the link: whoever holds the connection's [`Transmit`] writes it, without ever
//! waiting for the socket — the link's I/O thread ([`Transport::pump`]) or an application
//! thread sending an express message, or a large one in fragments, on an idle link
//! ([`Transport::write_here`]), or one streaming messages of a few fragments, written from
//! the message's own bytes ([`Transport::write_direct`]); which one is the sending half's
//! decision ([`weft_transport::connection::Outbound`]). A transmit the socket takes in
//! part is finished on the socket's next writable event. Senders waiting for room are woken as
//! batches go out.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use std::io::IoSlice;

use weft_proto::network::NetworkMessage;
use weft_transport::connection::{
    DirectFragment, DirectWrite, OutboundStats, Transmit, WriteHint, FRAGMENT_SLICES, GATHER_MAX,
};

use super::{reactor, Caller, SendError, Transport, TxState};

/// The fragments of a direct write's last group the socket did not take whole:
/// `fragments[from..len]`, of which the first has `written` bytes in the socket.
struct Unwritten {
    fragments: [DirectFragment; GATHER_MAX],
    len: usize,
    from: usize,
    written: usize,
}

/// Longest single wait of a sender for its socket to take more of its message, between
/// two looks at how long it may still wait.
const DIRECT_WAIT_STEP: Duration = Duration::from_millis(10);

impl Transport {
    /// Waits on `idle` (at most `timeout`), counted so that the writer wakes no one when
    /// no one waits.
    pub(super) fn wait_idle<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'s, TxState> {
        // Waiting in a hook of an I/O thread: another thread serves its links (this
        // one's writer among them) meanwhile.
        super::before_blocking();
        st.idle_waiters += 1;
        let mut st = match timeout {
            None => self.idle.wait(st).unwrap_or_else(|e| e.into_inner()),
            Some(t) => {
                self.idle
                    .wait_timeout(st, t)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            }
        };
        st.idle_waiters -= 1;
        st
    }

    /// Wakes the threads waiting on `idle`, if any.
    pub(super) fn notify_idle(&self, st: &TxState) {
        if st.idle_waiters > 0 {
            self.idle.notify_all();
        }
    }

    /// Has what is queued written: by this thread after the event it is handling, for a
    /// thread serving links, else by the I/O thread that serves this link. The sending
    /// half asked for it ([`weft_transport::connection::WriteHint::Wake`]) once until the
    /// writer begins.
    pub(super) fn wake_writer(&self, caller: &Caller) {
        if let Some(me) = self.me.upgrade() {
            match caller.turn() {
                Some(turn) => turn.schedule_write(me),
                None => reactor::write_later(me),
            }
        }
    }

    /// Writes what the sending half hands out, without ever waiting for the socket: on an
    /// I/O thread (asked to write, or the socket writable again). While the application
    /// streams into a pending batch held for more, the thread yields and looks again, at
    /// most the batching time limit (200 µs) in all.
    pub(crate) fn pump(&self) {
        // What the link sealed beyond its socket went with no transmit of its own (the
        // link orders its own output: no need to wait for a writer holding the link).
        if self.link.flush_held().is_err() {
            self.fail_link();
            return;
        }
        let mut st = self.lock();
        loop {
            let result;
            (st, result) = self.write_loop(st);
            let Some(until) = st.out.held_until() else {
                break;
            };
            if result.is_err() {
                break;
            }
            // The application streams into the pending batch: this thread waits until the
            // next look without giving its core away (a yield can hand it to another
            // thread for milliseconds, and this thread serves other links), then looks
            // again; the sending half ends the hold once the batch stops growing, is big
            // enough, or has waited its time (200 µs at most).
            drop(st);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            st = self.lock();
        }
        self.after_events(st);
    }

    /// Writes from this application thread what the sending half hands out (an express
    /// message, or a large one in fragments, on an idle link: no hand-over on its way).
    /// What the socket does not take now is left to the link's I/O thread, on the
    /// socket's writable event.
    pub(super) fn write_here(&self, st: MutexGuard<'_, TxState>) -> Result<(), SendError> {
        let (st, result) = self.write_loop(st);
        let held = st.out.held_until().is_some();
        self.after_events(st);
        if held {
            self.wake_writer(&Caller::App);
        }
        result
    }

    /// Writes from this application thread its message in fragments, from the message's
    /// own bytes (the sending half's [`weft_transport::connection::Sent::Direct`]: an
    /// application streaming such messages on a link nobody writes), then what was
    /// queued meanwhile. What the socket does not take now goes back to the sending half,
    /// for the link's I/O thread to finish on the socket's writable event.
    pub(super) fn write_direct(
        &self,
        st: MutexGuard<'_, TxState>,
        mut direct: DirectWrite,
        msg: &NetworkMessage<'_>,
    ) -> Result<(), SendError> {
        let before = st.out.stats();
        drop(st);
        let bulk = msg.bulk().unwrap_or_default();
        let outcome = {
            let _writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
            self.write_fragments(&mut direct, bulk)
        };
        let mut st = self.lock();
        let now = Instant::now();
        let result = match outcome {
            Ok(None) => {
                let hint = st.out.direct_done(direct, now);
                self.count_written(before, st.out.stats());
                if let WriteHint::WriteNow = hint {
                    let result;
                    (st, result) = self.write_loop(st);
                    result
                } else {
                    Ok(())
                }
            }
            Ok(Some(Unwritten {
                fragments,
                len,
                from,
                written,
            })) => {
                let unwritten = &fragments[from..len];
                st.out.direct_blocked(direct, unwritten, written, bulk, now);
                self.count_written(before, st.out.stats());
                Ok(())
            }
            Err(_) => {
                st.out.direct_failed(direct, now);
                Err(SendError::Closed)
            }
        };
        self.notify_idle(&st);
        self.after_events(st);
        result
    }

    /// Writes the fragments of `direct`: on a link whose writes seal (TLS), each group
    /// of up to [`GATHER_MAX`] in one vectored write (a message's small last fragment is
    /// sealed in the record of the one before); elsewhere one fragment a write (groups
    /// cost peer-to-peer 64 KiB over TCP a sixth of its rate, bench/RESULTS.md). Where
    /// the socket takes no more, the sender waits for it (a `block` message on a link
    /// that encrypts, within its time) or stops: `Some` says which fragments of the last
    /// group are not written whole.
    fn write_fragments(
        &self,
        direct: &mut DirectWrite,
        bulk: &[u8],
    ) -> std::io::Result<Option<Unwritten>> {
        let group_max = if self.link.seals_on_write() {
            GATHER_MAX
        } else {
            1
        };
        loop {
            let Some(first) = direct.next_fragment() else {
                return Ok(None);
            };
            let mut fragments = [first; GATHER_MAX];
            let mut len = 1;
            while len < group_max {
                let Some(fragment) = direct.next_fragment() else {
                    break;
                };
                fragments[len] = fragment;
                len += 1;
            }
            let group = &fragments[..len];
            let total: usize = group.iter().map(DirectFragment::framed_len).sum();
            let mut written = 0;
            loop {
                let mut slices = [IoSlice::new(&[]); FRAGMENT_SLICES * GATHER_MAX];
                let mut n = 0;
                for fragment in group {
                    n += fragment.io_slices(direct.parts(bulk), &mut slices[n..]);
                }
                let mut bufs = &mut slices[..n];
                IoSlice::advance_slices(&mut bufs, written);
                written += self.link.write_slices_now(bufs)?;
                if written == total {
                    break;
                }
                // The socket takes no more: wait for it (a `block` message on a link that
                // encrypts) or hand the rest over.
                let now = Instant::now();
                let Some(until) = self.lock().out.direct_wait(direct, now) else {
                    let mut from = 0;
                    while written >= group[from].framed_len() {
                        written -= group[from].framed_len();
                        from += 1;
                    }
                    return Ok(Some(Unwritten {
                        fragments,
                        len,
                        from,
                        written,
                    }));
                };
                let wait = until.saturating_duration_since(now).min(DIRECT_WAIT_STEP);
                self.link.writable_within(wait);
            }
        }
    }

    /// Writes transmits until there is none, or the socket takes no more.
    pub(super) fn write_loop<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
    ) -> (MutexGuard<'s, TxState>, Result<(), SendError>) {
        let mut result = Ok(());
        while let Some(t) = st.out.poll_transmit(Instant::now()) {
            drop(st);
            let written = {
                let _writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
                self.link.write_transmit(&t)
            };
            st = self.lock();
            match written {
                Ok(n) => {
                    if !self.transmitted(&mut st, t, n) {
                        break;
                    }
                }
                Err(_) => {
                    st.out.link_failed(t);
                    result = Err(SendError::Closed);
                    break;
                }
            }
        }
        self.notify_idle(&st);
        (st, result)
    }

    /// The link took `n` bytes of `t`: the sending half learns it, the counters count
    /// the batches written whole. Whether to write on now.
    fn transmitted(&self, st: &mut TxState, t: Transmit, n: usize) -> bool {
        let before = st.out.stats();
        let again = st.out.transmitted(t, n, Instant::now());
        self.count_written(before, st.out.stats());
        again
    }

    /// Frees the transmit buffers of a link that has written nothing for `idle`: a burst
    /// toward a destination does not leave it a megabyte for good.
    pub(crate) fn release_idle_buffers(&self, idle: Duration) {
        let mut st = self.lock();
        if st.out.last_tx().elapsed() < idle {
            return;
        }
        st.out.release_idle_buffers();
    }

    /// Whether full batches wait in the queue (bulk traffic).
    pub(crate) fn has_full_batches(&self) -> bool {
        self.lock().out.has_full_batches()
    }

    /// Since when a transmit the socket took part of has waited for it to take more, if
    /// one has.
    pub(crate) fn write_stalled_since(&self) -> Option<Instant> {
        self.lock().out.stalled_since()
    }

    /// Counts the batches written between two readings of the sending half's counters.
    fn count_written(&self, before: OutboundStats, after: OutboundStats) {
        let batches = after.batches - before.batches;
        if batches == 0 {
            return;
        }
        self.stats.batches_out.fetch_add(batches, Ordering::Relaxed);
        self.stats
            .bytes_out
            .fetch_add(after.bytes - before.bytes, Ordering::Relaxed);
        self.last_tx_ms
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// A write failed: the link is shut and the transport closed.
    pub(super) fn fail_link(&self) {
        self.link.shutdown();
        let _ = self.mark_closed();
    }

    /// Manual batching: while on, messages (but express ones) wait in the pending
    /// batches until [`Transport::flush_pending`] or until a batch is full.
    pub(crate) fn set_manual_batching(&self, on: bool) {
        for link in self.priority_links.all() {
            link.set_manual_batching(on);
        }
        self.manual_batching.store(on, Ordering::Relaxed);
        let mut st = self.lock();
        let hint = st.out.set_manual_batching(on);
        self.write_by_its_thread(st, hint);
    }

    /// Hands every pending batch to the writer thread.
    pub(crate) fn flush_pending(&self) {
        for link in self.priority_links.all() {
            link.flush_pending();
        }
        let mut st = self.lock();
        let hint = st.out.flush();
        self.write_by_its_thread(st, hint);
    }

    /// Sends a KeepAlive if nothing else is being written or waits to be.
    pub(super) fn keep_alive(&self) {
        let mut st = self.lock();
        let hint = st.out.keep_alive();
        self.write_by_its_thread(st, hint);
    }
}

impl Transport {
    /// Has what the sending half said to write written by the link's own I/O thread
    /// (whoever asks: a flush, a keep-alive, a change of batching).
    fn write_by_its_thread(&self, st: MutexGuard<'_, TxState>, hint: WriteHint) {
        drop(st);
        if matches!(hint, WriteHint::WriteNow | WriteHint::Wake) {
            if let Some(me) = self.me.upgrade() {
                reactor::write_later(me);
            }
        }
    }
}
