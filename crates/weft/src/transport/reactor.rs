//! The I/O threads: a few threads (one per core, at most [`MAX_IO_THREADS`]) serve every
//! stream link of the process, whatever the number of sessions.
//!
//! Each thread waits on its own `epoll` set (through `mio`) for the links it was given
//! (round robin) to become readable or writable, and for work handed to it by other
//! threads. Readable: it reads what the socket has (a bounded number of reads per turn,
//! so that one busy link cannot hold the others), cuts it into batches and hands each to
//! the link's [`LinkRx`]. Writable, or asked to write: it writes the link's queued
//! batches without ever waiting ([`Transport::pump`]). Timers: each link's lease is
//! checked when it is due (a heap of deadlines), a write the socket has not taken for
//! the link's `wait_before_close` closes the link, a TLS link whose peer's certificate
//! expires is closed then (`close_link_on_expiration`), and a link closed locally is read
//! to its end for [`CLOSE_DRAIN`] at most.
//!
//! A socket that is not a unicast link plugs in beside the links ([`Served`], [`serve_socket`]):
//! a multicast group's socket is read, and its members' leases are kept, on the same
//! threads and turns.
//!
//! Callbacks run on the I/O threads, but one that blocks holds only its own link: the
//! thread's other links are taken over by another OS thread ([`watchdog`]).
//!
//! An I/O thread never waits for one link: what it sends goes through the queues
//! ([`Transport::send_forwarded`]); a destination that takes nothing loses or holds only
//! its own traffic. Back-pressure: a destination whose overflow of forwarded `block`
//! messages grows large asks for the link those messages come from to stop being read
//! until it drains (a paused link is read again after `PAUSE_MAX` at most, whatever
//! happens), so a sender faster than its receiver is slowed down to it, as in Zenoh, and
//! the overflow stays small. Memory per idle link: the link's state and what is left of a
//! batch that came in part (the read buffer is the thread's).

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, Read};
use std::rc::Rc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};

pub(super) mod watchdog;

use super::reader::{Flow, LinkRx};
use super::turn::{self, Caller, ParkedWrites, Turn};
use super::{Transport, CLOSE_DRAIN, PAUSE_MAX};
use crate::link::{self, STREAM_BATCH_SIZE, STREAM_PREFIX};

/// Most I/O threads a process runs.
pub const MAX_IO_THREADS: usize = 8;

/// Reads of one link per turn before the thread serves the others: at most 1 MiB (two
/// reads of [`READ_BUF_BATCHES`] batches).
const READS_PER_TURN: usize = 2;

/// Largest batches an I/O thread's read buffer holds: eight, 512 KiB, what a TCP link's
/// receive buffer holds by default (`TcpBuffers`), so that one read takes what the socket
/// has. With two, a subscriber at routed 1 KiB made three times the reads for the same
/// bytes, and ran an eighth slower (bench/RESULTS.md, "One read takes what the socket
/// holds").
const READ_BUF_BATCHES: usize = 8;

/// The room a batch takes in the read buffer: its length prefix and the largest batch.
const BATCH_ROOM: usize = STREAM_BATCH_SIZE as usize + 2;

/// The token of a thread's waker.
const WAKER: Token = Token(usize::MAX);

thread_local! {
    /// The I/O thread whose counter slot this thread writes (see [`current_io_thread`]).
    static COUNTER_SLOT: Cell<Option<usize>> = const { Cell::new(None) };
    /// The read buffer of this I/O thread's links: a whole batch always fits after what
    /// is left of the previous one.
    static READ_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Has another thread serve `worker`'s links from now on: it is about to block in the
/// hooks it runs after a read (see [`super::turn::before_blocking`]).
pub(super) fn replace_now(worker: &Arc<watchdog::Worker>) {
    watchdog::replace_now(worker, io_thread_count(), start_worker);
}

/// A link paused by back-pressure: which I/O thread serves it, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PausedSource {
    thread: usize,
    slot: usize,
    generation: u64,
}

/// Reads a paused link again.
pub(crate) fn resume(source: PausedSource) {
    if let Ok(handles) = threads() {
        handles[source.thread].send(Command::Resume(source.slot, source.generation));
    }
}

/// Which I/O thread this is (0 to [`io_thread_count`] − 1), if it is one and owns that
/// thread's counter slot: a counter with one slot per I/O thread can be written by each
/// without atomic read-modify-writes. Only one OS thread owns a slot at a time (a worker
/// that took over from a blocked one has none until the blocked one has ended).
pub(crate) fn current_io_thread() -> Option<usize> {
    COUNTER_SLOT.with(Cell::get)
}

