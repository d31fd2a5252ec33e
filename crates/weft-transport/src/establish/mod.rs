//! Unicast session establishment, in both roles.
//!
//! ```text
//!  Initiator                                  Acceptor
//!     |-- InitSyn  (role, zid, sizes, exts) ---->|  negotiates min(resolution, batch size),
//!     |<- InitAck  (..., cookie, exts) ----------|  QoS and patch level
//!     |-- OpenSyn  (lease, initial SN, cookie) ->|  checks the cookie
//!     |<- OpenAck  (lease, initial SN) ----------|
//!     established: both may send Frames
//! ```
//!
//! With user/password settings ([`UsrPwd`]) the four messages also carry Zenoh's Auth
//! extension (see the `usrpwd` module); without them nothing changes on the wire.
//!
//! Each machine takes the batches it receives (without stream prefix) and writes the batch
//! to send into a caller-supplied buffer. On failure the error says which Close reason to
//! send ([`EstablishError::close_reason`]) before dropping the link.

mod acceptor;
mod initiator;
mod usrpwd;

pub use acceptor::Acceptor;
pub use initiator::Initiator;
pub use usrpwd::{sign, AuthError, Dictionary, DictionaryError, UsrPwd, HMAC_LEN};

use thiserror::Error;
use weft_proto::batch::{BatchItem, BatchReader};
use weft_proto::core::{Priority, Resolution, WhatAmI, ZenohId};
use weft_proto::transport::{Close, CloseReason, TransportMessage};
use weft_proto::{DecodeError, EncodeError};

/// The smallest batch size a peer may announce, in bytes (length prefix included on
/// stream links). Below it a batch cannot hold a Frame header and the header of one
/// fragment with room to spare for data, so such a handshake is refused (Close INVALID)
/// instead of leaving every sender to that peer unable to send. Zenoh-Pico's smallest
/// practical configurations are well above it.
pub const MIN_BATCH_SIZE: u16 = 64;

/// The batch size both sides use: the smaller of the two proposals, refused below
/// [`MIN_BATCH_SIZE`].
pub fn negotiate_batch_size(own: u16, peer: u16) -> Result<u16, EstablishError> {
    if peer < MIN_BATCH_SIZE {
        return Err(EstablishError::BatchSize(peer));
    }
    Ok(own.min(peer))
}

/// What this node proposes for a unicast session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalParams {
    /// This node's id.
    pub zid: ZenohId,
    /// This node's role.
    pub whatami: WhatAmI,
    /// Largest SN and request-id widths it accepts.
    pub resolution: Resolution,
    /// Largest batch it accepts: min(configured, link MTU).
    pub batch_size: u16,
    /// Its lease: how long the peer waits for traffic from it.
    pub lease_ms: u64,
    /// Whether it offers QoS (8 priorities with their own SNs).
    pub qos: bool,
    /// Its patch level (1: it marks and honours First/Drop fragment markers).
    pub patch: u64,
    /// The initiator of a link reserved for a range of priorities (an endpoint with
    /// `prio=START-END` metadata): the range, offered in the QoSLink extension.
    pub link_priorities: Option<PriorityRange>,
}

/// An inclusive range of priorities, `start` being the highest (lowest number).
pub type PriorityRange = (Priority, Priority);

/// Whether `outer` contains every priority of `inner`.
pub fn range_includes(outer: PriorityRange, inner: PriorityRange) -> bool {
    outer.0 <= inner.0 && inner.1 <= outer.1
}

impl LocalParams {
    /// Zenoh's defaults: 32-bit resolutions, 65535-byte batches, 10 s lease, QoS, patch 1.
    pub const fn new(zid: ZenohId, whatami: WhatAmI) -> Self {
        Self {
            zid,
            whatami,
            resolution: Resolution::DEFAULT,
            batch_size: u16::MAX,
            lease_ms: 10_000,
            qos: true,
            patch: 1,
            link_priorities: None,
        }
    }
}

/// What both sides agreed: everything the transport needs once established.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// The peer's id.
    pub peer_zid: ZenohId,
    /// The peer's role.
    pub peer_whatami: WhatAmI,
    /// SN and request-id widths.
    pub resolution: Resolution,
    /// Largest batch either side may send (on stream links, prefix included).
    pub batch_size: u16,
    /// Whether QoS is on (8 priorities, frame priority extension allowed).
    pub qos: bool,
    /// Patch level (>= 1: First/Drop fragment markers are used).
    pub patch: u64,
    /// This node's lease, as announced.
    pub own_lease_ms: u64,
    /// The peer's lease: declare it dead after this long without a batch.
    pub peer_lease_ms: u64,
    /// First SN this node uses on every channel.
    pub own_initial_sn: u32,
    /// First SN the peer uses on every channel.
    pub peer_initial_sn: u32,
    /// The priorities this link is reserved for (QoSLink), if it is.
    pub link_priorities: Option<PriorityRange>,
}

