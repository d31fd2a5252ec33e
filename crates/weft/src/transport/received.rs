//! The batch a message was received in, for the payloads kept from it.
//!
//! A payload kept past its batch (a subscriber's sample) must leave the reader's buffer,
//! which the next read overwrites. Copied one by one, each payload is an allocation of
//! its own. Instead, the first payload kept from a batch copies the whole batch once, and
//! every later one shares that copy: one allocation per batch, and the copy is one pass
//! over memory.
//!
//! Two bounds keep this from costing memory or time where it does not pay:
//! - **density**: a link's batch is copied whole only when at least a quarter of its
//!   previous batch's bytes were kept payloads, so a subscriber of one key among many
//!   on a link copies only its own payloads, one by one;
//! - **budget**: the whole-batch copies alive at once, process-wide, hold at most
//!   [`SHARED_BATCH_BUDGET`] bytes (a payload kept keeps its batch's copy: a slow reader
//!   of a channel keeps those of the samples it has not read). Past the budget, payloads
//!   are copied one by one again, until copies are released.
//!
//! A thread that copies batches keeps the buffers of its copies once they are released
//! (at most `SPARE_COPIES` of them, outside the budget) and writes its next copies into
//! them (a buffer goes to a batch that fills at least half of it; a copy counts its
//! buffer's whole capacity against the budget): an I/O thread that hands its samples to
//! callbacks itself writes each copy into memory it wrote just before, still in cache,
//! rather than wherever the allocator finds room (which made the copy several times
//! slower).

use std::cell::{Cell, OnceCell, RefCell};
use std::ops::{Deref, Range};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The most bytes that whole-batch copies held by kept payloads may take, process-wide.
pub const SHARED_BATCH_BUDGET: usize = 32 << 20;

/// The released copy buffers a thread that copies batches keeps for its next copies.
const SPARE_COPIES: usize = 4;

/// The largest copy buffer kept for reuse: a batch's largest size.
const SPARE_COPY_MAX: usize = u16::MAX as usize;

thread_local! {
    /// This thread's released copy buffers: `None` until it makes a copy (a thread that
    /// only drops payloads keeps none).
    static SPARE: RefCell<Option<Vec<Vec<u8>>>> = const { RefCell::new(None) };
}

/// The process's budget for whole-batch copies.
static BUDGET: Budget = Budget::new(SHARED_BATCH_BUDGET);

/// Bytes that whole-batch copies may take, and those they take.
pub(crate) struct Budget {
    limit: usize,
    used: AtomicUsize,
}

impl Budget {
    /// A budget of `limit` bytes.
    pub(crate) const fn new(limit: usize) -> Self {
        Self {
            limit,
            used: AtomicUsize::new(0),
        }
    }

