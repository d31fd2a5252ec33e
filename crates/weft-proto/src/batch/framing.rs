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

    /// The batch at the start of `bytes` (after its prefix) and how many bytes it takes
    /// with its prefix, once all of it is there; `None` while some of it is still to come.
    pub fn whole_batch(self, bytes: &[u8]) -> Option<(&[u8], usize)> {
        let end = self.len() + self.read(bytes)?;
        bytes.get(self.len()..end).map(|batch| (batch, end))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_batch_is_cut_only_once_all_its_bytes_are_there() {
        let stream = [3, 0, 7, 8, 9, 1, 0];
        let w = PrefixWidth::U16;
        assert_eq!(w.whole_batch(&stream[..1]), None);
        assert_eq!(w.whole_batch(&stream[..4]), None);
        assert_eq!(w.whole_batch(&stream), Some((&[7u8, 8, 9][..], 5)));
        assert_eq!(w.whole_batch(&stream[5..]), None);
        assert_eq!(w.whole_batch(&[0, 0]), Some((&[][..], 2)));
        let long = [2, 0, 0, 0, 4, 5];
        assert_eq!(
            PrefixWidth::U32.whole_batch(&long),
            Some((&[4u8, 5][..], 6))
        );
    }
}