/// What other threads hand an I/O thread.
enum Command {
    /// Serve this stream link from now on.
    Add(Box<Entry>),
    /// Write what this transport has queued.
    Write(Arc<Transport>),
    /// Read again the link in this slot (of this generation), paused by back-pressure.
    Resume(usize, u64),
}

/// One I/O thread, as other threads reach it.
struct Handle {
    commands: Mutex<Vec<Command>>,
    waker: Waker,
    /// The thread's links and timers, held by the worker leading it (see [`watchdog`]).
    state: Mutex<IoThread>,
    /// Links handed back by a worker replaced while its callbacks ran.
    returned: Mutex<Vec<Returned>>,
    /// Whether a worker writes the thread's counter slot.
    counter_slot_taken: std::sync::atomic::AtomicBool,
}

/// A link read by a worker replaced meanwhile, and what reading it came to.
struct Returned {
    slot: usize,
    entry: Entry,
    outcome: ReadOutcome,
}

impl Handle {
    fn send(&self, command: Command) {
        let mut q = self.commands.lock().unwrap_or_else(|e| e.into_inner());
        let idle = q.is_empty();
        q.push(command);
        drop(q);
        // A non-empty queue has a wake-up on its way already.
        if idle {
            if let Err(e) = self.waker.wake() {
                tracing::error!("cannot wake an I/O thread: {e}");
            }
        }
    }
}

/// The process's I/O threads, started on first use.
static THREADS: OnceLock<Result<Vec<Handle>, String>> = OnceLock::new();

fn threads() -> Result<&'static [Handle], &'static str> {
    THREADS
        .get_or_init(start_threads)
        .as_deref()
        .map_err(String::as_str)
}

/// How many I/O threads this process runs: one per core, at most [`MAX_IO_THREADS`].
/// Asked once (the standard library reads the cgroup's files each time), then kept.
pub fn io_thread_count() -> usize {
    static COUNT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *COUNT.get_or_init(|| {
        std::thread::available_parallelism()
            .map_or(1, std::num::NonZeroUsize::get)
            .clamp(1, MAX_IO_THREADS)
    })
}

fn start_threads() -> Result<Vec<Handle>, String> {
    let mut handles = Vec::new();
    for index in 0..io_thread_count() {
        let poll = Poll::new().map_err(|e| format!("cannot create an epoll set: {e}"))?;
        let waker = Waker::new(poll.registry(), WAKER)
            .map_err(|e| format!("cannot create an I/O thread's waker: {e}"))?;
        handles.push(Handle {
            commands: Mutex::new(Vec::new()),
            waker,
            state: Mutex::new(IoThread::new(index, poll)),
            returned: Mutex::new(Vec::new()),
            counter_slot_taken: std::sync::atomic::AtomicBool::new(false),
        });
        start_worker(index)?;
    }
    std::thread::Builder::new()
        .name("weft-io-watch".into())
        .spawn(|| watchdog::watch(io_thread_count(), start_worker))
        .map_err(|e| format!("cannot start the I/O threads' watchdog: {e}"))?;
    Ok(handles)
}

/// Starts an OS thread serving the I/O thread `index` (see [`watchdog`]).
fn start_worker(index: usize) -> Result<(), String> {
    std::thread::Builder::new()
        .name(format!("weft-io-{index}"))
        .spawn(move || serve(index))
        .map(drop)
        .map_err(|e| format!("cannot start an I/O thread: {e}"))
}

/// A worker: leads the I/O thread `index` until it is replaced while its callbacks run.
fn serve(index: usize) {
    let Ok(handles) = threads() else {
        return;
    };
    let handle = &handles[index];
    let worker = watchdog::register(index);
    let turn = Rc::new(Turn::new());
    turn::serve_links_in(turn.clone());
    READ_BUF.with(|b| {
        *b.borrow_mut() = vec![0; READ_BUF_BATCHES * BATCH_ROOM];
    });
    let mut events = Events::with_capacity(1024);
    let mut state = lock(&handle.state);
    loop {
        claim_counter_slot(handle, index);
        if !state.parked.is_empty() {
            // Left by a worker whose callback blocked: they have waited long enough.
            turn.unpark_writes(&mut state.parked, |_| true);
            write_scheduled(index, &turn);
        }
        state.turn(&mut events, handle, &turn);
        while let Some(slot) = state.to_read.pop_front() {
            match read_unlocked(state, slot, handle, &worker, &turn) {
                Some(leading) => state = leading,
                None => {
                    // Replaced: the new worker leads; this one ends.
                    write_scheduled(index, &turn);
                    if COUNTER_SLOT.with(|c| c.take()).is_some() {
                        handle
                            .counter_slot_taken
                            .store(false, std::sync::atomic::Ordering::Release);
                    }
                    watchdog::unregister(&worker);
                    return;
                }
            }
        }
        write_scheduled(index, &turn);
    }
}

