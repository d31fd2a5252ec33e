//! The links loop: one thread per process that makes the links of every session. It waits
//! in one `epoll` for every listener, every handshake in progress (accepted or opened) and
//! every connector's next attempt, and never waits for any one of them: handshakes run as far
//! as their socket lets them ([`crate::transport::Handshake`]), each within its deadline,
//! and a connector's pause between attempts is a timer. An established transport is handed
//! to its session ([`Inner::adopt`]), which gives it to the I/O threads. What belongs to a
//! session that closes (its listeners, handshakes, connectors) is dropped at the loop's
//! next turn.
//!
//! It also serves multicast scouting for every session that scouts (answering Scouts,
//! autoconnect), each a socket in the same epoll and a timer, and fires the deadlines of
//! every session's gets (`session::deadlines`), the earliest its timer too.
//!
//! Other threads reach it through [`LinksLoop`]: a command queue and a waker. Files:
//! `accepting` (listeners and the handshakes of the links they accept), `refusals` and
//! `throttle` (the accepted handshakes that fail: counted, logged per source address,
//! authentication throttled), `connector` (connecting to configured endpoints, again
//! when the link is lost, with back-off), `scouting` (answering Scouts, autoconnect).

mod accepting;
mod connector;
mod refusals;
mod scouting;
mod throttle;

pub(crate) use refusals::{Refusals, Source};

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};

use super::deadlines::{Deadlines, Timeout};
use super::Inner;
use crate::endpoint::Endpoint;
use crate::link::Listener;
use crate::transport::Caller;
use crate::transport::{Handshake, OpenError, Pending, Wait};
use accepting::{Accepting, PendingAccept};
use connector::Connector;
use scouting::{Answering, Autoconnecting};

/// The waker's token; entries take the others.
const WAKE: Token = Token(0);

/// What other threads ask of the links loop.
enum Command {
    /// Serve this listener of this session.
    Listen(Weak<Inner>, Listener),
    /// Stay connected to one of these endpoints, for this session.
    Connect(Weak<Inner>, Arc<[Endpoint]>),
    /// Connect once to a node discovered at these endpoints, from this time on.
    ConnectOnce {
        inner: Weak<Inner>,
        zid: weft_proto::core::ZenohId,
        alternatives: Arc<[Endpoint]>,
        how: &'static str,
        start: Instant,
    },
    /// The QUIC handshake of this entry has an outcome.
    Notified(Token),
    /// The link of this connector ended: connect again.
    Ended(usize),
    /// Answer Scouts for a session.
    Answer(Box<Answering>),
    /// Scout and connect to what answers, for a session.
    Autoconnect(Box<Autoconnecting>),
}

/// The handle other threads have on a session's links loop.
pub(crate) struct LinksLoop {
    waker: Waker,
    commands: Mutex<Vec<Command>>,
    /// The deadlines of every session's gets, which the loop fires.
    deadlines: Deadlines,
}

/// The process's links loop, once started.
static LINKS_LOOP: std::sync::OnceLock<Result<Arc<LinksLoop>, String>> = std::sync::OnceLock::new();

impl LinksLoop {
    /// The process's links loop, started on a thread of its own (`weft-links`) the first
    /// time it is asked for.
    pub(crate) fn get() -> std::io::Result<Arc<Self>> {
        LINKS_LOOP
            .get_or_init(|| Self::start().map_err(|e| e.to_string()))
            .clone()
            .map_err(std::io::Error::other)
    }

    /// The process's links loop, if it was started.
    pub(crate) fn running() -> Option<Arc<Self>> {
        LINKS_LOOP.get()?.as_ref().ok().cloned()
    }

    fn start() -> std::io::Result<Arc<Self>> {
        let poll = Poll::new()?;
        let shared = Arc::new(Self {
            waker: Waker::new(poll.registry(), WAKE)?,
            commands: Mutex::new(Vec::new()),
            deadlines: Deadlines::default(),
        });
        let mut runner = Runner {
            poll,
            shared: Arc::downgrade(&shared),
            entries: HashMap::new(),
            next_token: 1,
            connectors: HashMap::new(),
            next_connector: 0,
        };
        std::thread::Builder::new()
            .name("weft-links".into())
            .spawn(move || runner.run())?;
        Ok(shared)
    }

    fn send(&self, command: Command) {
        self.commands
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(command);
        self.wake();
    }

    /// Wakes the loop (the session closing, a command).
    pub(crate) fn wake(&self) {
        if let Err(e) = self.waker.wake() {
            tracing::warn!("cannot wake the links loop: {e}");
        }
    }

    /// Fires `what` for `inner` at `at` (see `session::deadlines`).
    pub(crate) fn schedule(&self, inner: &Arc<Inner>, at: Instant, what: Timeout) {
        if self.deadlines.add(inner, at, what) {
            self.wake();
        }
    }

