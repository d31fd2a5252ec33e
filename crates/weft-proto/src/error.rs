//! Typed errors of the codec.
//!
//! Decoding never panics: every malformed input yields a [`DecodeError`] that says what
//! was wrong ([`DecodeErrorKind`]) and at which byte offset of the decoded input.

use thiserror::Error;

/// The layer a message identifier belongs to, used in error reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Scouting messages (Scout, Hello).
    Scouting,
    /// Transport messages (Init, Open, Close, KeepAlive, Frame, Fragment, Join, OAM).
    Transport,
    /// Network messages (Push, Request, Response, ResponseFinal, Interest, Declare, OAM).
    Network,
    /// Declarations carried by a Declare message.
    Declaration,
    /// Zenoh data messages (Put, Del, Query, Reply, Err).
    Data,
}

impl core::fmt::Display for Layer {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Self::Scouting => "scouting",
            Self::Transport => "transport",
            Self::Network => "network",
            Self::Declaration => "declaration",
            Self::Data => "data",
        })
    }
}

/// What was wrong with the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    /// The input ended while `needed` more bytes were expected.
    #[error("input truncated: {needed} more byte(s) expected")]
    Truncated {
        /// How many bytes were missing (at least).
        needed: usize,
    },
    /// A variable-length integer did not fit the bound of its field.
    #[error("{field} value {value} exceeds its bound {bound}")]
    OutOfBounds {
        /// The field being decoded.
        field: &'static str,
        /// The decoded value.
        value: u64,
        /// The largest allowed value.
        bound: u64,
    },
    /// A message identifier unknown in its layer.
    #[error("unknown {layer} message id {id:#04x}")]
    UnknownMessage {
        /// The layer in which the identifier was read.
        layer: Layer,
        /// The 5-bit identifier.
        id: u8,
    },
    /// An extension marked mandatory that this implementation does not know.
    #[error("unknown mandatory extension {header:#04x} in {message}")]
    UnknownMandatoryExtension {
        /// The message carrying the extension.
        message: &'static str,
        /// The extension header without its Z bit.
        header: u8,
    },
    /// The reserved extension encoding 0b11.
    #[error("reserved extension encoding in header {header:#04x}")]
    ReservedExtensionEncoding {
        /// The extension header.
        header: u8,
    },
    /// A known extension whose body did not have the expected shape.
    #[error("malformed {name} extension: {reason}")]
    MalformedExtension {
        /// The extension's name.
        name: &'static str,
        /// What was wrong.
        reason: &'static str,
    },
    /// A string field that is not valid UTF-8.
    #[error("{field} is not valid UTF-8")]
    InvalidUtf8 {
        /// The field being decoded.
        field: &'static str,
    },
    /// A field whose value is not one of the allowed ones.
    #[error("invalid {field}: {value:#x}")]
    InvalidValue {
        /// The field being decoded.
        field: &'static str,
        /// The offending value.
        value: u64,
    },
    /// A ZenohID that is all zeros.
    #[error("ZenohID is zero")]
    ZeroZenohId,
    /// A message that cannot appear where it was found.
    #[error("{message} is not allowed here: {reason}")]
    Unexpected {
        /// The message that was found.
        message: &'static str,
        /// Why it is not allowed.
        reason: &'static str,
    },
    /// Trailing bytes after a message that must fill its container.
    #[error("{count} unexpected trailing byte(s) after {message}")]
    TrailingBytes {
        /// The message after which bytes remained.
        message: &'static str,
        /// How many bytes remained.
        count: usize,
    },
    /// A compressed batch that does not decompress.
    #[error("compressed batch does not decompress: {reason}")]
    Decompression {
        /// Why decompression failed.
        reason: &'static str,
    },
}

/// A decoding failure: what was wrong, and the byte offset where it was detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("{kind} (at byte offset {offset})")]
pub struct DecodeError {
    /// What was wrong.
    pub kind: DecodeErrorKind,
    /// Offset of the offending byte, counted from the start of the decoded input.
    pub offset: usize,
}

impl DecodeError {
    /// Builds an error of `kind` at `offset`.
    pub const fn new(kind: DecodeErrorKind, offset: usize) -> Self {
        Self { kind, offset }
    }

    /// Shifts the offset by `base`, for errors found in a sub-buffer.
    #[must_use]
    pub const fn shifted(self, base: usize) -> Self {
        Self {
            kind: self.kind,
            offset: self.offset + base,
        }
    }
}

/// An encoding failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The destination buffer has no room left.
    #[error("buffer full: {needed} more byte(s) needed")]
    BufferFull {
        /// How many bytes did not fit.
        needed: usize,
    },
    /// A field value that the wire format cannot carry.
    #[error("{field} value {value} exceeds its bound {bound}")]
    OutOfBounds {
        /// The field being encoded.
        field: &'static str,
        /// The value.
        value: u64,
        /// The largest value the wire format allows.
        bound: u64,
    },
    /// A field that is not valid in the message being encoded.
    #[error("invalid {field}")]
    Invalid {
        /// The field.
        field: &'static str,
    },
}
