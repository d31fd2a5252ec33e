//! Stream framing: on TCP, Unix sockets and other stream links each batch is preceded by
//! its length, 2 bytes little-endian (4 bytes once a low-latency session is open).

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::writer::Writer;

/// Width of the length prefix before each batch on a stream link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrefixWidth {
    /// 2-byte little-endian length (the normal case).
    #[default]
    U16,
    /// 4-byte little-endian length (after a low-latency handshake).
    U32,
}

impl PrefixWidth {
    /// Number of prefix bytes.
    pub const fn len(self) -> usize {
        match self {
            Self::U16 => 2,
            Self::U32 => 4,
        }
    }

    /// Always false: a prefix has at least two bytes (for clippy's `len` convention).
    pub const fn is_empty(self) -> bool {
        false
    }

    /// Reads a length from the start of `bytes`, if enough bytes are there.
    pub fn read(self, bytes: &[u8]) -> Option<usize> {
        match self {
            Self::U16 => bytes
                .get(..2)
                .map(|b| usize::from(u16::from_le_bytes([b[0], b[1]]))),
            Self::U32 => bytes
                .get(..4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize),
        }
    }

    /// Writes the prefix for a batch of `len` bytes.
    pub fn write<W: Writer>(self, len: usize, w: &mut W) -> Result<(), EncodeError> {
        match self {
            Self::U16 => {
                let v = u16::try_from(len).map_err(|_| EncodeError::OutOfBounds {
                    field: "batch length",
                    value: len as u64,
                    bound: u64::from(u16::MAX),
                })?;
                w.put(&v.to_le_bytes())
            }
            Self::U32 => {
                let v = u32::try_from(len).map_err(|_| EncodeError::OutOfBounds {
                    field: "batch length",
                    value: len as u64,
                    bound: u64::from(u32::MAX),
                })?;
                w.put(&v.to_le_bytes())
            }
        }
    }
}

/// The next batch of a stream held in memory: `Ok(Some((offset, batch)))`, `Ok(None)` at
/// the end, or an error if the stream ends inside a prefix or a batch.
///
/// `offset` is where the batch's first byte (after the prefix) is in `stream`.
pub fn next_batch(
    stream: &[u8],
    pos: usize,
    width: PrefixWidth,
) -> Result<Option<(usize, &[u8])>, DecodeError> {
    if pos >= stream.len() {
        return Ok(None);
    }
    let rest = &stream[pos..];
    let len = width.read(rest).ok_or_else(|| {
        DecodeError::new(
            DecodeErrorKind::Truncated {
                needed: width.len().saturating_sub(rest.len()),
            },
            stream.len(),
        )
    })?;
    let start = pos + width.len();
    let end = start + len;
    if end > stream.len() {
        return Err(DecodeError::new(
            DecodeErrorKind::Truncated {
                needed: end - stream.len(),
            },
            stream.len(),
        ));
    }
    Ok(Some((start, &stream[start..end])))
}
