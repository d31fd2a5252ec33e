//! Keeps a callback that blocks from holding the other links of its I/O thread.
//!
//! Each I/O thread's state (its `epoll` set, links and timers) is held by one *worker*,
//! an OS thread, at a time. A worker lets go of that state while it hands a link's
//! batches to the session, where the application's callbacks run. The watchdog looks
//! every [`WATCH_PERIOD`]: a worker that has been inside callbacks for one whole period
//! or more is marked *replaced*, and a new worker takes the I/O thread's state and
//! serves its other links. The replaced worker, once its callback returns, hands the
//! link it was reading back to the new one and ends. So a callback that sleeps, waits on
//! a lock or does slow I/O holds only its own link, as it would in a runtime that gives
//! each link its own task, while the common case (callbacks that return quickly) costs
//! two atomic writes and an uncontended unlock and lock per read of a socket.
//!
//! Workers beyond one per I/O thread are bounded ([`MAX_REPLACEMENTS`]): past that, a
//! blocked callback holds its thread's links again, and it is said once.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How often the watchdog looks at the workers.
pub(super) const WATCH_PERIOD: Duration = Duration::from_millis(50);

/// Most workers alive at once beyond one per I/O thread (each held by a callback).
pub(super) const MAX_REPLACEMENTS: usize = 64;

/// A worker's mark: leading its I/O thread, outside callbacks.
const LEADING: u64 = 0;
/// A worker's mark: replaced while inside callbacks; it ends when they return.
const REPLACED: u64 = u64::MAX;

/// Periods the watchdog has counted.
static TICK: AtomicU64 = AtomicU64::new(0);

/// The workers alive.
static WORKERS: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());

/// One OS thread serving an I/O thread's links.
#[derive(Debug)]
pub(crate) struct Worker {
    /// The I/O thread it serves.
    pub(super) index: usize,
    /// [`LEADING`], [`REPLACED`], or 1 + the period in which it entered callbacks.
    mark: AtomicU64,
}

