//! The transport a handshake ([`super::handshake::Handshake`]) agreed: set up, then
//! handed to the I/O threads once its node has registered it.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

use weft_proto::batch::framing::PrefixWidth;
use weft_proto::transport::CloseReason;
use weft_transport::connection::{Framing, Outbound, OutboundStats};
use weft_transport::establish::Negotiated;

use super::priority_links::PriorityLinks;
use super::reader::LinkRx;
use super::{reactor, Caller, Handler, Transport, TransportStats, TxState};
use crate::link::BatchReader;

/// An established transport whose threads are not started yet: register it first (so
/// that nothing it receives finds it unknown), then [`Pending::start`] it.
pub(crate) struct Pending {
    transport: Arc<Transport>,
    /// What was read from its link past the handshake (the start of the next batches).
    rest: Vec<u8>,
    handler: Arc<dyn Handler>,
}

impl Pending {
    /// The transport.
    pub(crate) const fn transport(&self) -> &Arc<Transport> {
        &self.transport
    }

    /// Starts this transport as a link reserved for its priorities, attached to `main`
    /// (the node's transport with the same peer): messages of those priorities sent on
    /// `main` go on it, and what it receives is handed over as received on `main`.
    /// Returns false, and closes it, when it has no range, or `main` is closed, or
    /// narrower links already cover its whole range; a wider link it takes every
    /// priority from is closed.
    pub(crate) fn start_beside(self, main: &Arc<Transport>, caller: &Caller) -> bool {
        let link = self.transport.clone();
        let _ = link.main.set(Arc::downgrade(main));
        let (took, displaced) = if main.is_closed() {
            (false, Vec::new())
        } else {
            main.priority_links.attach(&link)
        };
        for old in displaced {
            old.close(CloseReason::MAX_LINKS, caller);
        }
        if !took {
            link.close(CloseReason::MAX_LINKS, caller);
            return false;
        }
        link.set_manual_batching(main.manual_batching.load(Ordering::Relaxed));
        self.start(caller);
        // The main transport closed meanwhile: it may have missed this link.
        if main.is_closed() {
            main.priority_links.detach(&link);
            link.close(CloseReason::GENERIC, caller);
        }
        true
    }

    /// Starts serving the transport: an I/O thread reads and writes its link.
    pub(crate) fn start(self, caller: &Caller) -> Arc<Transport> {
        let Self {
            transport,
            rest,
            handler,
        } = self;
        let rx = LinkRx::new(transport.clone(), handler, Instant::now());
        let failed = match transport.link.set_nonblocking() {
            Err(e) => Some((rx, e.to_string())),
            Ok(()) => reactor::add(rest, rx).err().map(|failed| *failed),
        };
        if let Some((rx, e)) = failed {
            // Out of threads or descriptors: this session cannot be served; the others
            // go on.
            tracing::warn!(
                "closing {} ({}): cannot serve it: {e}",
                transport.describe,
                transport.peer_zid()
            );
            transport.abort();
            rx.finish(caller);
        }
        transport
    }
}

/// Sets up the transport a handshake agreed; `user` is the user name the peer
/// authenticated as (user/password authentication, acceptor only); the handshake started
/// at `handshake_started`.
pub(super) fn establish(
    reader: BatchReader,
    negotiated: Negotiated,
    handler: Arc<dyn Handler>,
    user: Option<String>,
    handshake_started: Instant,
) -> io::Result<Pending> {
    let describe = reader.link().describe();
    let (link, rest) = reader.into_parts();
    let limits = handler.tx_limits();
    let framing = if link.is_datagram() {
        Framing::Datagram
    } else {
        Framing::Stream(PrefixWidth::U16)
    };
    let connection_limits = weft_transport::connection::Limits {
        sender_writes_fragments: !link.seals_on_write(),
        sender_writes_any_size: link.encrypts(),
        ..limits.connection()
    };
    let out = Outbound::new(&negotiated, framing, connection_limits, Instant::now());
    let transport = Arc::new_cyclic(|me| Transport {
        me: me.clone(),
        io_thread: reactor::assign(),
        negotiated,
        describe,
        user,
        limits,
        state: Mutex::new(TxState {
            out,
            counted: OutboundStats::default(),
            idle_waiters: 0,
            over_since: None,
            paused_sources: Vec::new(),
        }),
        idle: Condvar::new(),
        link,
        write_lock: Mutex::new(()),
        closed: AtomicBool::new(false),
        manual_batching: AtomicBool::new(false),
        epoch: Instant::now(),
        handshake_started,
        last_tx_ms: AtomicU64::new(0),
        stats: TransportStats::default(),
        drop_log: Mutex::new(super::drops::DropLog::default()),
        priority_links: PriorityLinks::default(),
        main: OnceLock::new(),
        access: OnceLock::new(),
        reader_done: Mutex::new(false),
        reader_exit: Condvar::new(),
        on_end: Mutex::new(Vec::new()),
        end_reason: OnceLock::new(),
    });
    Ok(Pending {
        transport,
        rest,
        handler,
    })
}