/// Takes the I/O thread's counter slot for this worker if no other has it.
fn claim_counter_slot(handle: &Handle, index: usize) {
    if COUNTER_SLOT.with(Cell::get).is_none()
        && !handle
            .counter_slot_taken
            .swap(true, std::sync::atomic::Ordering::AcqRel)
    {
        COUNTER_SLOT.with(|c| c.set(Some(index)));
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads the link in `slot` without holding the I/O thread's state (its callbacks may
/// block), then takes the state back: `None` if this worker was replaced meanwhile, the
/// link then handed back to the new one.
fn read_unlocked<'h>(
    mut state: std::sync::MutexGuard<'h, IoThread>,
    slot: usize,
    handle: &'h Handle,
    worker: &Arc<watchdog::Worker>,
    turn: &Rc<Turn>,
) -> Option<std::sync::MutexGuard<'h, IoThread>> {
    let Some(mut entry) = state.entries.get_mut(slot).and_then(Option::take) else {
        return Some(state);
    };
    entry.to_read = false;
    if entry.paused_until.is_some() {
        state.entries[slot] = Some(entry);
        return Some(state);
    }
    let source = PausedSource {
        thread: state.index,
        slot,
        generation: entry.generation,
    };
    // What earlier reads left to write waits in the state while this one runs callbacks.
    turn.park_writes(&mut state.parked);
    drop(state);
    worker.enter_callbacks();
    let outcome = READ_BUF.with(|buf| read_entry(&mut entry, &mut buf.borrow_mut(), source, turn));
    if turn.holds_link() {
        // Back-pressure: the link waits for the hooks.
        turn.run_after_read(Some(worker));
    }
    let leading = worker.leave_callbacks();
    if leading {
        let mut state = lock(&handle.state);
        state.settle(slot, entry, outcome, turn);
        let due = turn.unpark_writes(&mut state.parked, Transport::has_full_batches);
        if !turn.hooks_pending() {
            if due {
                write_scheduled(state.index, turn);
            }
            return Some(state);
        }
        turn.park_writes(&mut state.parked);
    } else {
        lock(&handle.returned).push(Returned {
            slot,
            entry,
            outcome,
        });
        if let Err(e) = handle.waker.wake() {
            tracing::error!("cannot wake an I/O thread: {e}");
        }
    }
    // The hooks run with the link put back: should they block, another worker reads it.
    // (A worker replaced already runs them, then ends.)
    if leading {
        worker.enter_callbacks();
        turn.run_after_read(Some(worker));
        if worker.leave_callbacks() {
            let mut state = lock(&handle.state);
            if turn.unpark_writes(&mut state.parked, Transport::has_full_batches) {
                write_scheduled(state.index, turn);
            }
            return Some(state);
        }
    } else {
        turn.run_after_read(Some(worker));
    }
    None
}

/// Which I/O thread serves the next transport (round robin).
pub(crate) fn assign() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % io_thread_count()
}

/// Serves a link from now on: `rest` is what was read from it past the handshake.
/// `Err` (the transport is left to the caller) when the I/O threads cannot run.
pub(crate) fn add(rest: Vec<u8>, rx: LinkRx) -> Result<(), Box<(LinkRx, String)>> {
    let index = rx.transport().io_thread;
    match threads() {
        Ok(handles) => {
            let closes_at = closes_at(&rx.transport().link, Instant::now(), SystemTime::now());
            handles[index].send(Command::Add(Box::new(Entry::new(
                Source::Link(rx),
                rest,
                closes_at,
            ))));
            Ok(())
        }
        Err(e) => Err(Box::new((rx, e.to_owned()))),
    }
}

/// A socket an I/O thread serves that is not a unicast link (a multicast group's): it
/// is read when readable and its timer runs when due, in the thread's turns, as a link
/// is; what it hands on runs there too (callbacks included, under the [`watchdog`]).
pub(crate) trait Served: Send + Sync {
    /// The socket, registered for readability (non-blocking).
    fn raw_fd(&self) -> std::os::fd::RawFd;
    /// Reads what the socket has, without waiting, into `buf` (a batch's room at least),
    /// handing it on in `turn` (the turn's writes are made after it). At most
    /// `max_reads` reads: beyond, it says [`Readable::More`].
    fn on_readable(&self, buf: &mut [u8], max_reads: usize, turn: &Rc<Turn>) -> Readable;
    /// Its timer, due at `now`: when it is next due, or `None` when it is done.
    fn on_timer(&self, now: Instant, turn: &Rc<Turn>) -> Option<Instant>;
    /// The thread no longer serves it (it said it is done, or the process's threads
    /// stop).
    fn finished(&self);
}

