//! Who writes and when: an I/O thread pumps the queue without ever waiting for the
//! socket; an application thread writes express messages and fragments itself; senders
//! waiting for room are woken as batches go out.

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

use weft_proto::core::Priority;
use weft_transport::queue::READY_MAX;

use super::drops::DropReason;

/// How long, at most, a writer streaming an application thread's small messages lets the
/// pending batch grow before it takes it ([`Transport::let_pending_grow`]); a fifth of
/// the time Zenoh lets a batch fill by default (`transport.link.tx.batching.time_limit`,
/// 1 ms).
const GROW_WAIT: Duration = Duration::from_micros(200);

/// Most full batches an I/O thread writes in one (vectored) write: 4 × 64 KiB, where
/// loopback TCP moves 1 KiB messages a quarter faster than in 64 KiB writes.
const GATHER_MOST: usize = crate::link::MAX_GROUP_BATCHES;

/// Pooled batch buffers an idle link keeps ([`Transport::release_idle_buffers`]).
const SPARE_BATCHES: usize = 1;

/// A pending batch this large is taken at once.
const GROW_ENOUGH: usize = 16 << 10;
use super::{reactor, Partial, SendError, Transport, TxState};

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
        reactor::before_blocking();
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

    /// Wakes the threads waiting on `idle`, if any. After a batch is written, only once
    /// the queue is down to half (or while a fragmented message waits for its turn): a
    /// blocked sender then refills several batches per wake-up instead of one.
    pub(super) fn notify_idle(&self, st: &TxState, batch_written: bool) {
        if st.idle_waiters == 0 {
            return;
        }
        if batch_written && st.queue.ready_count() > READY_MAX / 2 && !st.queue.is_fragmenting() {
            return;
        }
        self.idle.notify_all();
    }

    /// Asks an I/O thread to write what is queued (once until it starts): the one that
    /// serves this link, or this thread after the event it is handling if it is one. Not
    /// while a batch waits for the socket to take the rest of it: the socket's writable
    /// event has the writer write it and go on with the queue (a sender streaming into a
    /// full socket would otherwise wake the writer for each few messages, to find the
    /// socket still full).
    pub(super) fn wake_writer(&self, st: &mut TxState) {
        if st.write_scheduled || st.partial.is_some() {
            return;
        }
        if let Some(me) = self.me.upgrade() {
            st.write_scheduled = true;
            reactor::schedule_write(me);
        }
    }

    /// Releases the link after an application thread's write: if anything came in the
    /// meantime, or an I/O thread found the link held, an I/O thread takes over.
    pub(super) fn release_link(&self, st: &mut TxState) {
        st.writing = false;
        let manual = self.manual_batching.load(Ordering::Relaxed);
        if std::mem::take(&mut st.pump_again)
            || st.queue.has_work(manual)
            || !st.queue.overflow_is_empty()
        {
            self.wake_writer(st);
        }
        self.notify_idle(st, false);
    }

    /// Writes what is queued, highest priority first, without ever waiting: on an I/O
    /// thread. A batch the socket takes only part of is kept, and the rest written when
    /// the socket is writable again ([`Transport::pump`] on its writable event).
    pub(crate) fn pump(&self) {
        let mut st = self.lock();
        st.write_scheduled = false;
        if st.writing && st.partial.is_none() {
            // An application thread (or another I/O thread) writes: it tries again.
            st.pump_again = true;
            return;
        }
        if self.is_closed() && st.partial.is_none() {
            return;
        }
        st.writing = true;
        let mut wrote = false;
        // What this turn may spend, in all, letting pending batches grow.
        let mut grow_budget = GROW_WAIT;
        loop {
            let (batches, mut written, progress) = match st.partial.take() {
                Some(p) => (p.batches, p.written, p.progress),
                None => {
                    let streaming = wrote || st.last_write.elapsed() < GROW_WAIT;
                    if streaming && st.queue.ready_count() == 0 {
                        if grow_budget.is_zero() && st.app_sent && !st.queue.flush_requested() {
                            // This turn has waited its share while the sender streams:
                            // the I/O thread serves its other links, then comes back.
                            st.writing = false;
                            st.pump_again = false;
                            self.notify_idle(&st, wrote);
                            drop(st);
                            if let Some(me) = self.me.upgrade() {
                                reactor::write_later(me);
                            }
                            return;
                        }
                        st = self.let_pending_grow(st, &mut grow_budget);
                    }
                    let manual = self.manual_batching.load(Ordering::Relaxed);
                    let Some(first) = st.queue.next_batch(manual) else {
                        break;
                    };
                    let mut batches = std::mem::take(&mut st.gathered);
                    batches.push(first);
                    // Full batches waiting behind it go in the same write (a stream link
                    // takes several in one system call).
                    while batches.len() < GATHER_MOST && !self.link.is_datagram() {
                        match st.queue.next_batch_above(None, false) {
                            Some(b) => batches.push(b),
                            None => break,
                        }
                    }
                    (batches, 0, Instant::now())
                }
            };
            // Messages queued while this thread writes are taken by this same loop:
            // their senders need not wake an I/O thread.
            st.write_scheduled = true;
            drop(st);
            let before = written;
            let result = {
                let _writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
                self.link.write_batches_from(&batches, &mut written)
            };
            st = self.lock();
            match result {
                Ok(true) => {
                    let mut batches = batches;
                    for batch in batches.drain(..) {
                        self.count_written(batch.len());
                        st.queue.batch_written(batch);
                    }
                    st.gathered = batches;
                    st.last_write = Instant::now();
                    wrote = true;
                    if let Err(waited) = self.refill(&mut st) {
                        st.writing = false;
                        st.write_scheduled = false;
                        drop(st);
                        tracing::warn!(
                            "closing {} ({}): forwarded `block` messages waited {waited:?} for room",
                            self.describe,
                            self.peer_zid()
                        );
                        self.abort();
                        return;
                    }
                    self.notify_idle(&st, true);
                }
                Ok(false) => {
                    let progress = if written > before {
                        Instant::now()
                    } else {
                        progress
                    };
                    st.partial = Some(Partial {
                        batches,
                        written,
                        progress,
                    });
                    // Unless it raced with a writable event another thread gave up on
                    // (then it tries again), the socket's next writable event goes on.
                    st.write_scheduled = false;
                    if !std::mem::take(&mut st.pump_again) {
                        self.notify_idle(&st, wrote);
                        return;
                    }
                }
                Err(_) => {
                    for batch in batches {
                        st.queue.recycle(batch);
                    }
                    st.writing = false;
                    st.write_scheduled = false;
                    drop(st);
                    self.fail_link();
                    return;
                }
            }
        }
        st.writing = false;
        st.write_scheduled = false;
        st.pump_again = false;
        self.notify_idle(&st, wrote);
    }

    /// While an application thread streams small messages (the writer wrote a batch less
    /// than [`GROW_WAIT`] ago), gives it a moment to add to the pending batch before the
    /// writer takes it, for as long as the batch keeps growing (at most [`GROW_WAIT`] in
    /// all in one turn of the writer, `budget`; until [`GROW_ENOUGH`] bytes): the next
    /// write then carries thousands of messages instead of a few dozen, and the sender's
    /// core is not spent on system calls (nor a slower sender's, such as a Python loop,
    /// on waking the writer for each few). The writer yields its core meanwhile (on two
    /// cores, to the sender). It does not wait when a message comes alone (the batch
    /// stops growing), for an express message (a flush is asked), under manual batching,
    /// nor while anyone waits for the link or for room (a fragmented message, a full
    /// queue); forwarded messages (queued by I/O threads) never start a wait.
    fn let_pending_grow<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        budget: &mut Duration,
    ) -> MutexGuard<'s, TxState> {
        let manual = self.manual_batching.load(Ordering::Relaxed);
        let mut seen = st.queue.pending_bytes();
        let worth_waiting = |st: &TxState, seen: usize| {
            seen > 0
                && seen < GROW_ENOUGH
                && st.queue.ready_count() == 0
                // An express message waits for nothing; under manual batching the
                // pending batches wait for their flush anyway.
                && !st.queue.flush_requested()
                && !manual
                // Nobody waits for the link (a fragmented message) or for room.
                && st.idle_waiters == 0
                && !st.queue.is_fragmenting()
        };
        if !std::mem::take(&mut st.app_sent) || !worth_waiting(&st, seen) {
            return st;
        }
        let start = Instant::now();
        loop {
            if start.elapsed() >= *budget {
                *budget = Duration::ZERO;
                return st;
            }
            drop(st);
            std::thread::yield_now();
            st = self.lock();
            let now = st.queue.pending_bytes();
            if now <= seen || !worth_waiting(&st, now) {
                *budget = budget.saturating_sub(start.elapsed());
                return st;
            }
            seen = now;
        }
    }

    /// Frees the transmit buffers of a link that has written nothing for `idle` (all
    /// but [`SPARE_BATCHES`] pooled batches, and its empty pending batches'): a burst
    /// toward a destination does not leave it a megabyte for good.
    pub(crate) fn release_idle_buffers(&self, idle: Duration) {
        let mut st = self.lock();
        if st.writing || st.partial.is_some() || st.last_write.elapsed() < idle {
            return;
        }
        st.queue.release_idle_buffers(SPARE_BATCHES);
    }

    /// Whether full batches wait in the queue (bulk traffic).
    pub(crate) fn has_full_batches(&self) -> bool {
        self.lock().queue.ready_count() > 0
    }

    /// Moves forwarded messages waiting in the overflow into the queue as room allows
    /// (see [`TxQueue::refill`]); `Err` with how long the oldest has waited when that is
    /// past `wait_before_close`. Once the overflow is small again, the links paused on it
    /// are read again (waking them takes an I/O thread's command queue, never another
    /// transport's lock).
    pub(super) fn refill(&self, st: &mut TxState) -> Result<(), Duration> {
        let dropped = st
            .queue
            .refill(Instant::now(), self.limits.wait_before_close)?;
        self.count_drops(DropReason::Unqueueable, dropped);
        Self::drained(st).into_iter().for_each(reactor::resume);
        Ok(())
    }

    /// Since when a batch begun by an I/O thread has waited for the socket to take more
    /// of it, if one has.
    pub(crate) fn write_stalled_since(&self) -> Option<Instant> {
        self.lock().partial.as_ref().map(|p| p.progress)
    }

    /// Counts a batch written.
    fn count_written(&self, len: usize) {
        self.stats.batches_out.fetch_add(1, Ordering::Relaxed);
        self.stats
            .bytes_out
            .fetch_add(len as u64, Ordering::Relaxed);
        self.last_tx_ms
            .store(self.epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
    }

    /// A write failed: the link is shut and the transport closed.
    fn fail_link(&self) {
        self.link.shutdown();
        let _ = self.mark_closed();
    }

    /// Writes everything queued and pending from this thread (express messages).
    pub(super) fn write_all<'s>(&'s self, st: MutexGuard<'s, TxState>) -> Result<(), SendError> {
        self.drain(st, None, true).1
    }

    /// Writes, from this thread, the batches of priorities higher than `above` (all when
    /// `None`), highest first.
    pub(super) fn drain<'s>(
        &'s self,
        mut st: MutexGuard<'s, TxState>,
        above: Option<Priority>,
        pending_too: bool,
    ) -> (MutexGuard<'s, TxState>, Result<(), SendError>) {
        st.writing = true;
        let mut result = Ok(());
        while let Some(batch) = st.queue.next_batch_above(above, pending_too) {
            drop(st);
            result = self.write(&batch);
            st = self.lock();
            if result.is_err() {
                st.queue.recycle(batch);
                break;
            }
            st.queue.batch_written(batch);
        }
        self.release_link(&mut st);
        (st, result)
    }

    fn write(&self, batch: &[u8]) -> Result<(), SendError> {
        self.write_parts(&[batch])
    }

    /// Writes one batch made of `parts` laid end to end.
    pub(super) fn write_parts(&self, parts: &[&[u8]]) -> Result<(), SendError> {
        let writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let written = self.link.write_batch_parts(parts);
        drop(writing);
        self.account_written(written, [parts.iter().map(|p| p.len()).sum()])
    }

    /// Writes several batches, each made of its parts laid end to end, in one vectored
    /// write ([`crate::link::Link::write_batch_group`]).
    pub(super) fn write_batch_group(
        &self,
        batches: &[[&[u8]; crate::link::MAX_BATCH_PARTS]],
    ) -> Result<(), SendError> {
        let writing = self.write_lock.lock().unwrap_or_else(|e| e.into_inner());
        let written = self.link.write_batch_group(batches);
        drop(writing);
        let lens = batches
            .iter()
            .map(|parts| parts.iter().map(|p| p.len()).sum());
        self.account_written(written, lens)
    }

    /// Counts the batches of `lens` bytes a sending thread wrote, or, if the write
    /// failed, shuts the link.
    fn account_written(
        &self,
        written: std::io::Result<()>,
        lens: impl IntoIterator<Item = usize>,
    ) -> Result<(), SendError> {
        match written {
            Ok(()) => {
                lens.into_iter().for_each(|len| self.count_written(len));
                Ok(())
            }
            Err(_) => {
                self.fail_link();
                Err(SendError::Closed)
            }
        }
    }

    /// Manual batching: while on, messages (but express ones) wait in the pending
    /// batches until [`Transport::flush_pending`] or until a batch is full.
    pub fn set_manual_batching(&self, on: bool) {
        for link in self.priority_links.all() {
            link.set_manual_batching(on);
        }
        self.manual_batching.store(on, Ordering::Relaxed);
        if !on {
            self.flush_pending();
        }
    }

    /// Hands every pending batch to the writer thread.
    pub fn flush_pending(&self) {
        for link in self.priority_links.all() {
            link.flush_pending();
        }
        let mut st = self.lock();
        st.queue.request_flush();
        self.wake_writer(&mut st);
    }

    /// Sends a KeepAlive if nothing else is being written or waits to be.
    pub(super) fn keep_alive(&self) {
        let mut st = self.lock();
        if st.writing || !st.queue.push_keep_alive() {
            return;
        }
        self.wake_writer(&mut st);
    }
}
