//! A handshake that never waits: the link's connection, its TLS or QUIC handshake, then
//! the transport's (weft-transport's sans-I/O `Initiator` or `Acceptor`), each taken as
//! far as the socket lets it every time [`Handshake::advance`] is called. The session's
//! links loop calls it when the socket is ready, when a QUIC handshake's notification
//! comes, and at the deadline.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_transport::establish::{
    close_batch, Acceptor, EstablishError, Initiator, LocalParams, Negotiated, Progress, UsrPwd,
};

use super::establish::{establish, Pending};
use super::{Handler, OpenError};
use crate::link::{self, BatchReader, Connecting, Link};

/// Which end of the handshake this node is.
enum Side {
    /// It opened the link.
    Initiator(Initiator),
    /// It accepted it.
    Acceptor(Acceptor),
}

impl Side {
    fn on_batch(&mut self, batch: &[u8], out: &mut Vec<u8>) -> Result<Progress, EstablishError> {
        match self {
            Self::Initiator(i) => i.on_batch(batch, out),
            Self::Acceptor(a) => a.on_batch(batch, out),
        }
    }
}

/// Where a handshake is.
enum Stage {
    /// The link's connection is being made.
    Connecting(Box<Connecting>),
    /// The link's own handshake (TLS or QUIC) runs.
    Securing(BatchReader),
    /// The transport's handshake runs; `agreed` once it is over and the last batch is
    /// still being written.
    Exchanging {
        reader: BatchReader,
        agreed: Option<Negotiated>,
    },
    /// Over, or failed.
    Done,
}

/// What a handshake waits for after [`Handshake::advance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Its socket, to be readable (or, with `write`, writable).
    Socket {
        /// The socket.
        fd: RawFd,
        /// Whether it waits to write (else to read).
        write: bool,
    },
    /// Its notification (a QUIC handshake running on the QUIC runtime).
    Notification,
    /// Datagrams its listener hands over (a UDP link accepted by a listener).
    Listener,
}

/// A transport's handshake in progress, on a link being made or accepted.
pub(crate) struct Handshake {
    stage: Stage,
    /// This node's end; an initiator's is made once its link is (its batch size is
    /// capped by the link's).
    side: Option<Side>,
    /// What an initiator announces, and its credentials, until its link is made.
    opening: Option<(LocalParams, Option<Arc<UsrPwd>>)>,
    /// The batch to write, and how much of it (framed) is written.
    out: Vec<u8>,
    written: usize,
    deadline: Instant,
    /// When it started (see [`Transport::handshake_started`]).
    started: Instant,
    handler: Arc<dyn Handler>,
    notify: Arc<dyn Fn() + Send + Sync>,
}

impl Handshake {
    /// Opens a transport to `endpoint`: makes the link with `settings`, then runs the
    /// handshakes as the initiator, presenting the credentials of `usrpwd` if it has
    /// any, all before `timeout` (Zenoh's `transport.unicast.open_timeout`). `notify` is
    /// called when a QUIC handshake's outcome is there.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        endpoint: &crate::endpoint::Endpoint,
        settings: &link::LinkSettings,
        local: LocalParams,
        usrpwd: Option<&Arc<UsrPwd>>,
        timeout: Duration,
        handler: Arc<dyn Handler>,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Self, OpenError> {
        let connecting = Connecting::start(endpoint, settings)?;
        Ok(Self {
            stage: Stage::Connecting(Box::new(connecting)),
            side: None,
            opening: Some((local, usrpwd.cloned())),
            out: Vec::new(),
            written: 0,
            deadline: Instant::now() + timeout,
            started: Instant::now(),
            handler,
            notify,
        })
    }

