//! Who is calling into a transport, and what it may do: an application thread, or a thread
//! serving links in a *turn* (an I/O thread handling a link's events, a session's links
//! loop handling a handshake).
//!
//! A thread serving links never waits for one destination: what it sends is queued, and
//! written after the event it handles ([`Turn::schedule_write`]); a destination that falls
//! behind may ask that the link being read pause ([`Turn::request_pause`]); and the clock
//! is read once per received batch ([`Caller::physical_now`]). The thread passes its turn
//! explicitly, as a [`Caller`], down the receive path (transport, session, router) to
//! where those decisions are made.
//!
//! Only application code that runs on such a thread (callbacks, and the hooks of
//! [`after_this_read`]) cannot be handed a turn: weft's API has no parameter for it. So the
//! thread notes what it runs in one place, [`Running`], and the API reads it where
//! application code calls in ([`Caller::here`], [`before_blocking`], [`after_this_read`],
//! [`hold_this_link`]). No layer below the API reads it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::{Arc, Weak};

use uhlc::NTP64;

use super::reactor::{self, watchdog};
use super::Transport;

/// Work a turn leaves to after the read it is in: it runs on the same thread, once the
/// batch is handed on, where the thread holds no lock of weft's, and may block.
pub(crate) trait AfterRead: Send + Sync {
    /// Does the work.
    fn run(&self);
}

/// One piece of work left to after the read.
enum Hook {
    /// A function (asked for at most once per read).
    Fn(fn()),
    /// Shared work (asked for at most once per read).
    Shared(Arc<dyn AfterRead>),
}

impl Hook {
    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Fn(a), Self::Fn(b)) => std::ptr::fn_addr_eq(*a, *b),
            (Self::Shared(a), Self::Shared(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    fn run(self) {
        match self {
            Self::Fn(f) => f(),
            Self::Shared(work) => work.run(),
        }
    }
}

/// What one thread serving links collects while it handles an event: the transports to
/// write after it, a pause asked for the link being read, the work left to after the
/// read, and the clock reading of the batch being handed on.
#[derive(Default)]
pub(crate) struct Turn {
    /// Transports to write once the event is handled.
    to_write: RefCell<Vec<Arc<Transport>>>,
    /// The other list of [`Turn::drain_writes`], kept for its room.
    spare: RefCell<Vec<Arc<Transport>>>,
    /// A destination that asked for the link being read to pause.
    pause: RefCell<Option<Weak<Transport>>>,
    /// Whether a received batch is being handed on.
    in_batch: Cell<bool>,
    /// Work to run once the read is done.
    after_read: RefCell<Vec<Hook>>,
    /// Whether the link read waits for that work before it is read again.
    hold_link: Cell<bool>,
    /// The physical clock read for the batch being handed on (0: not read yet).
    clock: Cell<u64>,
    /// When what it forwarded is written: after the read, or at the end of the turn.
    deferral: Cell<Deferral>,
}

/// Whether the transports a turn was asked to write are written after the read that
/// asked, or wait for the thread's next reads (so that messages from several links to one
/// destination leave in one write).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Deferral {
    /// One asked to be written at once (an express message).
    urgent: bool,
    /// Reads since they were last written.
    reads: u32,
}

/// Transports a turn left to write after later reads, put aside in the I/O thread's
/// state while a read runs callbacks: should a callback block, the worker that replaces
/// this one writes them, so they wait for no callback but their own link's.
#[derive(Default)]
pub(crate) struct ParkedWrites {
    writes: Vec<Arc<Transport>>,
    deferral: Deferral,
}

impl ParkedWrites {
    /// Whether nothing is parked.
    pub(crate) fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }
}

impl Deferral {
    /// How many reads forwarded messages wait for more to join them, at most.
    const READS_MAX: u32 = 8;

    /// After a read that left transports to write: whether to write them now (one is
    /// urgent, one has full batches, or [`Deferral::READS_MAX`] reads have passed). The
    /// read is counted otherwise.
    fn write_now(&mut self, any_full_batches: impl FnOnce() -> bool) -> bool {
        let reads = self.reads + 1;
        if self.urgent || reads >= Self::READS_MAX || any_full_batches() {
            return true;
        }
        self.reads = reads;
        false
    }
}

impl Turn {
    /// A turn with nothing collected.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Asks for `t`'s queue to be written once the event is handled.
    pub(crate) fn schedule_write(&self, t: Arc<Transport>) {
        self.to_write.borrow_mut().push(t);
    }

