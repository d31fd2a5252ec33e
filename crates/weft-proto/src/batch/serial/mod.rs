//! Serial-line framing, as Zenoh's serial link (Eclipse Zenoh's `z-serial`, Zenoh-Pico's
//! serial link) puts batches on a UART: one batch per frame.
//!
//! Before stuffing, a frame is
//!
//! ```text
//! +--------+-----------------+-----------------+------------------+
//! | flags  | length (2, LE)  | payload         | check (4, LE)    |
//! +--------+-----------------+-----------------+------------------+
//!   1 byte   payload's size    0..=MTU bytes     crc::checksum(payload)
//! ```
//!
//! and on the line it is that, COBS-stuffed ([`cobs`]), followed by one 0x00 that ends it.
//! The flags byte says what the frame is for: data (no flag), or the exchange that starts
//! a session ([`Flags::INIT`], [`Flags::ACK`], [`Flags::RESET`]; see `docs/protocol-notes.md`).
//!
//! [`encode`] writes a frame; [`Decoder`] takes the line's bytes in chunks of any size and
//! hands out whole frames, dropping (and counting) whatever does not check, so that line
//! noise costs the frames it touches and nothing more.

use alloc::vec::Vec;

use crate::error::EncodeError;

pub mod cobs;
pub mod crc;
mod decoder;

pub use decoder::{Decoder, DecoderStats, FrameError};

/// Largest payload (batch) of one frame.
pub const MTU: usize = 1500;

/// The byte that ends every frame on the line.
pub const DELIMITER: u8 = 0x00;

/// Bytes a frame adds to its payload before stuffing: flags, length, check.
pub const OVERHEAD: usize = 1 + 2 + 4;

/// Longest frame on the line: the largest frame stuffed, and its delimiter.
pub const MAX_WIRE_LEN: usize = MTU + OVERHEAD + cobs::max_overhead(MTU + OVERHEAD) + 1;

/// The flags byte of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags(pub u8);

impl Flags {
    /// A data frame: a batch.
    pub const DATA: Self = Self(0);
    /// `I`: the connecting side asks for a session (empty payload).
    pub const INIT: Self = Self(0x01);
    /// `A`, with `I`: the listening side accepts it (empty payload).
    pub const ACK: Self = Self(0x02);
    /// `R`: the listening side refuses an `I` while a session is on; the connecting side
    /// waits and asks again.
    pub const RESET: Self = Self(0x04);
    /// The listener's answer to an `I`: `I` and `A`.
    pub const INIT_ACK: Self = Self(0x03);

    /// Whether every flag of `other` is set here.
    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }
}

/// A frame taken off the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Its flags.
    pub flags: Flags,
    /// Its payload (a batch for a data frame, empty in the exchange).
    pub payload: &'a [u8],
}

/// Appends to `out` the frame carrying `flags` and the bytes of `parts` laid end to end,
/// stuffed and delimited: what goes on the line. A payload over [`MTU`] is refused.
pub fn encode(flags: Flags, parts: &[&[u8]], out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    if len > MTU {
        return Err(EncodeError::OutOfBounds {
            field: "serial frame payload",
            value: len as u64,
            bound: MTU as u64,
        });
    }
    let head = [flags.0, len as u8, (len >> 8) as u8];
    let check = crc::checksum(parts).to_le_bytes();
    let mut all: [&[u8]; 8] = [&[]; 8];
    if parts.len() > all.len() - 2 {
        return Err(EncodeError::Invalid {
            field: "serial frame parts (6 at most)",
        });
    }
    all[0] = &head;
    all[1..=parts.len()].copy_from_slice(parts);
    all[parts.len() + 1] = &check;
    out.reserve(len + OVERHEAD + cobs::max_overhead(len + OVERHEAD) + 1);
    cobs::encode_into(&all[..parts.len() + 2], out);
    out.push(DELIMITER);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn frame(flags: Flags, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode(flags, &[payload], &mut out).unwrap();
        out
    }

    /// Frames as Zenoh's serial link writes them: the exchange's three control frames,
    /// and data frames whose payloads hold zeros.
    #[test]
    fn frames_on_the_line() {
        let vectors: [(Flags, &[u8], &[u8]); 5] = [
            (
                Flags::INIT,
                &[],
                &[0x02, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00],
            ),
            (
                Flags::INIT_ACK,
                &[],
                &[0x02, 0x03, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00],
            ),
            (
                Flags::RESET,
                &[],
                &[0x02, 0x04, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x00],
            ),
            (
                Flags::DATA,
                &[0x00, 0x11, 0x00],
                &[
                    0x01, 0x02, 0x03, 0x01, 0x02, 0x11, 0x05, 0x73, 0xEC, 0x75, 0xF9, 0x00,
                ],
            ),
            (
                Flags::DATA,
                &[0x11, 0x22, 0x00, 0x33],
                &[
                    0x01, 0x02, 0x04, 0x03, 0x11, 0x22, 0x06, 0x33, 0x8D, 0x03, 0x6D, 0xFB, 0x00,
                ],
            ),
        ];
        for (flags, payload, wire) in vectors {
            assert_eq!(frame(flags, payload), wire, "{flags:?} {payload:02x?}");
            let mut d = Decoder::new();
            let (used, got) = d.push(wire);
            assert_eq!(used, wire.len());
            assert_eq!(got, Some(Ok(Frame { flags, payload })));
        }
    }

    #[test]
    fn the_largest_frame_fits_the_line_limit_and_one_byte_more_is_refused() {
        let big = vec![0xA5u8; MTU];
        let wire = frame(Flags::DATA, &big);
        assert!(wire.len() <= MAX_WIRE_LEN, "{}", wire.len());
        assert_eq!(wire.iter().filter(|b| **b == 0).count(), 1);
        let mut d = Decoder::new();
        assert_eq!(
            d.push(&wire).1,
            Some(Ok(Frame {
                flags: Flags::DATA,
                payload: &big
            }))
        );
        let mut out = Vec::new();
        assert!(encode(Flags::DATA, &[&big, &[1]], &mut out).is_err());
        assert!(out.is_empty());
    }

    #[test]
    fn a_frame_of_parts_is_the_frame_of_their_concatenation() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 5) as u8).collect();
        let mut parts = Vec::new();
        encode(
            Flags::DATA,
            &[&data[..10], &[], &data[10..600], &data[600..]],
            &mut parts,
        )
        .unwrap();
        assert_eq!(parts, frame(Flags::DATA, &data));
    }
}