    /// The deadlines the loop fires.
    pub(crate) const fn deadlines(&self) -> &Deadlines {
        &self.deadlines
    }

    /// Serves `listener` of `inner` from now on.
    pub(crate) fn listen(&self, inner: &Arc<Inner>, listener: Listener) {
        self.send(Command::Listen(Arc::downgrade(inner), listener));
    }

    /// Has `inner` connect once to `zid`, discovered by `how` at `alternatives`, from
    /// `start` on (see [`Connector::discovered`]).
    pub(crate) fn connect_once(
        &self,
        inner: &Arc<Inner>,
        zid: weft_proto::core::ZenohId,
        alternatives: Arc<[Endpoint]>,
        how: &'static str,
        start: Instant,
    ) {
        self.send(Command::ConnectOnce {
            inner: Arc::downgrade(inner),
            zid,
            alternatives,
            how,
            start,
        });
    }

    /// Answers Scouts for `inner` with `responder` from now on, until it closes.
    pub(crate) fn answer_scouts(
        &self,
        inner: &Arc<Inner>,
        responder: crate::scouting::responder::Responder,
    ) {
        let answering = Answering::new(inner, responder);
        self.send(Command::Answer(Box::new(answering)));
    }

    /// Scouts with `scouter` for `inner` until it closes, handing each Hello to
    /// `on_hello`.
    pub(crate) fn autoconnect(
        &self,
        inner: &Arc<Inner>,
        scouter: crate::scouting::Scouter,
        on_hello: scouting::OnHello,
    ) {
        let autoconnecting = Autoconnecting::new(inner, scouter, on_hello);
        self.send(Command::Autoconnect(Box::new(autoconnecting)));
    }

    /// Has `inner` stay connected to the first of `alternatives` that answers,
    /// connecting again when the link is lost.
    pub(crate) fn connect(&self, inner: &Arc<Inner>, alternatives: Arc<[Endpoint]>) {
        self.send(Command::Connect(Arc::downgrade(inner), alternatives));
    }
}

/// What a handshake is for.
enum Purpose {
    /// A link a listener accepted, holding one of the `accept_pending` places, from
    /// this source.
    Accepted(PendingAccept, refusals::Source),
    /// A connector's attempt.
    Connector(usize),
}

/// A handshake in progress.
struct Handshaking {
    /// The session it is for.
    inner: Weak<Inner>,
    handshake: Handshake,
    /// The socket registered for it, if any.
    registered: Option<RawFd>,
    purpose: Purpose,
    /// The link, for the log.
    describe: String,
    /// When it started.
    started: Instant,
}

/// What a token stands for.
enum Entry {
    Listener(Box<Accepting>),
    Handshake(Box<Handshaking>),
    /// A connection accepted while every `accept_pending` place was taken.
    Waiting(Box<accepting::Waiting>),
    /// A session answering Scouts.
    Answering(Box<Answering>),
    /// A session scouting to autoconnect.
    Autoconnecting(Box<Autoconnecting>),
}

impl Entry {
    /// The socket registered for it, if it has one of its own all its life (a
    /// handshake's changes as it goes).
    fn steady_fd(&self) -> Option<RawFd> {
        match self {
            Self::Listener(l) => Some(l.raw_fd()),
            Self::Waiting(w) => Some(w.raw_fd()),
            Self::Answering(a) => Some(a.raw_fd()),
            Self::Autoconnecting(a) => Some(a.raw_fd()),
            Self::Handshake(_) => None,
        }
    }
}

/// The loop's own state, on its thread.
struct Runner {
    poll: Poll,
    shared: Weak<LinksLoop>,
    entries: HashMap<Token, Entry>,
    next_token: usize,
    connectors: HashMap<usize, Connector>,
    next_connector: usize,
}

