//! Destinations for encoding.
//!
//! Encoders write into a caller-supplied [`Writer`]: a growable `Vec<u8>` (reused across
//! messages, so it stops allocating once it has grown) or a fixed [`SliceWriter`] over a
//! batch buffer, which fails with [`EncodeError::BufferFull`] instead of growing, so a
//! batcher can try a message and roll back with [`SliceWriter::truncate`].

use alloc::vec::Vec;

use crate::error::EncodeError;
use crate::reader::ZINT_MAX_LEN;

/// Something encoded bytes can be appended to.
pub trait Writer {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]) -> Result<(), EncodeError>;

    /// Appends one byte.
    #[inline]
    fn u8(&mut self, b: u8) -> Result<(), EncodeError> {
        self.put(&[b])
    }

    /// Number of bytes written so far.
    fn written(&self) -> usize;

    /// Appends the first `len` bytes of `bytes` (`len` ≤ [`SMALL_MAX`]): a short field
    /// kept in a fixed array, such as a zint or a ZenohId. A writer with room for the
    /// whole array may copy all of it and count only `len` bytes, one fixed-size copy
    /// instead of one of a length known only at run time (a call into the C library for
    /// a few bytes, on every timestamp a router adds).
    #[inline]
    fn put_small(&mut self, bytes: &[u8; SMALL_MAX], len: usize) -> Result<(), EncodeError> {
        self.put(&bytes[..len])
    }

    /// Appends `value` as a minimal zint.
    #[inline(always)]
    fn zint(&mut self, value: u64) -> Result<(), EncodeError> {
        // One and two bytes inline (ids, lengths, sequence numbers); longer out of line.
        if value < 0x80 {
            return self.u8(value as u8);
        }
        if value < 0x4000 {
            return self.put(&[value as u8 | 0x80, (value >> 7) as u8]);
        }
        put_long_zint(self, value)
    }

    /// Appends a zint length followed by `bytes`.
    #[inline(always)]
    fn zbytes(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        self.zint(bytes.len() as u64)?;
        self.put(bytes)
    }
}

/// A [`Writer`] into a `Vec<u8>` that leaves out one known byte string (a large payload)
/// when it is written, recording where it would have gone: the full encoding is
/// `head[..at]`, then the skipped bytes, then `head[at..]`. Recognised by address, so
/// only that very slice is skipped, once. See [`crate::network::NetworkMessage::encode_split`].
pub struct SkippingWriter<'v, 's> {
    head: &'v mut Vec<u8>,
    skip: &'s [u8],
    at: Option<usize>,
}

impl<'v, 's> SkippingWriter<'v, 's> {
    /// Appends to `head`, leaving out `skip` (nothing is left out if it is empty).
    pub fn new(head: &'v mut Vec<u8>, skip: &'s [u8]) -> Self {
        Self {
            head,
            skip,
            at: None,
        }
    }

    /// Where in the head the skipped bytes belong, if they were written.
    pub const fn skipped_at(&self) -> Option<usize> {
        self.at
    }
}

impl Writer for SkippingWriter<'_, '_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        if self.at.is_none()
            && !bytes.is_empty()
            && bytes.len() == self.skip.len()
            && core::ptr::eq(bytes.as_ptr(), self.skip.as_ptr())
        {
            self.at = Some(self.head.len());
            return Ok(());
        }
        self.head.put(bytes)
    }

    #[inline]
    fn u8(&mut self, b: u8) -> Result<(), EncodeError> {
        self.head.u8(b)
    }

    fn written(&self) -> usize {
        self.head.len()
            + if self.at.is_some() {
                self.skip.len()
            } else {
                0
            }
    }
}

/// The longest field [`Writer::put_small`] takes.
pub const SMALL_MAX: usize = 16;

/// [`Writer::zint`] for values of three bytes or more.
#[inline(never)]
fn put_long_zint<W: Writer + ?Sized>(w: &mut W, value: u64) -> Result<(), EncodeError> {
    let (bytes, n) = zint_in_register(value);
    w.put_small(&bytes.to_le_bytes(), n)
}

/// The minimal zint of `value` as the low bytes of an integer (first byte lowest), and
/// how many bytes it takes: built in a register, so that it is written with whole-word
/// stores rather than byte by byte into memory and read back (which stalls the store).
#[inline]
fn zint_in_register(mut value: u64) -> (u128, usize) {
    let mut out = 0u128;
    let mut n = 0;
    while value > 0x7F && n < ZINT_MAX_LEN - 1 {
        out |= u128::from((value as u8 & 0x7F) | 0x80) << (8 * n);
        value >>= 7;
        n += 1;
    }
    out |= u128::from(value as u8) << (8 * n);
    (out, n + 1)
}

/// Encodes `value` as a minimal zint into `out`, returning the number of bytes used.
#[inline]
pub fn encode_zint(mut value: u64, out: &mut [u8; ZINT_MAX_LEN]) -> usize {
    let mut n = 0;
    while value > 0x7F && n < ZINT_MAX_LEN - 1 {
        out[n] = (value as u8 & 0x7F) | 0x80;
        value >>= 7;
        n += 1;
    }
    out[n] = value as u8;
    n + 1
}

/// Number of bytes of the minimal zint encoding of `value`.
#[inline]
pub const fn zint_len(value: u64) -> usize {
    if value < (1 << 56) {
        let bits = 64 - (value | 1).leading_zeros() as usize;
        bits.div_ceil(7)
    } else {
        ZINT_MAX_LEN
    }
}

