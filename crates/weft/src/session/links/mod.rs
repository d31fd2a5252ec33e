//! The links loop: one thread per session that makes its links. It waits in one `epoll`
//! for every listener, every handshake in progress (accepted or opened) and every
//! connector's next attempt, and never waits for any one of them: handshakes run as far
//! as their socket lets them ([`crate::transport::Handshake`]), each within its deadline,
//! and a connector's pause between attempts is a timer. An established transport is handed
//! to the session ([`Inner::adopt`]), which gives it to the I/O threads.
//!
//! Other threads reach it through [`LinksLoop`]: a command queue and a waker. Files:
//! `accepting` (listeners and the handshakes of the links they accept), `connector`
//! (connecting to configured endpoints, again when the link is lost, with back-off).

mod accepting;
mod connector;

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};

use super::Inner;
use crate::endpoint::Endpoint;
use crate::link::Listener;
use crate::transport::{Handshake, OpenError, Pending, Wait};
use accepting::{Accepting, PendingAccept};
use connector::Connector;

/// The waker's token; entries take the others.
const WAKE: Token = Token(0);

/// What other threads ask of the links loop.
enum Command {
    /// Serve this listener.
    Listen(Listener),
    /// Stay connected to one of these endpoints.
    Connect(Arc<[Endpoint]>),
    /// The QUIC handshake of this entry has an outcome.
    Notified(Token),
    /// The link of this connector ended: connect again.
    Ended(usize),
}

/// The handle other threads have on a session's links loop.
pub(crate) struct LinksLoop {
    waker: Waker,
    commands: Mutex<Vec<Command>>,
}