/// What reading a [`Served`] socket came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Readable {
    /// The socket has nothing more for now.
    Drained,
    /// It was read as much as a turn allows, and may have more.
    More,
    /// It is done: the thread lets it go.
    Ended,
}

/// Serves `socket` from now on, on the I/O thread `assign` chooses; its timer first runs
/// at once. `Err` when the I/O threads cannot run.
pub(crate) fn serve_socket(socket: Arc<dyn Served>) -> Result<(), String> {
    let handles = threads().map_err(ToOwned::to_owned)?;
    handles[assign()].send(Command::Add(Box::new(Entry::new(
        Source::Socket(socket),
        Vec::new(),
        None,
    ))));
    Ok(())
}

/// Hands the transports `turn` was asked to write to their own I/O threads. For a
/// thread that serves links without being an I/O thread (a session's links loop): it
/// calls this after each event.
pub(crate) fn hand_over_writes(turn: &Turn) {
    turn.drain_writes(write_later);
}

/// Has `t`'s own I/O thread write what it queued after the events it has to handle (a
/// writer that ends its turn early, so that the thread's other links are served first).
pub(crate) fn write_later(t: Arc<Transport>) {
    match threads() {
        Ok(handles) => handles[t.io_thread].send(Command::Write(t)),
        Err(e) => tracing::error!("cannot write {}: {e}", t.describe()),
    }
}

/// Writes, or hands to their own I/O thread, the transports `turn` was asked to write
/// during the event it handled (`me`: this I/O thread).
fn write_scheduled(me: usize, turn: &Turn) {
    turn.drain_writes(|t| {
        // A single batch is written at once, here (the shortest way for a sparse
        // message); a queue of full batches is left to the link's own thread, which
        // writes it in parallel with this one reading on.
        if t.io_thread == me || !t.has_full_batches() {
            t.pump();
        } else if let Ok(handles) = threads() {
            handles[t.io_thread].send(Command::Write(t));
        }
    });
}

/// After a read: writes what it forwarded now when that is due (an express message, a
/// destination with full batches, or a few reads' worth waiting: 8);
/// else it waits for the thread's next reads in this turn to join it, and is written at
/// the end of the turn. A router's link to a node fed by many others (a controller's, fed
/// by its sensors) then gets one write for a turn's samples, not one per sample.
fn write_due(me: usize, turn: &Turn) {
    if turn.writes_due(Transport::has_full_batches) {
        write_scheduled(me, turn);
    }
}

/// What an I/O thread serves in one slot. Nearly every slot holds a link, kept inline (a
/// read reaches it without one more pointer); the few other sockets waste its room.
#[allow(clippy::large_enum_variant)]
enum Source {
    /// A unicast transport's link.
    Link(LinkRx),
    /// Another socket (a multicast group's).
    Socket(Arc<dyn Served>),
}

impl Source {
    fn raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Self::Link(rx) => rx.transport().link.raw_fd(),
            Self::Socket(s) => s.raw_fd(),
        }
    }

    /// What the thread waits for: a link's writability too (a write the socket took in
    /// part is finished then); another socket is only read.
    fn interest(&self) -> Interest {
        match self {
            Self::Link(_) => Interest::READABLE | Interest::WRITABLE,
            Self::Socket(_) => Interest::READABLE,
        }
    }

    /// The link's transport, for a link.
    fn transport(&self) -> Option<&Arc<Transport>> {
        match self {
            Self::Link(rx) => Some(rx.transport()),
            Self::Socket(_) => None,
        }
    }
}

/// A link (or another socket) served by an I/O thread.
struct Entry {
    /// Bytes of a batch that came in part.
    rest: Vec<u8>,
    source: Source,
    /// Tells this entry's timers from those of an earlier entry in the same slot.
    generation: u64,
    /// Closed locally: read (and discard) until the peer ends its side or this time.
    drain_until: Option<Instant>,
    /// Paused by back-pressure: not read until its destination drains, or this time.
    paused_until: Option<Instant>,
    /// When the peer's certificate expires and the link is to be closed.
    closes_at: Option<Instant>,
    /// The socket said its peer has ended its side: read to the end, short reads
    /// included (no further event will come for the end of the stream).
    peer_ended: bool,
    /// Waits in the I/O thread's `to_read`.
    to_read: bool,
}