/// Why establishment failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum EstablishError {
    /// The batch did not decode.
    #[error("malformed handshake message: {0}")]
    Decode(#[from] DecodeError),
    /// The reply could not be encoded.
    #[error("cannot encode the handshake reply: {0}")]
    Encode(#[from] EncodeError),
    /// The peer speaks another protocol version.
    #[error("protocol version {got:#04x} is not supported (0x09 expected)")]
    Version {
        /// The version received.
        got: u8,
    },
    /// A message other than the one the handshake expects at this step.
    #[error("expected {expected}, received {got}")]
    Unexpected {
        /// What was expected.
        expected: &'static str,
        /// What came.
        got: &'static str,
    },
    /// The peer answered with a larger resolution than proposed.
    #[error("the peer's resolution exceeds the proposed one")]
    Resolution,
    /// An initial SN outside the negotiated range.
    #[error("initial SN {0} is outside the negotiated range")]
    InitialSn(u32),
    /// The OpenSyn did not echo the InitAck's cookie.
    #[error("the cookie does not match")]
    Cookie,
    /// The peer has this node's own id.
    #[error("connection to self")]
    ConnectionToSelf,
    /// The peer closed the link.
    #[error("the peer closed the link: {0}")]
    Closed(CloseReason),
    /// The QoS and QoSLink extensions were both sent.
    #[error("both the QoS and the QoSLink extension were sent")]
    QosTwice,
    /// The acceptor answered with a priority range that does not contain the one asked.
    #[error("the peer's priority range {got:?} does not contain the link's range {asked:?}")]
    PriorityRange {
        /// The range the initiator asked for.
        asked: PriorityRange,
        /// The range in the acceptor's answer.
        got: PriorityRange,
    },
    /// The peer announced a batch size too small to carry a message.
    #[error("batch size {0} is below the minimum of {MIN_BATCH_SIZE} bytes")]
    BatchSize(u16),
    /// User/password authentication failed (either side).
    #[error("authentication failed: {0}")]
    Auth(#[from] AuthError),
    /// A message arrived after the handshake finished or failed.
    #[error("the handshake is over")]
    Finished,
}

impl EstablishError {
    /// The Close reason to send before dropping the link (none if the peer closed).
    pub fn close_reason(&self) -> Option<CloseReason> {
        match self {
            Self::Closed(_) => None,
            Self::ConnectionToSelf => Some(CloseReason::CONNECTION_TO_SELF),
            // Zenoh closes with GENERIC when an extension (authentication included)
            // fails.
            Self::Encode(_) | Self::Auth(_) => Some(CloseReason::GENERIC),
            _ => Some(CloseReason::INVALID),
        }
    }
}

/// What a received batch led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Send the batch written into the output buffer, and wait for the next one.
    Reply,
    /// Established. If the output buffer is not empty, send it first (the acceptor's
    /// OpenAck).
    Established(Negotiated),
}

/// Writes a Close with `reason` as a whole batch.
pub fn close_batch(reason: CloseReason, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    TransportMessage::Close(Close::new(reason)).encode(out)
}

/// The single transport message a handshake batch must hold.
fn single_message(batch: &[u8]) -> Result<TransportMessage<'_>, EstablishError> {
    let mut reader = BatchReader::new(batch);
    let item = match reader.next() {
        Some(item) => item?,
        None => {
            return Err(EstablishError::Unexpected {
                expected: "a handshake message",
                got: "an empty batch",
            })
        }
    };
    match item {
        BatchItem::Transport(m) => Ok(m),
        BatchItem::Frame(_) | BatchItem::Network(_) => Err(EstablishError::Unexpected {
            expected: "a handshake message",
            got: "Frame",
        }),
    }
}

/// Reports a Close received in place of a handshake message, or an unexpected message.
fn unexpected(expected: &'static str, got: &TransportMessage<'_>) -> EstablishError {
    match got {
        TransportMessage::Close(c) => EstablishError::Closed(c.reason),
        other => EstablishError::Unexpected {
            expected,
            got: other.name(),
        },
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod usrpwd_tests;