    /// Runs the acceptor's handshakes on an accepted `link`, all before `timeout`
    /// (Zenoh's `transport.unicast.accept_timeout`); with enabled `usrpwd` settings the
    /// initiator must authenticate against their dictionary.
    pub(crate) fn accept(
        link: Link,
        local: LocalParams,
        usrpwd: Option<&Arc<UsrPwd>>,
        timeout: Duration,
        handler: Arc<dyn Handler>,
        notify: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Self, OpenError> {
        let random = |bytes: &mut [u8]| {
            getrandom::fill(bytes).map_err(|e| OpenError::Io(io::Error::other(e.to_string())))
        };
        let mut nonce = [0u8; 16];
        random(&mut nonce)?;
        let mut local = local;
        local.batch_size = local.batch_size.min(link.mtu());
        let mut acceptor = Acceptor::new(local, nonce);
        if let Some(usrpwd) = usrpwd {
            let mut challenge = [0u8; 8];
            random(&mut challenge)?;
            acceptor = acceptor.with_usrpwd(usrpwd.clone(), u64::from_le_bytes(challenge));
        }
        let mut me = Self {
            stage: Stage::Done,
            side: Some(Side::Acceptor(acceptor)),
            opening: None,
            out: Vec::new(),
            written: 0,
            deadline: Instant::now() + timeout,
            started: Instant::now(),
            handler,
            notify,
        };
        me.secure(link)?;
        Ok(me)
    }

    /// When [`Handshake::advance`] is due whatever its socket says: the deadline, or
    /// earlier a serial line's `I` to send again.
    pub(crate) fn next_due(&self) -> Instant {
        match &self.stage {
            Stage::Connecting(c) => c.due().map_or(self.deadline, |d| d.min(self.deadline)),
            _ => self.deadline,
        }
    }

    /// The link made so far, if any.
    fn link(&self) -> Option<&Link> {
        match &self.stage {
            Stage::Securing(r) | Stage::Exchanging { reader: r, .. } => Some(r.link()),
            Stage::Connecting(_) | Stage::Done => None,
        }
    }

    /// The socket this handshake reads and writes, once there is one (it stays the same
    /// from the connection to the end).
    pub(crate) fn fd(&self) -> Option<RawFd> {
        match &self.stage {
            Stage::Connecting(c) => c.fd().map(|fd| fd.as_raw_fd()),
            // A link its listener reads has no socket of its own to wait on.
            _ => self
                .link()
                .filter(|l| !l.reads_from_listener())
                .map(Link::raw_fd),
        }
    }

    /// Whether its listener may hand its link datagrams (see [`Link::fed_by_listener`]):
    /// advance it after the listener is read.
    pub(crate) fn fed_by_listener(&self) -> bool {
        self.link().is_some_and(Link::fed_by_listener)
    }

    /// What the handshake waits for now.
    pub(crate) fn wait(&self) -> Wait {
        let socket = |fd: Option<RawFd>, write| match fd {
            Some(fd) => Wait::Socket { fd, write },
            None => Wait::Listener,
        };
        match &self.stage {
            Stage::Connecting(c) => socket(self.fd(), c.wants_write()),
            Stage::Securing(r) if r.link().handshake_ends_by_notification() => Wait::Notification,
            Stage::Securing(r) => socket(self.fd(), r.link().handshake_wants_write()),
            Stage::Exchanging { .. } => socket(self.fd(), !self.out.is_empty()),
            Stage::Done => Wait::Notification,
        }
    }

    /// Starts the link's own handshake (TLS, QUIC) on a link just made.
    fn secure(&mut self, mut link: Link) -> Result<(), OpenError> {
        if let Some((mut local, usrpwd)) = self.opening.take() {
            local.batch_size = local.batch_size.min(link.mtu());
            let mut initiator = Initiator::new(local);
            if let Some(usrpwd) = usrpwd {
                initiator = initiator.with_usrpwd(usrpwd);
            }
            self.side = Some(Side::Initiator(initiator));
        }
        link.start_handshake(self.deadline, self.notify.clone())?;
        self.stage = Stage::Securing(BatchReader::new(link));
        Ok(())
    }

    /// Starts the transport's handshake once the link's own is over.
    fn exchange(&mut self, mut reader: BatchReader) -> Result<(), OpenError> {
        reader.link_mut().set_handshake_nonblocking(true)?;
        if let Some(Side::Initiator(i)) = &mut self.side {
            i.start(&mut self.out)?;
            self.written = 0;
        }
        self.stage = Stage::Exchanging {
            reader,
            agreed: None,
        };
        Ok(())
    }

    /// Goes on as far as the link lets it at `now`: `None` while it waits (see
    /// [`Handshake::wait`]), the established transport or the error once it is over. A
    /// handshake past its deadline fails.
    pub(crate) fn advance(&mut self, now: Instant) -> Option<Result<Pending, OpenError>> {
        match self.step(now) {
            Ok(None) => None,
            Ok(Some(p)) => {
                self.stage = Stage::Done;
                Some(Ok(p))
            }
            Err(e) => {
                self.stage = Stage::Done;
                Some(Err(e))
            }
        }
    }

    fn step(&mut self, now: Instant) -> Result<Option<Pending>, OpenError> {
        if now >= self.deadline {
            return Err(OpenError::Io(io::Error::new(
                io::ErrorKind::TimedOut,
                "the handshake did not end in time",
            )));
        }
        loop {
            match std::mem::replace(&mut self.stage, Stage::Done) {
                Stage::Connecting(mut c) => match c.poll()? {
                    Some(link) => self.secure(link)?,
                    None => {
                        self.stage = Stage::Connecting(c);
                        return Ok(None);
                    }
                },
                Stage::Securing(mut reader) => {
                    if reader.link_mut().advance_handshake(now)? {
                        self.exchange(reader)?;
                    } else {
                        self.stage = Stage::Securing(reader);
                        return Ok(None);
                    }
                }
                Stage::Exchanging { reader, agreed } => {
                    return self.exchanging(reader, agreed);
                }
                Stage::Done => {
                    return Err(OpenError::Io(io::Error::other("the handshake is over")));
                }
            }
        }
    }

    /// The transport's handshake: writes what there is to write, reads and answers.
    fn exchanging(
        &mut self,
        mut reader: BatchReader,
        mut agreed: Option<Negotiated>,
    ) -> Result<Option<Pending>, OpenError> {
        loop {
            if !self.out.is_empty() {
                if !reader
                    .link()
                    .write_batch_from(&self.out, &mut self.written)?
                {
                    self.stage = Stage::Exchanging { reader, agreed };
                    return Ok(None);
                }
                self.out.clear();
                self.written = 0;
            }
            if let Some(negotiated) = agreed.take() {
                return self.established(reader, negotiated).map(Some);
            }
            let batch = match reader.next_batch() {
                Ok(Some(b)) => b,
                Ok(None) => {
                    return Err(OpenError::Io(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "link closed during the handshake",
                    )))
                }
                Err(e) if link::is_timeout(&e) => {
                    self.stage = Stage::Exchanging { reader, agreed };
                    return Ok(None);
                }
                Err(e) => return Err(e.into()),
            };
            let side = self.side.as_mut().expect("a side once the link is made");
            match side.on_batch(batch, &mut self.out) {
                Ok(Progress::Established(n)) => agreed = Some(n),
                Ok(_) => {}
                Err(e) => {
                    if let Some(reason) = e.close_reason() {
                        // Told to the peer if the socket takes it now.
                        let mut close = Vec::new();
                        let mut written = 0;
                        let _ = close_batch(reason, &mut close);
                        let _ = reader.link().write_batch_from(&close, &mut written);
                    }
                    return Err(e.into());
                }
            }
        }
    }

    /// The transport the handshake agreed on.
    fn established(
        &mut self,
        mut reader: BatchReader,
        negotiated: Negotiated,
    ) -> Result<Pending, OpenError> {
        // Its reader (a UDP link's thread) or the I/O threads set it as they need it.
        reader.link_mut().set_handshake_nonblocking(false)?;
        let user = match &self.side {
            Some(Side::Acceptor(a)) => a.authenticated_user().map(str::to_owned),
            // As in Zenoh, the node that opened the link knows no user name of its peer.
            _ => None,
        };
        if let Some(user) = &user {
            tracing::debug!(
                "{} ({}) authenticated as user `{}`",
                reader.link().describe(),
                negotiated.peer_zid,
                weft_proto::printable::printable(user)
            );
        }
        Ok(establish(
            reader,
            negotiated,
            self.handler.clone(),
            user,
            self.started,
        )?)
    }
}
