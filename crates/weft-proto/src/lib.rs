//! The Zenoh wire protocol, version 0x09, as spoken by Eclipse Zenoh 1.x: every message
//! and extension, decoded from and encoded to bytes, with no I/O.
//!
//! Layers, bottom up:
//! - [`reader`] / [`writer`]: checked primitive reads (zints, byte sequences) and
//!   destinations for encoding;
//! - [`core`]: ZenohIDs, roles, timestamps, encodings, wire expressions, priorities;
//! - [`ext`]: the extension chain every message may carry;
//! - [`scouting`]: Scout and Hello (UDP discovery);
//! - [`transport`]: Init, Open, Close, KeepAlive, Frame, Fragment, Join, OAM;
//! - [`network`]: Push, Request, Response, ResponseFinal, Interest, Declare, OAM, and
//!   the declarations;
//! - [`zenoh`]: Put, Del, Query, Reply, Err;
//! - [`batch`]: walking a batch, stream framing, compression, fragment reassembly;
//! - [`printable`]: text from the wire, escaped and bounded for logs.
//!
//! Decoding borrows from the input: payloads, keys and extension values are sub-slices of
//! the decoded bytes. Encoding writes into a caller-supplied [`writer::Writer`]. Decoding
//! never panics: malformed input gives a [`DecodeError`] naming what was wrong and where.

#![no_std]

extern crate alloc;

pub mod batch;
pub mod core;
pub mod error;
pub mod ext;
pub mod network;
pub mod printable;
pub mod reader;
pub mod scouting;
pub mod transport;
pub mod writer;
pub mod zenoh;

pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub use reader::Reader;
pub use writer::{SliceWriter, Writer};

/// The protocol version this crate speaks.
pub const VERSION: u8 = 0x09;