impl Runner {
    fn run(&mut self) {
        // One peer's link must not hold up the others: sends from here never wait.
        let turn = std::rc::Rc::new(crate::transport::Turn::new());
        crate::transport::serve_links_in(turn.clone());
        let caller = Caller::Turn(turn.clone());
        let mut events = Events::with_capacity(256);
        loop {
            let timeout = self
                .next_deadline()
                .map(|d| d.saturating_duration_since(Instant::now()));
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    tracing::error!("the links loop cannot wait for its sockets: {e}");
                    std::thread::sleep(Duration::from_millis(10));
                }
                continue;
            }
            self.forget_closed_sessions();
            self.run_commands(&caller);
            for event in &events {
                match event.token() {
                    WAKE => {}
                    token => self.ready(token, &caller),
                }
            }
            self.run_timers(&caller);
            // What adopting transports sent.
            crate::transport::hand_over_writes(&turn);
        }
    }

    /// Drops what belongs to sessions that closed.
    fn forget_closed_sessions(&mut self) {
        let open = |inner: &Weak<Inner>| inner.upgrade().is_some_and(|i| !i.is_closing());
        let gone: Vec<Token> = self
            .entries
            .iter()
            .filter(|(_, e)| match e {
                Entry::Listener(l) => !open(l.inner()),
                Entry::Handshake(h) => !open(&h.inner),
                Entry::Waiting(w) => !open(w.inner()),
                Entry::Answering(a) => !open(a.inner()),
                Entry::Autoconnecting(a) => !open(a.inner()),
            })
            .map(|(t, _)| *t)
            .collect();
        for token in gone {
            let fd = match self.entries.remove(&token) {
                Some(Entry::Handshake(h)) => h.registered,
                Some(entry) => entry.steady_fd(),
                None => None,
            };
            if let Some(fd) = fd {
                let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
            }
        }
        self.connectors.retain(|_, c| open(c.inner()));
    }

    fn token(&mut self) -> Token {
        let t = Token(self.next_token);
        self.next_token += 1;
        t
    }

    /// The earliest time something is due: a handshake's deadline, a listener's pause, a
    /// connector's next attempt, a get's deadline.
    fn next_deadline(&self) -> Option<Instant> {
        let gets = self.shared.upgrade().and_then(|s| s.deadlines.arm());
        let entries = self.entries.values().filter_map(|e| match e {
            Entry::Listener(l) => l.paused_until(),
            Entry::Handshake(h) => Some(h.handshake.next_due()),
            Entry::Waiting(w) => w.gives_up_at(),
            Entry::Answering(a) => a.due(),
            Entry::Autoconnecting(a) => a.due(),
        });
        let connectors = self.connectors.values().filter_map(Connector::retry_at);
        entries.chain(connectors).chain(gets).min()
    }

    fn run_commands(&mut self, caller: &Caller) {
        let Some(shared) = self.shared.upgrade() else {
            return;
        };
        let commands =
            std::mem::take(&mut *shared.commands.lock().unwrap_or_else(|e| e.into_inner()));
        for command in commands {
            match command {
                Command::Listen(inner, listener) => {
                    if let Some(inner) = inner.upgrade() {
                        self.add_listener(&inner, listener, caller);
                    }
                }
                Command::Connect(inner, alternatives) => {
                    let Some(inner) = inner.upgrade() else {
                        continue;
                    };
                    let id = self.next_connector;
                    self.next_connector += 1;
                    self.connectors
                        .insert(id, Connector::new(&inner, alternatives));
                    self.attempt(id, caller);
                }
                Command::ConnectOnce {
                    inner,
                    zid,
                    alternatives,
                    how,
                    start,
                } => {
                    let Some(inner) = inner.upgrade() else {
                        continue;
                    };
                    let id = self.next_connector;
                    self.next_connector += 1;
                    let c = Connector::discovered(&inner, zid, alternatives, how, start);
                    self.connectors.insert(id, c);
                }
                Command::Notified(token) => self.advance(token, caller),
                Command::Ended(id) => self.attempt(id, caller),
                Command::Answer(answering) => {
                    self.add_scouting(Entry::Answering(answering), caller)
                }
                Command::Autoconnect(autoconnecting) => {
                    self.add_scouting(Entry::Autoconnecting(autoconnecting), caller);
                }
            }
        }
    }

    fn ready(&mut self, token: Token, caller: &Caller) {
        match self.entries.get(&token) {
            Some(Entry::Listener(_)) => self.accept_all(token, caller),
            Some(Entry::Handshake(_)) => self.advance(token, caller),
            Some(Entry::Waiting(_)) => self.waiting_ready(token, caller),
            Some(Entry::Answering(_) | Entry::Autoconnecting(_)) => {
                match self.entries.get_mut(&token) {
                    Some(Entry::Answering(a)) => a.run(),
                    Some(Entry::Autoconnecting(a)) => a.run(Instant::now()),
                    _ => {}
                }
            }
            None => {}
        }
    }

    /// Serves a session's scouting from now on: its socket waited for readable, and
    /// run at once (what came before it was registered, the first Scout).
    fn add_scouting(&mut self, entry: Entry, caller: &Caller) {
        let token = self.token();
        if let Some(fd) = entry.steady_fd() {
            if let Err(e) =
                self.poll
                    .registry()
                    .register(&mut SourceFd(&fd), token, Interest::READABLE)
            {
                tracing::warn!("scouting: cannot wait for its socket: {e}");
                return;
            }
        }
        self.entries.insert(token, entry);
        self.ready(token, caller);
    }

    fn run_timers(&mut self, caller: &Caller) {
        let now = Instant::now();
        if let Some(shared) = self.shared.upgrade() {
            shared.deadlines.fire_due(now, caller);
        }
        let due: Vec<Token> = self
            .entries
            .iter()
            .filter(|(_, e)| match e {
                Entry::Listener(l) => l.paused_until().is_some_and(|t| t <= now),
                Entry::Handshake(h) => h.handshake.next_due() <= now,
                Entry::Waiting(w) => w.gives_up_at().is_none_or(|t| t <= now),
                Entry::Answering(a) => a.due().is_some_and(|t| t <= now),
                Entry::Autoconnecting(a) => a.due().is_some_and(|t| t <= now),
            })
            .map(|(t, _)| *t)
            .collect();
        for token in due {
            self.ready(token, caller);
        }
        let due: Vec<usize> = self
            .connectors
            .iter()
            .filter(|(_, c)| c.retry_at().is_some_and(|t| t <= now))
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            self.attempt(id, caller);
        }
    }

    /// A callback telling the loop that the handshake of `token` has news.
    fn notifier(&self, token: Token) -> Arc<dyn Fn() + Send + Sync> {
        let shared = self.shared.clone();
        Arc::new(move || {
            if let Some(shared) = shared.upgrade() {
                shared.send(Command::Notified(token));
            }
        })
    }

    /// Serves a handshake just started under `token`.
    fn add_handshake(
        &mut self,
        inner: &Arc<Inner>,
        token: Token,
        handshake: Handshake,
        purpose: Purpose,
        describe: String,
        caller: &Caller,
    ) {
        self.entries.insert(
            token,
            Entry::Handshake(Box::new(Handshaking {
                inner: Arc::downgrade(inner),
                handshake,
                registered: None,
                purpose,
                describe,
                started: Instant::now(),
            })),
        );
        self.advance(token, caller);
    }

    /// Takes the handshake of `token` as far as it goes; hands its outcome on once it
    /// has one.
    fn advance(&mut self, token: Token, caller: &Caller) {
        let Some(Entry::Handshake(h)) = self.entries.get_mut(&token) else {
            return;
        };
        let outcome = h.handshake.advance(Instant::now());
        if outcome.is_none() {
            let fd = match h.handshake.wait() {
                Wait::Socket { fd, .. } => Some(fd),
                Wait::Notification | Wait::Listener => None,
            };
            if fd != h.registered {
                if let Some(old) = h.registered.take() {
                    let _ = self.poll.registry().deregister(&mut SourceFd(&old));
                }
                if let Some(fd) = fd {
                    let interest = Interest::READABLE | Interest::WRITABLE;
                    match self
                        .poll
                        .registry()
                        .register(&mut SourceFd(&fd), token, interest)
                    {
                        Ok(()) => h.registered = Some(fd),
                        Err(e) => tracing::warn!("cannot wait for {}: {e}", h.describe),
                    }
                }
            }
            return;
        }
        let Some(Entry::Handshake(h)) = self.entries.remove(&token) else {
            return;
        };
        let h = *h;
        if let Some(fd) = h.registered {
            let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
        }
        let outcome = outcome.expect("an outcome");
        let Some(inner) = h.inner.upgrade() else {
            return;
        };
        match h.purpose {
            Purpose::Accepted(place, source) => {
                accepting::handshake_done(&inner, place, source, &h.describe, outcome, caller);
                self.place_freed(&inner, caller);
            }
            Purpose::Connector(id) => self.attempt_done(&inner, id, outcome, caller),
        }
    }

    /// Advances the handshakes of links a UDP listener hands datagrams to.
    fn advance_listener_fed(&mut self, caller: &Caller) {
        let fed: Vec<Token> = self
            .entries
            .iter()
            .filter(|(_, e)| matches!(e, Entry::Handshake(h) if h.handshake.fed_by_listener()))
            .map(|(t, _)| *t)
            .collect();
        for token in fed {
            self.advance(token, caller);
        }
    }
}

/// What a connector's attempt gave.
type Outcome = Result<Pending, OpenError>;

#[cfg(test)]
mod tests {
    use super::super::scenario::Scenario;
    use super::*;

    #[test]
    fn a_session_that_closes_takes_its_deadlines_out_of_the_queue() {
        let scenario = Scenario::new(weft_proto::core::WhatAmI::Peer);
        let inner = scenario.inner().clone();
        let held = Arc::weak_count(&inner);
        let far = Instant::now() + Duration::from_secs(3600);
        // Below the queue's first sweep, which would take out these (no get has them).
        for qid in 0..100 {
            inner.schedule_deadline(far, Timeout::Get(qid));
        }
        let links = LinksLoop::running().expect("scheduling started the links loop");
        assert_eq!(links.deadlines().pending_for(&inner), 100);
        scenario.session.close();
        assert_eq!(links.deadlines().pending_for(&inner), 0);
        // Nothing in the queue holds on to the session's memory.
        assert!(Arc::weak_count(&inner) <= held);
    }
}
