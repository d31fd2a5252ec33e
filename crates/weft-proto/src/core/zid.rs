//! ZenohID: the non-zero 128-bit identity of a node.

use core::fmt;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::reader::Reader;
use crate::writer::Writer;

/// A node's identity: a non-zero unsigned 128-bit integer.
///
/// On the wire it travels as its little-endian bytes truncated to its significant length
/// (1..=16 bytes). Its text form is lowercase hexadecimal without leading zeros.
///
/// Kept as two 64-bit halves, high first (so that the derived order is the numeric one):
/// 8-byte alignment keeps the messages that carry ids and timestamps small to move.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ZenohId([u64; 2]);

impl ZenohId {
    /// The id with value `v`, or `None` for zero (which is not a valid id).
    pub const fn new(v: u128) -> Option<Self> {
        if v == 0 {
            None
        } else {
            Some(Self([(v >> 64) as u64, v as u64]))
        }
    }

    /// The id's integer value.
    pub const fn to_u128(self) -> u128 {
        ((self.0[0] as u128) << 64) | self.0[1] as u128
    }

    /// Number of significant bytes (1..=16): the length of its wire form.
    pub const fn size(self) -> usize {
        16 - (self.to_u128().leading_zeros() as usize / 8)
    }

    /// The little-endian bytes; the wire form is the first [`size`](Self::size) of them.
    pub const fn to_le_bytes(self) -> [u8; 16] {
        self.to_u128().to_le_bytes()
    }

    /// Builds an id from 1..=16 little-endian bytes.
    pub fn from_le_slice(bytes: &[u8]) -> Option<Self> {
        if bytes.is_empty() || bytes.len() > 16 {
            return None;
        }
        let mut full = [0u8; 16];
        full[..bytes.len()].copy_from_slice(bytes);
        Self::new(u128::from_le_bytes(full))
    }

    /// Reads `len` bytes (as announced by a length nibble or prefix) as an id.
    pub(crate) fn read(r: &mut Reader<'_>, len: usize) -> Result<Self, DecodeError> {
        let at = r.position();
        if !(1..=16).contains(&len) {
            return Err(r.error(DecodeErrorKind::InvalidValue {
                field: "ZenohID length",
                value: len as u64,
            }));
        }
        let bytes = r.bytes(len)?;
        Self::from_le_slice(bytes).ok_or_else(|| r.error_at(at, DecodeErrorKind::ZeroZenohId))
    }

    /// Writes the significant little-endian bytes (no length).
    pub(crate) fn write<W: Writer>(self, w: &mut W) -> Result<(), EncodeError> {
        w.put_small(&self.to_le_bytes(), self.size())
    }

    /// The length nibble (`size - 1`) placed in bits 4..=7 of a flags byte.
    pub(crate) const fn len_nibble(self) -> u8 {
        ((self.size() - 1) as u8) << 4
    }
}

impl fmt::Display for ZenohId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:x}", self.to_u128())
    }
}

impl fmt::Debug for ZenohId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ZenohId({:x})", self.to_u128())
    }
}

impl core::str::FromStr for ZenohId {
    type Err = EncodeError;

    /// Parses the text form (hexadecimal, 1 to 32 digits, non-zero).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let invalid = EncodeError::Invalid { field: "ZenohID" };
        if s.is_empty() || s.len() > 32 {
            return Err(invalid);
        }
        let v = u128::from_str_radix(s, 16).map_err(|_| invalid)?;
        Self::new(v).ok_or(invalid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_wire_forms_from_the_captures() {
        // Vector 01: zid 828e1b4e0f8db96dc5a0d3d9a548580e is sent little-endian.
        let wire = [
            0x0e, 0x58, 0x48, 0xa5, 0xd9, 0xd3, 0xa0, 0xc5, 0x6d, 0xb9, 0x8d, 0x0f, 0x4e, 0x1b,
            0x8e, 0x82,
        ];
        let id = ZenohId::from_le_slice(&wire).unwrap();
        assert_eq!(id.size(), 16);
        assert_eq!(alloc::format!("{id}"), "828e1b4e0f8db96dc5a0d3d9a548580e");
        // Vector 08: a 4-byte zid.
        let small = ZenohId::from_le_slice(&[1, 2, 3, 4]).unwrap();
        assert_eq!(alloc::format!("{small}"), "4030201");
        assert_eq!(small.size(), 4);
        assert_eq!("4030201".parse::<ZenohId>().unwrap(), small);
    }

    #[test]
    fn zero_and_oversized_ids_are_rejected() {
        assert!(ZenohId::from_le_slice(&[0, 0]).is_none());
        let mut r = Reader::new(&[0u8; 20]);
        assert!(ZenohId::read(&mut r, 17).is_err());
        let mut r = Reader::new(&[0u8; 4]);
        assert_eq!(
            ZenohId::read(&mut r, 4).unwrap_err().kind,
            DecodeErrorKind::ZeroZenohId
        );
    }
}