    /// As [`Turn::schedule_write`], for a message that waits for no other read (an
    /// express one): [`Turn::writes_due`] says so after the read that brought it.
    pub(crate) fn schedule_write_now(&self, t: Arc<Transport>) {
        self.deferral.set(Deferral {
            urgent: true,
            ..self.deferral.get()
        });
        self.schedule_write(t);
    }

    /// After a read: whether the transports to write should be written now (one was
    /// asked to be at once, one has full batches — `has_full_batches` — or a few reads
    /// have passed since they were asked for), rather than at the end of the turn.
    pub(crate) fn writes_due(&self, has_full_batches: impl Fn(&Transport) -> bool) -> bool {
        let to_write = self.to_write.borrow();
        if to_write.is_empty() {
            return false;
        }
        let mut deferral = self.deferral.get();
        let now = deferral.write_now(|| to_write.iter().any(|t| has_full_batches(t)));
        self.deferral.set(deferral);
        now
    }

    /// Puts the transports left to write aside in `into` (the I/O thread's state), with
    /// how long they have waited, before a read whose callbacks may block.
    pub(crate) fn park_writes(&self, into: &mut ParkedWrites) {
        let mut to_write = self.to_write.borrow_mut();
        if to_write.is_empty() {
            return;
        }
        into.writes.append(&mut to_write);
        into.deferral = self.deferral.take();
    }

    /// Takes back what [`Turn::park_writes`] put aside, counting the read that ran
    /// meanwhile: whether they are all to be written now (one was urgent, one has full
    /// batches — `has_full_batches` — or they have waited their reads).
    pub(crate) fn unpark_writes(
        &self,
        from: &mut ParkedWrites,
        has_full_batches: impl Fn(&Transport) -> bool,
    ) -> bool {
        if from.writes.is_empty() {
            return false;
        }
        let parked = std::mem::take(&mut from.deferral);
        let mut to_write = self.to_write.borrow_mut();
        to_write.append(&mut from.writes);
        let mut deferral = self.deferral.get();
        deferral.urgent |= parked.urgent;
        deferral.reads = deferral.reads.max(parked.reads + 1);
        let now = deferral.urgent
            || deferral.reads >= Deferral::READS_MAX
            || to_write.iter().any(|t| has_full_batches(t));
        self.deferral.set(deferral);
        now
    }

    /// Hands every transport asked to be written to `write`, those asked for meanwhile
    /// included, until none is left. Two lists swapped back and forth: nothing is
    /// allocated per batch.
    pub(crate) fn drain_writes(&self, mut write: impl FnMut(Arc<Transport>)) {
        self.deferral.take();
        let mut batch = self.spare.take();
        loop {
            std::mem::swap(&mut *self.to_write.borrow_mut(), &mut batch);
            if batch.is_empty() {
                break;
            }
            for t in batch.drain(..) {
                write(t);
            }
        }
        self.spare.replace(batch);
    }

    /// Asks, from a destination whose overflow is large, that the link whose batch is
    /// being handed on stop being read until `destination` drains.
    pub(crate) fn request_pause(&self, destination: Weak<Transport>) {
        *self.pause.borrow_mut() = Some(destination);
    }

    /// Starts handing on one batch: no pause asked yet, a fresh clock reading.
    pub(crate) fn begin_batch(&self) {
        self.pause.borrow_mut().take();
        self.clock.set(0);
        self.in_batch.set(true);
    }

    /// The batch is handed on: the pause it asked for, if any.
    pub(crate) fn end_batch(&self) -> Option<Weak<Transport>> {
        self.in_batch.set(false);
        self.pause.borrow_mut().take()
    }

    /// Leaves `hook` to after the read (once, however often it is asked). `false` when
    /// no batch is being handed on.
    fn after_read(&self, hook: Hook) -> bool {
        if !self.in_batch.get() {
            return false;
        }
        let mut hooks = self.after_read.borrow_mut();
        if !hooks.iter().any(|h| h.same(&hook)) {
            hooks.push(hook);
        }
        true
    }

    /// Leaves `work` to after the read, the link waiting unread until it has run
    /// (back-pressure from a consumer that cannot take more yet): `false`, and nothing is
    /// left, when no batch is being handed on or the I/O threads cannot spare a thread
    /// for work that blocks (the caller then does without).
    pub(crate) fn hold_link_for(&self, work: Arc<dyn AfterRead>) -> bool {
        if !self.in_batch.get() || !watchdog::replacements_to_spare(reactor::io_thread_count()) {
            return false;
        }
        let left = self.after_read(Hook::Shared(work));
        if left {
            self.hold_link.set(true);
        }
        left
    }