impl Entry {
    /// A new entry for `source`, with `rest` already read from it, to be closed at
    /// `closes_at` (a certificate's expiry).
    fn new(source: Source, rest: Vec<u8>, closes_at: Option<Instant>) -> Self {
        Self {
            rest,
            source,
            generation: 0,
            drain_until: None,
            paused_until: None,
            closes_at,
            peer_ended: false,
            to_read: false,
        }
    }
}

/// When `link` is to be closed because its peer's certificate expires, on the clock of
/// `now` (`wall` being the same moment on the calendar); `None` for never, or beyond
/// what an `Instant` can hold.
fn closes_at(link: &link::Link, now: Instant, wall: SystemTime) -> Option<Instant> {
    let expires = link.closes_at()?;
    let left = expires.duration_since(wall).unwrap_or(Duration::ZERO);
    now.checked_add(left)
}

/// What reading a link came to.
enum ReadOutcome {
    /// The socket has nothing more for now.
    Drained,
    /// The turn ended with the socket still readable.
    More,
    /// The link ended (end of stream, error, or a Close received).
    Ended,
    /// A destination asked for the link to pause (back-pressure): it was registered with
    /// it, and is not read until woken or `PAUSE_MAX` has passed.
    Paused,
}

struct IoThread {
    index: usize,
    poll: Poll,
    entries: Vec<Option<Entry>>,
    free: Vec<usize>,
    generation: u64,
    /// (when, slot, generation) of every link's next timer.
    timers: BinaryHeap<Reverse<(Instant, usize, u64)>>,
    /// Links whose turn ended with data left to read.
    again: Vec<usize>,
    /// Links to read in this turn, once the events, commands and timers are handled, in
    /// the order they were asked for.
    to_read: VecDeque<usize>,
    /// (until when, slot, generation) of the links paused by back-pressure.
    paused: Vec<(Instant, usize, u64)>,
    /// The commands being run, swapped with the thread's queue (kept, not freed).
    commands: Vec<Command>,
    /// What the leading worker left to write after its next reads, while it reads.
    parked: ParkedWrites,
}

impl IoThread {
    fn new(index: usize, poll: Poll) -> Self {
        Self {
            index,
            poll,
            entries: Vec::new(),
            free: Vec::new(),
            generation: 0,
            timers: BinaryHeap::new(),
            again: Vec::new(),
            to_read: VecDeque::new(),
            paused: Vec::new(),
            commands: Vec::new(),
            parked: ParkedWrites::default(),
        }
    }

    /// One turn of the I/O thread: waits for events (or the next timer), runs the
    /// commands, writes and notes what is to be read (in `to_read`), runs the timers.
    fn turn(&mut self, events: &mut Events, handle: &Handle, turn: &Rc<Turn>) {
        let timeout = if self.again.is_empty() && self.to_read.is_empty() {
            let next_timer = self.timers.peek().map(|Reverse((at, _, _))| *at);
            let next_resume = self.paused.iter().map(|(at, _, _)| *at).min();
            next_timer
                .into_iter()
                .chain(next_resume)
                .min()
                .map(|at| at.saturating_duration_since(Instant::now()))
        } else {
            Some(Duration::ZERO)
        };
        if let Err(e) = self.poll.poll(events, timeout) {
            if e.kind() != io::ErrorKind::Interrupted {
                tracing::error!("I/O thread {}: {e}", self.index);
                std::thread::sleep(Duration::from_millis(10));
            }
            return;
        }
        self.take_returned(handle, turn);
        self.run_commands(turn);
        for again in std::mem::take(&mut self.again) {
            self.read(again);
        }
        for event in events.iter() {
            let slot = event.token().0;
            if event.token() == WAKER {
                continue;
            }
            if event.is_writable() {
                if let Some(t) = self
                    .entries
                    .get(slot)
                    .and_then(Option::as_ref)
                    .and_then(|e| e.source.transport())
                {
                    t.pump();
                }
            }
            if event.is_read_closed() || event.is_error() {
                if let Some(e) = self.entries.get_mut(slot).and_then(Option::as_mut) {
                    e.peer_ended = true;
                }
            }
            if event.is_readable() || event.is_read_closed() || event.is_error() {
                self.read(slot);
            }
        }
        write_scheduled(self.index, turn);
        let now = Instant::now();
        self.resume_due(now);
        self.run_timers(now, turn);
    }

    /// Takes back the links of workers replaced while their callbacks ran: their events
    /// and timers meanwhile went unserved, so their readiness is asked anew (registering
    /// again raises an event for what is ready) and their timer is due now.
    fn take_returned(&mut self, handle: &Handle, turn: &Rc<Turn>) {
        let returned = std::mem::take(&mut *lock(&handle.returned));
        for Returned {
            slot,
            entry,
            outcome,
        } in returned
        {
            let fd = entry.source.raw_fd();
            let generation = entry.generation;
            let _ = self.poll.registry().reregister(
                &mut SourceFd(&fd),
                Token(slot),
                entry.source.interest(),
            );
            self.timers
                .push(Reverse((Instant::now(), slot, generation)));
            self.settle(slot, entry, outcome, turn);
        }
    }