impl Writer for Vec<u8> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        if bytes.len() <= 4 {
            // Headers and small fields (usually of a length known at compile time): byte by
            // byte, which stays inline where a general copy may not.
            for &b in bytes {
                self.push(b);
            }
        } else {
            self.extend_from_slice(bytes);
        }
        Ok(())
    }

    #[inline(always)]
    fn u8(&mut self, b: u8) -> Result<(), EncodeError> {
        self.push(b);
        Ok(())
    }

    fn written(&self) -> usize {
        self.len()
    }
}

/// A writer into a fixed slice: it never grows and reports `BufferFull` when out of room.
#[derive(Debug)]
pub struct SliceWriter<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> SliceWriter<'a> {
    /// A writer at the start of `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Self { buf, len: 0 }
    }

    /// The bytes written so far.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Room left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.len
    }

    /// Forgets everything written after the first `len` bytes (a roll-back point).
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            self.len = len;
        }
    }

    /// Overwrites already written bytes at `at` (for length prefixes filled in afterwards).
    pub fn patch(&mut self, at: usize, bytes: &[u8]) -> Result<(), EncodeError> {
        let end = at + bytes.len();
        if end > self.len {
            return Err(EncodeError::Invalid {
                field: "patch range",
            });
        }
        self.buf[at..end].copy_from_slice(bytes);
        Ok(())
    }
}

impl Writer for SliceWriter<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        let end = self.len + bytes.len();
        if end > self.buf.len() {
            return Err(EncodeError::BufferFull {
                needed: end - self.buf.len(),
            });
        }
        self.buf[self.len..end].copy_from_slice(bytes);
        self.len = end;
        Ok(())
    }

    /// The whole array where it fits (the bytes after `len` are past what was written:
    /// the next field overwrites them, and nothing reads them), else `len` bytes.
    #[inline(always)]
    fn put_small(&mut self, bytes: &[u8; SMALL_MAX], len: usize) -> Result<(), EncodeError> {
        debug_assert!(len <= SMALL_MAX);
        match self.buf.get_mut(self.len..self.len + SMALL_MAX) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len += len;
                Ok(())
            }
            None => self.put(&bytes[..len]),
        }
    }

    #[inline(always)]
    fn u8(&mut self, b: u8) -> Result<(), EncodeError> {
        match self.buf.get_mut(self.len) {
            Some(slot) => {
                *slot = b;
                self.len += 1;
                Ok(())
            }
            None => Err(EncodeError::BufferFull { needed: 1 }),
        }
    }

    fn written(&self) -> usize {
        self.len
    }
}

/// A writer that only counts bytes: used to compute encoded lengths.
#[derive(Debug, Default)]
pub struct LenCounter(pub usize);

impl Writer for LenCounter {
    #[inline]
    fn put(&mut self, bytes: &[u8]) -> Result<(), EncodeError> {
        self.0 += bytes.len();
        Ok(())
    }

    #[inline]
    fn zint(&mut self, value: u64) -> Result<(), EncodeError> {
        self.0 += zint_len(value);
        Ok(())
    }

    fn written(&self) -> usize {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zint_in_register_is_encode_zint() {
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, u64::MAX >> shift] {
                let mut tmp = [0u8; ZINT_MAX_LEN];
                let n = encode_zint(v, &mut tmp);
                let (reg, m) = zint_in_register(v);
                assert_eq!((&reg.to_le_bytes()[..m], m), (&tmp[..n], n), "{v:#x}");
            }
        }
    }

    #[test]
    fn put_small_writes_what_put_writes_with_room_or_without() {
        let mut field = [0u8; SMALL_MAX];
        field
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = i as u8 + 1);
        for room in 0..=SMALL_MAX + 3 {
            for len in 0..=SMALL_MAX {
                let (mut a, mut b) = ([0xEEu8; 40], [0xEEu8; 40]);
                let mut wa = SliceWriter::new(&mut a[..room + 2]);
                let mut wb = SliceWriter::new(&mut b[..room + 2]);
                wa.put(&[9, 9]).unwrap();
                wb.put(&[9, 9]).unwrap();
                let small = wa.put_small(&field, len);
                let plain = wb.put(&field[..len]);
                assert_eq!(small.is_ok(), plain.is_ok(), "room {room} len {len}");
                assert_eq!(wa.written(), wb.written());
                let n = wa.written();
                assert_eq!(a[..n], b[..n], "room {room} len {len}");
            }
        }
        let mut v = Vec::new();
        v.put_small(&field, 5).unwrap();
        assert_eq!(v, field[..5]);
    }

    #[test]
    fn zint_len_matches_encoding() {
        for v in [
            0u64,
            1,
            127,
            128,
            16383,
            16384,
            1 << 28,
            (1 << 56) - 1,
            1 << 56,
            u64::MAX,
        ] {
            let mut tmp = [0u8; ZINT_MAX_LEN];
            assert_eq!(zint_len(v), encode_zint(v, &mut tmp), "value {v}");
        }
    }

    #[test]
    fn slice_writer_refuses_to_overflow() {
        let mut buf = [0u8; 3];
        let mut w = SliceWriter::new(&mut buf);
        w.put(b"ab").unwrap();
        assert_eq!(w.put(b"cd"), Err(EncodeError::BufferFull { needed: 1 }));
        assert_eq!(w.as_slice(), b"ab");
        w.truncate(1);
        w.u8(b'z').unwrap();
        assert_eq!(w.as_slice(), b"az");
    }
}
