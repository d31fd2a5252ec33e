//! weft's transport layer as sans-I/O state machines.
//!
//! Nothing here touches a socket or reads a clock: the link drivers feed received batches
//! in and send the batches these machines produce; time, when needed, is passed in.
//!
//! - [`establish`]: the unicast handshake (InitSyn, InitAck, OpenSyn, OpenAck) in both
//!   roles, with parameter and extension negotiation;
//! - [`lease`]: when to send keep-alives and when the peer is dead;
//! - [`multicast`]: the members of a multicast group (Join, per-member sequence numbers,
//!   leases);
//! - [`sn`]: sequence-number ranges, counters and the receiver's ordering rule;
//! - [`rx`]: the receive side of an established transport: SN checks, priorities,
//!   reassembly, delivery of network messages;
//! - [`tx`]: the transmit side: packing messages into Frames and batches, fragmenting
//!   what does not fit;
//! - [`queue`]: the transmit queue around it: batches waiting per priority, bounded,
//!   forwarded messages waiting for room, congestion control's decisions.

pub mod connection;
pub mod establish;
pub mod lease;
pub mod multicast;
pub mod queue;
pub mod rx;
pub mod sn;
pub mod tx;

#[cfg(test)]
mod test_support;