    /// Puts back a link that was read, and acts on what reading it came to.
    fn settle(&mut self, slot: usize, mut entry: Entry, outcome: ReadOutcome, turn: &Rc<Turn>) {
        let generation = entry.generation;
        match outcome {
            ReadOutcome::Drained => {}
            ReadOutcome::More => self.again.push(slot),
            ReadOutcome::Ended => {}
            ReadOutcome::Paused => {
                let until = Instant::now() + PAUSE_MAX;
                entry.paused_until = Some(until);
                self.paused.push((until, slot, generation));
            }
        }
        self.entries[slot] = Some(entry);
        if let ReadOutcome::Ended = outcome {
            self.finish(slot, turn);
        }
    }

    /// Reads again the paused links whose pause has lasted `PAUSE_MAX`.
    fn resume_due(&mut self, now: Instant) {
        if self.paused.iter().all(|(at, _, _)| *at > now) {
            return;
        }
        let due: Vec<(usize, u64)> = self
            .paused
            .iter()
            .filter(|(at, _, _)| *at <= now)
            .map(|(_, slot, generation)| (*slot, *generation))
            .collect();
        for (slot, generation) in due {
            self.resume(slot, generation);
        }
    }

    /// Reads again a link paused by back-pressure, if it is still the same one.
    fn resume(&mut self, slot: usize, generation: u64) {
        self.paused
            .retain(|(_, s, g)| !(*s == slot && *g == generation));
        let Some(entry) = self.entries.get_mut(slot).and_then(Option::as_mut) else {
            return;
        };
        if entry.generation != generation || entry.paused_until.take().is_none() {
            return;
        }
        self.read(slot);
    }

    fn run_commands(&mut self, turn: &Rc<Turn>) {
        let Ok(handles) = threads() else {
            return;
        };
        std::mem::swap(
            &mut *handles[self.index]
                .commands
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
            &mut self.commands,
        );
        let mut commands = std::mem::take(&mut self.commands);
        for command in commands.drain(..) {
            match command {
                Command::Add(entry) => self.insert(*entry, turn),
                Command::Write(t) => t.pump(),
                Command::Resume(slot, generation) => self.resume(slot, generation),
            }
            write_scheduled(self.index, turn);
        }
        self.commands = commands;
    }

    fn insert(&mut self, mut entry: Entry, turn: &Rc<Turn>) {
        self.generation += 1;
        entry.generation = self.generation;
        let slot = self.free.pop().unwrap_or_else(|| {
            self.entries.push(None);
            self.entries.len() - 1
        });
        let fd = entry.source.raw_fd();
        let registered =
            self.poll
                .registry()
                .register(&mut SourceFd(&fd), Token(slot), entry.source.interest());
        let mut first_tick = match &entry.source {
            Source::Link(rx) => Instant::now() + rx.tick(),
            Source::Socket(_) => Instant::now(),
        };
        if let Some(at) = entry.closes_at {
            first_tick = first_tick.min(at);
        }
        self.entries[slot] = Some(entry);
        if let Err(e) = registered {
            tracing::warn!("cannot serve a link ({e}): closed");
            self.finish(slot, turn);
            return;
        }
        self.timers
            .push(Reverse((first_tick, slot, self.generation)));
        // What came with the handshake's last batch, and what came since.
        self.read(slot);
        if let Some(t) = self.entries[slot]
            .as_ref()
            .and_then(|e| e.source.transport())
        {
            t.pump();
        }
    }

    /// Has a link read in this turn ([`read_unlocked`]), handing every whole batch to its
    /// receiver (not while it is paused).
    fn read(&mut self, slot: usize) {
        if let Some(entry) = self.entries.get_mut(slot).and_then(Option::as_mut) {
            if !entry.to_read {
                entry.to_read = true;
                self.to_read.push_back(slot);
            }
        }
    }

    fn run_timers(&mut self, now: Instant, turn: &Rc<Turn>) {
        while let Some(Reverse((at, slot, generation))) = self.timers.peek().copied() {
            if at > now {
                return;
            }
            self.timers.pop();
            let Some(entry) = self.entries.get_mut(slot).and_then(Option::as_mut) else {
                continue;
            };
            if entry.generation != generation {
                continue;
            }
            match tick(entry, now, turn) {
                Some(next) => self.timers.push(Reverse((next, slot, generation))),
                None => self.finish(slot, turn),
            }
            write_scheduled(self.index, turn);
        }
    }