    /// Whether work waits to run after the read.
    pub(crate) fn hooks_pending(&self) -> bool {
        !self.after_read.borrow().is_empty()
    }

    /// Whether the link read waits for the work left to after it.
    pub(crate) fn holds_link(&self) -> bool {
        self.hold_link.get() && self.hooks_pending()
    }

    /// Runs the work left to after the read, as application code (it may block: see
    /// [`before_blocking`]).
    pub(crate) fn run_after_read(&self, worker: Option<&Arc<watchdog::Worker>>) {
        self.hold_link.set(false);
        let mut hooks = std::mem::take(&mut *self.after_read.borrow_mut());
        let before = RUNNING.with(|r| {
            r.replace(match worker {
                Some(w) => Running::Hooks(w.clone()),
                None => Running::App,
            })
        });
        for hook in hooks.drain(..) {
            hook.run();
        }
        RUNNING.with(|r| r.replace(before));
        // The list is kept for the next read (no allocation per read); hooks cannot ask
        // for more (application code in them is not in a turn).
        *self.after_read.borrow_mut() = hooks;
    }

    /// The physical clock for the batch being handed on: read once per batch (a router
    /// stamps every value it forwards, and reading the clock for each of the thousands of
    /// messages of a batch costs more than routing them); read afresh outside a batch.
    fn physical_now(&self) -> NTP64 {
        if !self.in_batch.get() {
            return uhlc::system_time_clock();
        }
        match self.clock.get() {
            0 => {
                let now = uhlc::system_time_clock();
                self.clock.set(now.0);
                now
            }
            cached => NTP64(cached),
        }
    }
}

/// Who calls into a transport.
#[derive(Clone, Default)]
pub(crate) enum Caller {
    /// An application thread: it may wait for room, as congestion control says, and
    /// writes an express message, or a large one in fragments, on an idle link itself.
    #[default]
    App,
    /// A thread serving links, in a turn: it never waits for a destination.
    Turn(Rc<Turn>),
}

impl Caller {
    /// The caller that application code running on this thread is: a turn's, in a
    /// callback on a thread serving links; an application thread's elsewhere (in the
    /// hooks run after a read too: they may wait). For the API's entry points only.
    pub(crate) fn here() -> Self {
        RUNNING.with(|r| match &*r.borrow() {
            Running::Callbacks(turn) => Self::Turn(turn.clone()),
            Running::App | Running::Hooks(_) => Self::App,
        })
    }

    /// The turn, for a thread serving links.
    pub(crate) fn turn(&self) -> Option<&Turn> {
        match self {
            Self::App => None,
            Self::Turn(turn) => Some(turn),
        }
    }

    /// Whether this is a thread serving links (it never waits for a destination).
    pub(crate) const fn serves_links(&self) -> bool {
        matches!(self, Self::Turn(_))
    }

    /// The physical clock for a timestamp (see [`Turn::physical_now`]).
    pub(crate) fn physical_now(&self) -> NTP64 {
        match self {
            Self::App => uhlc::system_time_clock(),
            Self::Turn(turn) => turn.physical_now(),
        }
    }
}

/// What application code running on this thread runs in.
#[derive(Default)]
enum Running {
    /// An application thread of its own.
    #[default]
    App,
    /// Callbacks of a thread serving links, in its turn.
    Callbacks(Rc<Turn>),
    /// The hooks an I/O thread's worker runs after a read.
    Hooks(Arc<watchdog::Worker>),
}

thread_local! {
    /// What application code on this thread runs in: set by the threads serving links,
    /// read only at the API's entry points (see the module's documentation).
    static RUNNING: RefCell<Running> = const { RefCell::new(Running::App) };
}

/// Marks this thread as serving links in `turn` from now on: application code it calls
/// (callbacks) runs in that turn.
pub(crate) fn serve_links_in(turn: Rc<Turn>) {
    RUNNING.with(|r| *r.borrow_mut() = Running::Callbacks(turn));
}

/// Says that this thread is about to wait (for a reply, a channel, room): in the hooks an
/// I/O thread's worker runs after a read, another thread serves its links from now on,
/// without waiting for the watchdog to see it blocked. Nothing elsewhere.
pub fn before_blocking() {
    let worker = RUNNING.with(|r| match &*r.borrow() {
        Running::Hooks(worker) => Some(worker.clone()),
        Running::App | Running::Callbacks(_) => None,
    });
    if let Some(worker) = worker {
        reactor::replace_now(&worker);
    }
}

