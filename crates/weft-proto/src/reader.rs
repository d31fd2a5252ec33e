//! The checked reader every decoder goes through.
//!
//! A [`Reader`] walks a borrowed byte slice. Every read checks what remains; byte
//! sequences are returned as sub-slices of the input (no copy). Errors carry the offset of
//! the offending byte relative to the start of the whole decoded input (`base` + position).

use crate::error::{DecodeError, DecodeErrorKind};

/// Largest encoded length of a zint (9 bytes: 8 × 7 bits, then 8 full bits).
pub const ZINT_MAX_LEN: usize = 9;

/// Decodes the zint at `*pos` of `buf` and moves `pos` past it; `None` (with `pos` at the
/// end of `buf`) if `buf` ends first.
#[inline(always)]
pub(crate) fn zint_at(buf: &[u8], pos: &mut usize) -> Option<u64> {
    match buf.get(*pos) {
        Some(&b) if b & 0x80 == 0 => {
            *pos += 1;
            Some(u64::from(b))
        }
        _ => zint_at_slow(buf, pos),
    }
}

/// [`zint_at`] for values of more than one byte.
#[inline(never)]
fn zint_at_slow(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value: u64 = 0;
    let mut shift = 0u32;
    for n in 0..ZINT_MAX_LEN {
        let &b = buf.get(*pos)?;
        *pos += 1;
        if n == ZINT_MAX_LEN - 1 {
            value |= u64::from(b) << 56;
            break;
        }
        value |= u64::from(b & 0x7F) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            break;
        }
    }
    Some(value)
}