    /// The link is done: it leaves the thread, and its transport's end is handled.
    fn finish(&mut self, slot: usize, turn: &Rc<Turn>) {
        let Some(entry) = self.entries.get_mut(slot).and_then(Option::take) else {
            return;
        };
        let fd = entry.source.raw_fd();
        let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        self.free.push(slot);
        self.again.retain(|s| *s != slot);
        self.to_read.retain(|s| *s != slot);
        self.paused.retain(|(_, s, _)| *s != slot);
        match entry.source {
            Source::Link(rx) => rx.finish(&Caller::Turn(turn.clone())),
            Source::Socket(s) => s.finished(),
        }
        write_scheduled(self.index, turn);
    }
}

/// A link's timer: its lease, a write that stalls, the end of a local close's drain.
/// The time of its next timer, or `None` when the link is done.
fn tick(entry: &mut Entry, now: Instant, turn: &Rc<Turn>) -> Option<Instant> {
    let rx = match &mut entry.source {
        Source::Link(rx) => rx,
        Source::Socket(s) => return s.on_timer(now, turn),
    };
    let t = rx.transport().clone();
    if t.is_closed() {
        if t.link.is_datagram() {
            // No end of stream to wait for.
            return None;
        }
        let until = *entry.drain_until.get_or_insert(now + CLOSE_DRAIN);
        return (now < until).then_some(until);
    }
    if entry.closes_at.is_some_and(|at| now >= at) {
        tracing::warn!(
            "closing {} ({}): its certificate expired (close_link_on_expiration)",
            t.describe(),
            t.peer_zid()
        );
        entry.closes_at = None;
        t.abort();
        return Some(now + CLOSE_DRAIN);
    }
    let limit = t.limits.wait_before_close;
    if t.write_stalled_since()
        .is_some_and(|since| now.duration_since(since) >= limit)
    {
        tracing::warn!(
            "closing {} ({}): it took nothing for {limit:?}",
            t.describe(),
            t.peer_zid()
        );
        t.abort();
        return Some(now + CLOSE_DRAIN);
    }
    match rx.on_tick(now, &Caller::Turn(turn.clone())) {
        Flow::Open => {
            t.release_idle_buffers(rx.tick());
            let mut next = now + rx.tick();
            if t.write_stalled_since().is_some() {
                next = next.min(now + limit / 4);
            }
            if let Some(at) = entry.closes_at {
                next = next.min(at);
            }
            Some(next)
        }
        Flow::Closed => None,
    }
}