/// Asks that `hook` run on this thread once what it read is handed on (once, however
/// often it is asked): `false`, and nothing is asked, when this thread is not an I/O
/// thread handing on a batch, or when half of the replacements for blocked workers are
/// in use already (see the watchdog: the caller then does its work elsewhere).
///
/// A callback can so leave work to after the read, such as handing what it received to
/// an interpreter whose lock is best taken once for many messages. The read then ends
/// the link's turn, and the hook runs with the link put back: should the hook block (on
/// data the same link brings, say), the link is served by another thread meanwhile, as
/// for any callback that blocks (see the watchdog). The hook runs where the thread holds
/// no lock of weft's.
pub fn after_this_read(hook: fn()) -> bool {
    let Caller::Turn(turn) = Caller::here() else {
        return false;
    };
    if !watchdog::replacements_to_spare(reactor::io_thread_count()) {
        return false;
    }
    turn.after_read(Hook::Fn(hook))
}

/// Has the link being read (whose batch this I/O thread is handing on) wait, unread,
/// until the hooks asked for by [`after_this_read`] have run: back-pressure from a
/// consumer that cannot take more yet. Nothing when this thread is not handing on a
/// batch.
pub fn hold_this_link() {
    if let Caller::Turn(turn) = Caller::here() {
        if turn.in_batch.get() {
            turn.hold_link.set(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_clock_reading_per_batch_and_fresh_readings_outside() {
        let turn = Rc::new(Turn::new());
        let caller = Caller::Turn(turn.clone());
        let before = caller.physical_now();
        turn.begin_batch();
        let first = caller.physical_now();
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(caller.physical_now(), first, "a batch reuses its reading");
        turn.end_batch();
        assert!(first >= before);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let after = caller.physical_now();
        assert!(after > first, "outside a batch, the clock is read again");
        turn.begin_batch();
        assert!(caller.physical_now() >= after, "a new batch reads it again");
        assert!(Caller::App.physical_now() >= after);
    }

    #[test]
    fn forwarded_messages_wait_a_few_reads_unless_urgent_or_in_full_batches() {
        let mut d = Deferral::default();
        for read in 1..Deferral::READS_MAX {
            assert!(!d.write_now(|| false), "read {read} waits for the next");
        }
        assert!(d.write_now(|| false), "at most READS_MAX reads");
        let mut d = Deferral::default();
        assert!(!d.write_now(|| false));
        assert!(d.write_now(|| true), "full batches leave at once");
        let mut d = Deferral {
            urgent: true,
            reads: 0,
        };
        assert!(d.write_now(|| false), "an express message leaves at once");
        let turn = Turn::new();
        assert!(!turn.writes_due(|_| true), "nothing to write");
        turn.deferral.set(Deferral {
            urgent: true,
            reads: 3,
        });
        turn.drain_writes(|_| {});
        assert_eq!(turn.deferral.get(), Deferral::default(), "written: reset");
        // Nothing to park, nothing taken back.
        let mut parked = ParkedWrites::default();
        turn.park_writes(&mut parked);
        assert!(parked.is_empty());
        assert!(!turn.unpark_writes(&mut parked, |_| true));
    }

    #[test]
    fn a_pause_is_asked_for_the_batch_it_came_in_only() {
        let turn = Turn::new();
        turn.begin_batch();
        turn.request_pause(Weak::new());
        assert!(turn.end_batch().is_some());
        turn.begin_batch();
        assert!(
            turn.end_batch().is_none(),
            "a new batch starts without a pause"
        );
    }

    #[test]
    fn work_is_left_to_after_the_read_once_and_only_in_a_batch() {
        fn hook() {}
        let turn = Turn::new();
        assert!(!turn.after_read(Hook::Fn(hook)), "no batch is handed on");
        turn.begin_batch();
        assert!(turn.after_read(Hook::Fn(hook)));
        assert!(turn.after_read(Hook::Fn(hook)));
        assert_eq!(turn.after_read.borrow().len(), 1, "asked for once");
        assert!(turn.hooks_pending() && !turn.holds_link());
        turn.hold_link.set(true);
        assert!(turn.holds_link());
        turn.run_after_read(None);
        assert!(!turn.hooks_pending() && !turn.holds_link());
    }

    #[test]
    fn application_code_outside_a_turn_is_an_application_thread() {
        assert!(!Caller::here().serves_links());
        let turn = Rc::new(Turn::new());
        std::thread::spawn(move || {
            serve_links_in(Rc::new(Turn::new()));
            assert!(Caller::here().serves_links());
        })
        .join()
        .unwrap();
        assert!(
            !Caller::here().serves_links(),
            "a thread of its own is not marked"
        );
        drop(turn);
    }
}