impl Worker {
    /// The worker is about to run callbacks, without its I/O thread's state.
    pub(super) fn enter_callbacks(&self) {
        self.mark
            .store(TICK.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }

    /// The callbacks returned: `true` when the worker still leads its I/O thread,
    /// `false` when it was replaced meanwhile (it is then to end).
    #[must_use]
    pub(super) fn leave_callbacks(&self) -> bool {
        self.mark.swap(LEADING, Ordering::AcqRel) != REPLACED
    }

    /// Marks the worker replaced if it has been inside callbacks since before the
    /// period before `tick`; `true` if it was (the caller then starts a new worker).
    fn replace_if_stuck(&self, tick: u64) -> bool {
        let mark = self.mark.load(Ordering::Acquire);
        // Entered in period `mark - 1`: a whole period has passed once `tick` is two on.
        let stuck = mark != LEADING && mark != REPLACED && tick > mark;
        stuck
            && self
                .mark
                .compare_exchange(mark, REPLACED, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
    }

    /// Undoes [`Worker::replace_if_stuck`] when no new worker could be started: this
    /// one goes on leading once its callbacks return.
    fn keep(&self, since_tick: u64) {
        let _ = self.mark.compare_exchange(
            REPLACED,
            since_tick + 1,
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    }
}

/// Replaces `worker` at once, if it is inside callbacks and leads its I/O thread (a
/// callback about to block says so rather than wait for the watchdog), through
/// `start_worker`, within the bound of [`MAX_REPLACEMENTS`]; `true` if it was.
pub(super) fn replace_now(
    worker: &Worker,
    io_threads: usize,
    start_worker: impl Fn(usize) -> Result<(), String>,
) -> bool {
    let mark = worker.mark.load(Ordering::Acquire);
    if mark == LEADING || mark == REPLACED {
        return false;
    }
    {
        let workers = lock_workers();
        if workers.len() >= io_threads + MAX_REPLACEMENTS {
            return false;
        }
        if worker
            .mark
            .compare_exchange(mark, REPLACED, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
    }
    if let Err(e) = start_worker(worker.index) {
        tracing::warn!("I/O thread {}: {e}", worker.index);
        worker.keep(mark - 1);
        return false;
    }
    true
}

/// How many workers are alive (read without the lock).
static ALIVE: AtomicUsize = AtomicUsize::new(0);

/// Registers a new worker for the I/O thread `index`.
pub(super) fn register(index: usize) -> Arc<Worker> {
    let worker = Arc::new(Worker {
        index,
        mark: AtomicU64::new(LEADING),
    });
    let mut workers = lock_workers();
    workers.push(worker.clone());
    ALIVE.store(workers.len(), Ordering::Relaxed);
    worker
}

/// The worker ends.
pub(super) fn unregister(worker: &Arc<Worker>) {
    let mut workers = lock_workers();
    workers.retain(|w| !Arc::ptr_eq(w, worker));
    ALIVE.store(workers.len(), Ordering::Relaxed);
}

/// Whether at least half of [`MAX_REPLACEMENTS`] are left: work that may block (and so
/// take a replacement) is best left to other threads otherwise.
pub(crate) fn replacements_to_spare(io_threads: usize) -> bool {
    ALIVE.load(Ordering::Relaxed) < io_threads + MAX_REPLACEMENTS / 2
}

fn lock_workers() -> std::sync::MutexGuard<'static, Vec<Arc<Worker>>> {
    WORKERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs the watchdog: every [`WATCH_PERIOD`], each worker held by callbacks for a whole
/// period is replaced through `start_worker` (given the I/O thread's index; `Err` when
/// no thread could be started). Never returns.
pub(super) fn watch(io_threads: usize, start_worker: impl Fn(usize) -> Result<(), String>) {
    static SAID_FULL: AtomicBool = AtomicBool::new(false);
    loop {
        std::thread::sleep(WATCH_PERIOD);
        let tick = TICK.fetch_add(1, Ordering::Relaxed) + 1;
        let stuck: Vec<Arc<Worker>> = {
            let workers = lock_workers();
            let room = (io_threads + MAX_REPLACEMENTS).saturating_sub(workers.len());
            let stuck: Vec<_> = workers
                .iter()
                .filter(|w| w.replace_if_stuck(tick))
                .cloned()
                .collect();
            if stuck.len() > room {
                for w in &stuck[room..] {
                    w.keep(tick - 1);
                }
                if !SAID_FULL.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "{MAX_REPLACEMENTS} callbacks are blocked at once: a further one \
                         holds the other links of its I/O thread until it returns"
                    );
                }
            }
            stuck.into_iter().take(room).collect()
        };
        for worker in stuck {
            tracing::debug!(
                "a callback has held I/O thread {} for over {WATCH_PERIOD:?}: another \
                 thread serves its other links",
                worker.index
            );
            if let Err(e) = start_worker(worker.index) {
                tracing::warn!("I/O thread {}: {e}", worker.index);
                worker.keep(tick - 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worker() -> Worker {
        Worker {
            index: 0,
            mark: AtomicU64::new(LEADING),
        }
    }

    #[test]
    fn a_worker_outside_callbacks_is_never_replaced() {
        let w = worker();
        assert!(!w.replace_if_stuck(100));
        assert!(w.leave_callbacks());
    }

    #[test]
    fn a_worker_is_replaced_only_after_a_whole_period_in_callbacks() {
        let w = worker();
        w.mark.store(5 + 1, Ordering::Relaxed); // entered in period 5
        assert!(!w.replace_if_stuck(5));
        assert!(!w.replace_if_stuck(6), "at most one period: maybe just now");
        assert!(w.replace_if_stuck(7));
        assert!(!w.replace_if_stuck(8), "replaced once");
        assert!(!w.leave_callbacks(), "a replaced worker ends");
    }

    #[test]
    fn a_worker_that_returns_first_keeps_leading() {
        let w = worker();
        w.mark.store(5 + 1, Ordering::Relaxed);
        assert!(w.leave_callbacks());
        assert!(!w.replace_if_stuck(9));
    }

    #[test]
    fn a_worker_about_to_block_is_replaced_at_once_only_inside_callbacks() {
        let w = worker();
        let started = std::cell::Cell::new(0);
        let start = |_| {
            started.set(started.get() + 1);
            Ok(())
        };
        assert!(!replace_now(&w, 1, start), "outside callbacks: nothing");
        w.enter_callbacks();
        assert!(replace_now(&w, 1, start));
        assert!(!replace_now(&w, 1, start), "replaced once");
        assert_eq!(started.get(), 1);
        assert!(!w.leave_callbacks(), "a replaced worker ends");
        let w = worker();
        w.enter_callbacks();
        assert!(!replace_now(&w, 1, |_| Err("no thread".into())));
        assert!(w.leave_callbacks(), "no thread started: it leads on");
    }

    #[test]
    fn a_worker_kept_for_want_of_threads_leads_on() {
        let w = worker();
        w.mark.store(5 + 1, Ordering::Relaxed);
        assert!(w.replace_if_stuck(7));
        w.keep(6);
        assert!(w.leave_callbacks());
    }
}