/// Reads what the link has, at most [`READS_PER_TURN`] times, into `buf` after what was
/// left of a batch, handing each whole batch on (or discarding it while the link drains
/// after a local close). A batch whose messages made a destination ask for back-pressure
/// ends the turn: the link (`me`) is registered with that destination, and what was read
/// past that batch waits in the entry.
fn read_entry(entry: &mut Entry, buf: &mut [u8], me: PausedSource, turn: &Rc<Turn>) -> ReadOutcome {
    let rx = match &mut entry.source {
        Source::Link(rx) => rx,
        Source::Socket(s) => {
            let outcome = match s.on_readable(buf, READS_PER_TURN * READ_BUF_BATCHES, turn) {
                Readable::Drained => ReadOutcome::Drained,
                Readable::More => ReadOutcome::More,
                Readable::Ended => ReadOutcome::Ended,
            };
            write_scheduled(me.thread, turn);
            return outcome;
        }
    };
    if rx.transport().link.is_datagram() {
        return read_datagrams(rx, buf, me, turn);
    }
    let mut end = entry.rest.len();
    buf[..end].copy_from_slice(&entry.rest);
    entry.rest.clear();
    let t = rx.transport().clone();
    let draining = t.is_closed();
    // Whole batches left by a turn that paused go first.
    let mut outcome = match hand_on(rx, buf, &mut end, draining, me, turn) {
        Some(ReadOutcome::Ended) => return ReadOutcome::Ended,
        Some(paused) => paused,
        None => ReadOutcome::More,
    };
    if !matches!(outcome, ReadOutcome::Paused) {
        for _ in 0..READS_PER_TURN {
            let room = buf.len() - end;
            match (&mut &t.link).read(&mut buf[end..]) {
                Ok(0) => return ReadOutcome::Ended,
                Ok(n) => {
                    end += n;
                    // A short read emptied the socket: what comes next raises a new event
                    // (edge-triggered), so no read is spent to hear `WouldBlock`. Not so
                    // the end of the stream when it came with the data: read on to it.
                    if n < room && !entry.peer_ended {
                        outcome = ReadOutcome::Drained;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    outcome = ReadOutcome::Drained;
                    break;
                }
                Err(e) => {
                    // Bytes the link could not read (a TLS record that does not decrypt,
                    // an alert) close it, saying why; a reset says enough by itself.
                    if e.kind() == io::ErrorKind::InvalidData {
                        tracing::warn!("closing {} ({}): {e}", t.describe(), t.peer_zid());
                    }
                    return ReadOutcome::Ended;
                }
            }
            match hand_on(rx, buf, &mut end, draining, me, turn) {
                Some(ReadOutcome::Ended) => return ReadOutcome::Ended,
                Some(paused) => {
                    outcome = paused;
                    break;
                }
                None => {}
            }
            if let ReadOutcome::Drained = outcome {
                break;
            }
            if turn.hooks_pending() {
                // What was read goes to the hooks before the link is read again.
                outcome = ReadOutcome::More;
                break;
            }
        }
    }
    if end > 0 {
        // Between turns a link keeps at most about a batch's room (what a paused turn
        // left may have been the whole read buffer).
        if end <= BATCH_ROOM && entry.rest.capacity() > 2 * BATCH_ROOM {
            entry.rest = Vec::new();
        }
        entry.rest.extend_from_slice(&buf[..end]);
    } else if entry.rest.capacity() > 4096 {
        // A large batch's tail is not kept for the idle link.
        entry.rest = Vec::new();
    }
    outcome
}

/// Hands one batch to the link's receiver: `Ended` when the link is done, `Paused` when a
/// destination asked for back-pressure and the link (`me`) is registered with it.
fn hand_batch(
    rx: &mut LinkRx,
    batch: &[u8],
    me: PausedSource,
    turn: &Rc<Turn>,
) -> Option<ReadOutcome> {
    turn.begin_batch();
    let flow = rx.on_batch(batch, &Caller::Turn(turn.clone()));
    let pause = turn.end_batch();
    if let Flow::Closed = flow {
        return Some(ReadOutcome::Ended);
    }
    pause
        .and_then(|d| d.upgrade())
        .is_some_and(|d| d.add_paused_source(me))
        .then_some(ReadOutcome::Paused)
}

/// Reads a datagram link (UDP, serial): each datagram is one batch, handed on as it
/// comes, at most [`READS_PER_TURN`] × [`READ_BUF_BATCHES`] per turn. A datagram link has
/// no end of stream: once closed, or once its read says it ended, it is done.
fn read_datagrams(
    rx: &mut LinkRx,
    buf: &mut [u8],
    me: PausedSource,
    turn: &Rc<Turn>,
) -> ReadOutcome {
    let t = rx.transport().clone();
    if t.is_closed() {
        return ReadOutcome::Ended;
    }
    let mut outcome = ReadOutcome::More;
    for _ in 0..READS_PER_TURN * READ_BUF_BATCHES {
        match t.link.receive_batch(buf) {
            // The link ended (a serial line's session did).
            Ok(None) => {
                outcome = ReadOutcome::Ended;
                break;
            }
            Ok(Some(n)) => {
                if let Some(stopped) = hand_batch(rx, &buf[..n], me, turn) {
                    outcome = stopped;
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                outcome = ReadOutcome::Drained;
                break;
            }
            // The peer's port said it is closed (ICMP): its lease decides.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
            Err(_) => {
                outcome = ReadOutcome::Ended;
                break;
            }
        }
        if turn.hooks_pending() {
            break;
        }
    }
    // What these batches forwarded leaves now.
    write_scheduled(me.thread, turn);
    outcome
}

/// Hands every whole batch of `buf[..end]` to the link's receiver (or discards it while
/// the link drains after a local close), writes what they forwarded, then moves what is
/// left to the front. Stops early with `Ended` (the link is done) or `Paused` (a
/// destination asked for back-pressure and the link, `me`, is registered with it).
fn hand_on(
    rx: &mut LinkRx,
    buf: &mut [u8],
    end: &mut usize,
    draining: bool,
    me: PausedSource,
    turn: &Rc<Turn>,
) -> Option<ReadOutcome> {
    let mut start = 0;
    let mut stopped = None;
    while let Some((batch, taken)) = STREAM_PREFIX.whole_batch(&buf[start..*end]) {
        start += taken;
        if draining {
            continue;
        }
        stopped = hand_batch(rx, batch, me, turn);
        if stopped.is_some() {
            break;
        }
    }
    write_due(me.thread, turn);
    buf.copy_within(start..*end, 0);
    *end -= start;
    stopped
}