impl LinksLoop {
    /// Starts the links loop of `inner` on a thread of its own (`weft-links`).
    pub(crate) fn start(inner: &Arc<Inner>) -> std::io::Result<Arc<Self>> {
        let poll = Poll::new()?;
        let shared = Arc::new(Self {
            waker: Waker::new(poll.registry(), WAKE)?,
            commands: Mutex::new(Vec::new()),
        });
        let weak = Arc::downgrade(inner);
        let mut runner = Runner {
            poll,
            inner: weak,
            shared: shared.clone(),
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

    /// Serves `listener` from now on.
    pub(crate) fn listen(&self, listener: Listener) {
        self.send(Command::Listen(listener));
    }

    /// Stays connected to the first of `alternatives` that answers, connecting again
    /// when the link is lost.
    pub(crate) fn connect(&self, alternatives: Arc<[Endpoint]>) {
        self.send(Command::Connect(alternatives));
    }
}

/// What a handshake is for.
enum Purpose {
    /// A link a listener accepted, holding one of the `accept_pending` places.
    Accepted(PendingAccept),
    /// A connector's attempt.
    Connector(usize),
}

/// A handshake in progress.
struct Handshaking {
    handshake: Handshake,
    /// The socket registered for it, if any.
    registered: Option<RawFd>,
    purpose: Purpose,
    /// The link, for the log.
    describe: String,
}

/// What a token stands for.
enum Entry {
    Listener(Accepting),
    Handshake(Box<Handshaking>),
}

/// The loop's own state, on its thread.
struct Runner {
    poll: Poll,
    inner: Weak<Inner>,
    shared: Arc<LinksLoop>,
    entries: HashMap<Token, Entry>,
    next_token: usize,
    connectors: HashMap<usize, Connector>,
    next_connector: usize,
}

impl Runner {
    fn run(&mut self) {
        // One peer's link must not hold up the others: sends from here never wait.
        crate::transport::never_wait_here();
        let mut events = Events::with_capacity(256);
        loop {
            let Some(inner) = self.inner.upgrade() else {
                return;
            };
            if inner.is_closing() {
                return;
            }
            drop(inner);
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
            let Some(inner) = self.inner.upgrade() else {
                return;
            };
            if inner.is_closing() {
                return;
            }
            self.run_commands(&inner);
            for event in &events {
                match event.token() {
                    WAKE => {}
                    token => self.ready(&inner, token),
                }
            }
            self.run_timers(&inner);
            // What adopting transports sent.
            crate::transport::hand_over_writes();
        }
    }

    fn token(&mut self) -> Token {
        let t = Token(self.next_token);
        self.next_token += 1;
        t
    }

    /// The earliest time something is due: a handshake's deadline, a listener's pause, a
    /// connector's next attempt.
    fn next_deadline(&self) -> Option<Instant> {
        let entries = self.entries.values().filter_map(|e| match e {
            Entry::Listener(l) => l.paused_until(),
            Entry::Handshake(h) => Some(h.handshake.deadline()),
        });
        let connectors = self.connectors.values().filter_map(Connector::retry_at);
        entries.chain(connectors).min()
    }

    fn run_commands(&mut self, inner: &Arc<Inner>) {
        let commands = std::mem::take(
            &mut *self
                .shared
                .commands
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for command in commands {
            match command {
                Command::Listen(listener) => self.add_listener(inner, listener),
                Command::Connect(alternatives) => {
                    let id = self.next_connector;
                    self.next_connector += 1;
                    self.connectors
                        .insert(id, Connector::new(inner, alternatives));
                    self.attempt(inner, id);
                }
                Command::Notified(token) => self.advance(inner, token),
                Command::Ended(id) => {
                    if self.connectors.contains_key(&id) {
                        self.attempt(inner, id);
                    }
                }
            }
        }
    }

    fn ready(&mut self, inner: &Arc<Inner>, token: Token) {
        match self.entries.get(&token) {
            Some(Entry::Listener(_)) => self.accept_all(inner, token),
            Some(Entry::Handshake(_)) => self.advance(inner, token),
            None => {}
        }
    }

    fn run_timers(&mut self, inner: &Arc<Inner>) {
        let now = Instant::now();
        let due: Vec<Token> = self
            .entries
            .iter()
            .filter(|(_, e)| match e {
                Entry::Listener(l) => l.paused_until().is_some_and(|t| t <= now),
                Entry::Handshake(h) => h.handshake.deadline() <= now,
            })
            .map(|(t, _)| *t)
            .collect();
        for token in due {
            self.ready(inner, token);
        }
        let due: Vec<usize> = self
            .connectors
            .iter()
            .filter(|(_, c)| c.retry_at().is_some_and(|t| t <= now))
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            self.attempt(inner, id);
        }
    }

    /// A callback telling the loop that the handshake of `token` has news.
    fn notifier(&self, token: Token) -> Arc<dyn Fn() + Send + Sync> {
        let shared = Arc::downgrade(&self.shared);
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
    ) {
        self.entries.insert(
            token,
            Entry::Handshake(Box::new(Handshaking {
                handshake,
                registered: None,
                purpose,
                describe,
            })),
        );
        self.advance(inner, token);
    }

    /// Takes the handshake of `token` as far as it goes; hands its outcome on once it
    /// has one.
    fn advance(&mut self, inner: &Arc<Inner>, token: Token) {
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
        match h.purpose {
            Purpose::Accepted(place) => {
                accepting::handshake_done(inner, place, &h.describe, outcome)
            }
            Purpose::Connector(id) => self.attempt_done(inner, id, outcome),
        }
    }

    /// Advances the handshakes of links a UDP listener hands datagrams to.
    fn advance_listener_fed(&mut self, inner: &Arc<Inner>) {
        let fed: Vec<Token> = self
            .entries
            .iter()
            .filter(
                |(_, e)| matches!(e, Entry::Handshake(h) if h.handshake.wait() == Wait::Listener),
            )
            .map(|(t, _)| *t)
            .collect();
        for token in fed {
            self.advance(inner, token);
        }
    }
}

/// What a connector's attempt gave.
type Outcome = Result<Pending, OpenError>;