/// A cursor over borrowed bytes with checked reads.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`, reporting offsets from 0.
    #[inline]
    pub const fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            base: 0,
        }
    }

    /// A reader over `buf` whose first byte is at offset `base` of the enclosing input.
    #[inline]
    pub const fn with_base(buf: &'a [u8], base: usize) -> Self {
        Self { buf, pos: 0, base }
    }

    /// Offset of the next byte, relative to the enclosing input.
    pub const fn offset(&self) -> usize {
        self.base + self.pos
    }

    /// Position of the next byte within this reader's slice.
    pub const fn position(&self) -> usize {
        self.pos
    }

    /// Number of bytes left.
    pub const fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Whether every byte has been read.
    #[inline]
    pub const fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The bytes not yet read (without consuming them).
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// The whole slice this reader walks.
    pub const fn source(&self) -> &'a [u8] {
        self.buf
    }

    /// Builds an error of `kind` at the current offset.
    pub const fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.offset())
    }

    /// Builds an error of `kind` at position `pos` of this reader's slice.
    pub const fn error_at(&self, pos: usize, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(kind, self.base + pos)
    }

    fn truncated(&self, needed: usize) -> DecodeError {
        self.error(DecodeErrorKind::Truncated {
            needed: needed - self.remaining(),
        })
    }

    /// The next byte, without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.truncated(1)),
        }
    }

    /// Reads a fixed 2-byte little-endian integer.
    pub fn u16_le(&mut self) -> Result<u16, DecodeError> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// Reads `n` bytes as a sub-slice of the input.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.truncated(n));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Reads every remaining byte.
    pub fn take_rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..];
        self.pos = self.buf.len();
        s
    }

    /// Reads a zint (variable-length unsigned integer, 1 to 9 bytes).
    #[inline]
    pub fn zint(&mut self) -> Result<u64, DecodeError> {
        // Fast path: a single byte.
        if let Some(&b) = self.buf.get(self.pos) {
            if b & 0x80 == 0 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        self.zint_slow()
    }

    fn zint_slow(&mut self) -> Result<u64, DecodeError> {
        match zint_at_slow(self.buf, &mut self.pos) {
            Some(value) => Ok(value),
            None => Err(self.error(DecodeErrorKind::Truncated { needed: 1 })),
        }
    }

    /// Moves past `n` bytes already examined through [`Self::rest`] (at most to the end).
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = self.buf.len().min(self.pos + n);
    }

    /// Reads a zint that must not exceed `bound`; `field` names it in errors.
    #[inline]
    pub fn zint_max(&mut self, bound: u64, field: &'static str) -> Result<u64, DecodeError> {
        let at = self.pos;
        let value = self.zint()?;
        if value > bound {
            return Err(self.error_at(
                at,
                DecodeErrorKind::OutOfBounds {
                    field,
                    value,
                    bound,
                },
            ));
        }
        Ok(value)
    }

    /// Reads a zint bounded to 16 bits.
    #[inline]
    pub fn z16(&mut self, field: &'static str) -> Result<u16, DecodeError> {
        self.zint_max(u64::from(u16::MAX), field).map(|v| v as u16)
    }

    /// Reads a zint bounded to 32 bits.
    #[inline]
    pub fn z32(&mut self, field: &'static str) -> Result<u32, DecodeError> {
        self.zint_max(u64::from(u32::MAX), field).map(|v| v as u32)
    }

    /// Reads a zint length bounded by `bound`, then that many bytes.
    #[inline]
    pub fn zbytes(&mut self, bound: u64, field: &'static str) -> Result<&'a [u8], DecodeError> {
        let len = self.zint_max(bound, field)?;
        // `len` <= bound <= u32::MAX fits in usize on every supported target.
        self.bytes(len as usize)
    }

    /// Reads a zint length bounded by `bound`, then that many bytes of UTF-8 text.
    pub fn zstr(&mut self, bound: u64, field: &'static str) -> Result<&'a str, DecodeError> {
        let at = self.pos;
        let bytes = self.zbytes(bound, field)?;
        core::str::from_utf8(bytes)
            .map_err(|_| self.error_at(at, DecodeErrorKind::InvalidUtf8 { field }))
    }

    /// A reader over the next `n` bytes (consumed from this one), keeping offsets.
    pub fn sub(&mut self, n: usize) -> Result<Self, DecodeError> {
        let base = self.offset();
        let bytes = self.bytes(n)?;
        Ok(Reader::with_base(bytes, base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zint_table_from_the_spec() {
        let cases: &[(u64, &[u8])] = &[
            (0, &[0x00]),
            (127, &[0x7f]),
            (128, &[0x80, 0x01]),
            (300, &[0xac, 0x02]),
            (16383, &[0xff, 0x7f]),
            (16384, &[0x80, 0x80, 0x01]),
            (65535, &[0xff, 0xff, 0x03]),
            (100_000, &[0xa0, 0x8d, 0x06]),
            (126_594_754, &[0xc2, 0xdd, 0xae, 0x3c]),
            ((1 << 28) - 1, &[0xff, 0xff, 0xff, 0x7f]),
            (u64::from(u32::MAX), &[0xff, 0xff, 0xff, 0xff, 0x0f]),
            (
                (1 << 56) - 1,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
            ),
            (
                1 << 56,
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],
            ),
            (
                1 << 63,
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80],
            ),
            (u64::MAX, &[0xff; 9]),
        ];
        for &(value, bytes) in cases {
            let mut r = Reader::new(bytes);
            assert_eq!(r.zint().unwrap(), value, "decoding {bytes:02x?}");
            assert!(r.is_empty());
            let mut out = alloc::vec::Vec::new();
            crate::writer::Writer::zint(&mut out, value).unwrap();
            assert_eq!(out, bytes, "encoding {value}");
        }
    }

    #[test]
    fn truncated_zint_reports_offset() {
        let mut r = Reader::with_base(&[0x80, 0x80], 10);
        let e = r.zint().unwrap_err();
        assert_eq!(e.offset, 12);
        assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }));
    }

    #[test]
    fn bounded_zint_rejects_overflow() {
        let mut r = Reader::new(&[0x80, 0x80, 0x04]);
        let e = r.z16("expr id").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(matches!(
            e.kind,
            DecodeErrorKind::OutOfBounds { value: 65536, .. }
        ));
    }

    #[test]
    fn bytes_beyond_the_end_are_an_error() {
        let mut r = Reader::new(&[0x05, b'a', b'b']);
        let e = r.zbytes(u64::from(u32::MAX), "payload").unwrap_err();
        assert_eq!(e.kind, DecodeErrorKind::Truncated { needed: 3 });
        assert_eq!(e.offset, 1);
    }
}
