//! Batch compression (the `Compression` transport extension).
//!
//! Once both sides negotiated it, every batch after the Open exchange starts with one
//! header byte; bit 0 set means the rest is a raw LZ4 block (no frame header) whose
//! decompression is the batch. A sender keeps a batch uncompressed when compressing does
//! not make it smaller.

use alloc::vec::Vec;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::writer::Writer;

/// Header bit: the batch payload is an LZ4 block.
pub const COMPRESSED: u8 = 0x01;

/// Strips the header byte of a batch and, if it is compressed, decompresses it into
/// `scratch` (at most `max_len` bytes). Returns the plain batch.
pub fn unwrap_batch<'b>(
    batch: &'b [u8],
    scratch: &'b mut Vec<u8>,
    max_len: usize,
) -> Result<&'b [u8], DecodeError> {
    let Some((&header, payload)) = batch.split_first() else {
        return Err(DecodeError::new(
            DecodeErrorKind::Truncated { needed: 1 },
            0,
        ));
    };
    if header & COMPRESSED == 0 {
        return Ok(payload);
    }
    scratch.clear();
    scratch.resize(max_len, 0);
    let n = lz4_flex::block::decompress_into(payload, scratch).map_err(|_| {
        DecodeError::new(
            DecodeErrorKind::Decompression {
                reason: "invalid LZ4 block or larger than the batch size",
            },
            1,
        )
    })?;
    scratch.truncate(n);
    Ok(scratch)
}

/// Writes `plain` as a compression-enabled batch: header byte, then an LZ4 block if it is
/// smaller, else the plain bytes. `scratch` is reused between calls.
pub fn wrap_batch<W: Writer>(
    plain: &[u8],
    scratch: &mut Vec<u8>,
    w: &mut W,
) -> Result<(), EncodeError> {
    scratch.clear();
    scratch.resize(lz4_flex::block::get_maximum_output_size(plain.len()), 0);
    match lz4_flex::block::compress_into(plain, scratch) {
        Ok(n) if n < plain.len() => {
            w.u8(COMPRESSED)?;
            w.put(&scratch[..n])
        }
        _ => {
            w.u8(0)?;
            w.put(plain)
        }
    }
}