    /// Takes `len` bytes, unless that would pass the limit.
    fn take(&self, len: usize) -> bool {
        let before = self.used.fetch_add(len, Ordering::Relaxed);
        if before + len > self.limit {
            self.used.fetch_sub(len, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Gives back `len` bytes taken.
    fn give_back(&self, len: usize) {
        self.used.fetch_sub(len, Ordering::Relaxed);
    }

    /// Bytes taken.
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

/// A received batch being handed on, from which payloads may be kept.
pub(crate) struct ReceivedBatch<'b> {
    bytes: &'b [u8],
    budget: &'static Budget,
    /// Whether the batch may be copied whole (the link's last batch was dense).
    whole: bool,
    /// The whole-batch copy, made by the first payload kept (`None` inside: over the
    /// budget, or not to be copied whole).
    copy: OnceCell<Option<Arc<SharedBatch>>>,
    /// Bytes of the payloads kept from this batch.
    kept: Cell<usize>,
}

impl<'b> ReceivedBatch<'b> {
    /// `bytes`, which may be copied whole when `whole` (see the module's doc).
    pub(crate) fn new(bytes: &'b [u8], whole: bool) -> Self {
        Self::with_budget(bytes, whole, &BUDGET)
    }

    /// The same, with copies counted against `budget` instead of the process's.
    pub(crate) fn with_budget(bytes: &'b [u8], whole: bool, budget: &'static Budget) -> Self {
        Self {
            bytes,
            budget,
            whole,
            copy: OnceCell::new(),
            kept: Cell::new(0),
        }
    }

    #[cfg(test)]
    /// A batch that is never copied whole: each payload kept is copied by itself.
    pub(crate) fn unshared() -> ReceivedBatch<'static> {
        ReceivedBatch::new(&[], false)
    }

    /// Notes that `part`, a slice of this batch, is kept; returns the copy of the whole
    /// batch to keep it from and where in that copy `part` lies, or `None` when `part`
    /// is to be copied by itself.
    pub(crate) fn keep(&self, part: &[u8]) -> Option<(Arc<SharedBatch>, Range<usize>)> {
        let start = (part.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
        let end = start.checked_add(part.len())?;
        if start > self.bytes.len() || end > self.bytes.len() {
            return None;
        }
        self.kept.set(self.kept.get() + part.len());
        let copy = self.copy.get_or_init(|| {
            self.whole
                .then(|| SharedBatch::copy(self.bytes, self.budget))
                .flatten()
        });
        copy.as_ref().map(|c| (c.clone(), start..end))
    }

    /// Whether the link's next batch may be copied whole: a quarter of this one's bytes
    /// at least were kept.
    pub(crate) fn dense(&self) -> bool {
        !self.bytes.is_empty() && self.kept.get() * 4 >= self.bytes.len()
    }
}

/// A copy of a received batch, shared by the payloads kept from it; its buffer counted
/// against [`SHARED_BATCH_BUDGET`] while it lives.
pub(crate) struct SharedBatch {
    bytes: Vec<u8>,
    /// What it counts for against the budget: its buffer's capacity.
    charged: usize,
    budget: &'static Budget,
}

impl SharedBatch {
    /// A copy of `bytes`, or `None` if its buffer would take the copies alive past
    /// `budget`.
    fn copy(bytes: &[u8], budget: &'static Budget) -> Option<Arc<Self>> {
        let mut copy = buffer_for(bytes.len());
        copy.reserve_exact(bytes.len());
        let charged = copy.capacity();
        if !budget.take(charged) {
            keep_spare(copy);
            return None;
        }
        copy.extend_from_slice(bytes);
        Some(Arc::new(Self {
            bytes: copy,
            charged,
            budget,
        }))
    }
}

/// An empty buffer for a copy of `len` bytes: one this thread released that holds `len`
/// bytes and at most twice that (a small batch does not take a large buffer), or a new
/// one. The thread becomes one that keeps its released buffers.
fn buffer_for(len: usize) -> Vec<u8> {
    SPARE
        .try_with(|s| {
            let mut s = s.borrow_mut();
            let spare = s.get_or_insert_with(Vec::new);
            let fit = spare
                .iter()
                .position(|b| b.capacity() >= len && b.capacity() <= len.saturating_mul(2))?;
            Some(spare.swap_remove(fit))
        })
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps `buffer` among this thread's released buffers, if it is one that copies batches
/// and has room (not once its spares are gone, at its end).
fn keep_spare(mut buffer: Vec<u8>) {
    if buffer.capacity() > SPARE_COPY_MAX {
        return;
    }
    buffer.clear();
    let _ = SPARE.try_with(|s| {
        if let Some(spare) = s.borrow_mut().as_mut() {
            if spare.len() < SPARE_COPIES {
                spare.push(buffer);
            }
        }
    });
}

impl Deref for SharedBatch {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for SharedBatch {
    fn drop(&mut self) {
        self.budget.give_back(self.charged);
        keep_spare(std::mem::take(&mut self.bytes));
    }
}

/// Bytes held by whole-batch copies alive, process-wide.
pub fn shared_batch_bytes() -> usize {
    BUDGET.used()
}

#[cfg(test)]
mod tests;
