//! Payloads: the bytes of a received value.

use std::fmt;
use std::ops::{Deref, Range};
use std::sync::Arc;

use crate::transport::{ReceivedBatch, SharedBatch};

/// The bytes of a received value. Values of a few bytes are kept inside the payload
/// itself (no allocation), others are copied once out of the batch they came in, into
/// a reference-counted buffer (so that cloning a sample, to queue it for another
/// thread, copies nothing): the payloads of a batch dense with kept values share one
/// copy of the whole batch (`transport::ReceivedBatch`), others are copied one by
/// one. A large one, reassembled from fragments, shares the buffer it was reassembled
/// in, so that receiving it copies nothing. Reads as a `&[u8]` (`Deref`), compares with
/// byte strings and vectors, and turns into a `Vec<u8>` with [`Payload::into_vec`].
#[derive(Clone, Default)]
pub struct Payload(Repr);

/// The most bytes a payload keeps inside itself: as many as fit in the room the other
/// forms take anyway.
const INLINE: usize = 22;

#[derive(Clone)]
enum Repr {
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    Owned(Vec<u8>),
    /// Copied from a received batch: cloned by reference.
    Copied(Arc<[u8]>),
    Shared {
        buf: Arc<Vec<u8>>,
        range: Range<usize>,
    },
    /// Part of a copy of the batch it was received in, shared with the batch's other
    /// payloads.
    Batch {
        buf: Arc<SharedBatch>,
        range: Range<usize>,
    },
}

impl Default for Repr {
    fn default() -> Self {
        Self::Owned(Vec::new())
    }
}

impl Payload {
    /// `part` as a payload: a range of `buf` when `part` lies inside it (no copy), else
    /// a copy of `part`.
    pub(crate) fn within(buf: Option<&Arc<Vec<u8>>>, part: &[u8]) -> Self {
        let Some(buf) = buf else {
            return Self::copied(part);
        };
        let start = (part.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize);
        match start.checked_add(part.len()) {
            Some(end) if start <= buf.len() && end <= buf.len() => Self(Repr::Shared {
                buf: buf.clone(),
                range: start..end,
            }),
            _ => Self::copied(part),
        }
    }

    /// `part`, a value received in `batch` or, when `reassembled`, in that buffer:
    /// inside the payload when small, else sharing the buffer it was reassembled in, or
    /// the copy of the batch its payloads share, or copied by itself.
    pub(crate) fn received(
        reassembled: Option<&Arc<Vec<u8>>>,
        batch: &ReceivedBatch<'_>,
        part: &[u8],
    ) -> Self {
        if reassembled.is_some() {
            return Self::within(reassembled, part);
        }
        if part.len() <= INLINE {
            return Self::copied(part);
        }
        match batch.keep(part) {
            Some((buf, range)) => Self(Repr::Batch { buf, range }),
            None => Self::copied(part),
        }
    }

    /// A copy of `part`: inside the payload when it is small enough.
    fn copied(part: &[u8]) -> Self {
        if part.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..part.len()].copy_from_slice(part);
            // At most INLINE (22): fits.
            let len = part.len() as u8;
            return Self(Repr::Inline { len, bytes });
        }
        Self(Repr::Copied(Arc::from(part)))
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Owned(v) => v,
            Repr::Copied(c) => c,
            Repr::Shared { buf, range } => &buf[range.clone()],
            Repr::Batch { buf, range } => &buf[range.clone()],
        }
    }

    /// The bytes as a vector: without a copy when the payload owns them (or is the only
    /// holder of its whole shared buffer).
    pub fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Repr::Inline { len, bytes } => bytes[..usize::from(len)].to_vec(),
            Repr::Owned(v) => v,
            Repr::Copied(c) => c.to_vec(),
            Repr::Shared { buf, range } => match Arc::try_unwrap(buf) {
                Ok(v) if range == (0..v.len()) => v,
                Ok(v) => v[range].to_vec(),
                Err(buf) => buf[range].to_vec(),
            },
            Repr::Batch { buf, range } => buf[range].to_vec(),
        }
    }
}

impl Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Payload {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}

impl From<Vec<u8>> for Payload {
    fn from(v: Vec<u8>) -> Self {
        Self(Repr::Owned(v))
    }
}

impl From<&[u8]> for Payload {
    fn from(v: &[u8]) -> Self {
        Self::copied(v)
    }
}

impl From<Payload> for Vec<u8> {
    fn from(p: Payload) -> Self {
        p.into_vec()
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Payload {}

impl PartialEq<[u8]> for Payload {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl PartialEq<&[u8]> for Payload {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}

impl PartialEq<Vec<u8>> for Payload {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<const N: usize> PartialEq<[u8; N]> for Payload {
    fn eq(&self, other: &[u8; N]) -> bool {
        self.as_slice() == other
    }
}

impl<const N: usize> PartialEq<&[u8; N]> for Payload {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_slice() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_of_the_buffer_is_shared_not_copied() {
        let buf = Arc::new(b"header:value".to_vec());
        let p = Payload::within(Some(&buf), &buf[7..]);
        assert_eq!(p, b"value");
        assert_eq!(Arc::strong_count(&buf), 2, "the payload holds the buffer");
        assert_eq!(p.clone().into_vec(), b"value");
        drop(p);
        assert_eq!(Arc::strong_count(&buf), 1);
    }

    #[test]
    fn bytes_outside_the_buffer_are_copied() {
        let buf = Arc::new(b"abc".to_vec());
        let elsewhere = b"xyz".to_vec();
        let p = Payload::within(Some(&buf), &elsewhere);
        assert_eq!(p, elsewhere);
        assert_eq!(Arc::strong_count(&buf), 1, "nothing of the buffer is kept");
        assert_eq!(Payload::within(None, b"q"), b"q");
    }

    #[test]
    fn small_values_are_kept_inside_and_read_back_whole() {
        assert_eq!(std::mem::size_of::<Payload>(), 32);
        for len in [0, 1, INLINE, INLINE + 1, 100] {
            let value: Vec<u8> = (0..len as u8).collect();
            let p = Payload::within(None, &value);
            let inline = matches!(p.0, Repr::Inline { .. });
            assert_eq!(inline, len <= INLINE, "{len}");
            assert_eq!(p, value);
            assert_eq!(p.clone().into_vec(), value);
            assert_eq!(Payload::from(&value[..]), value);
        }
    }

    #[test]
    fn the_sole_holder_of_a_whole_buffer_gets_it_back_without_a_copy() {
        let buf = Arc::new(vec![7u8; 4096]);
        let addr = buf.as_ptr();
        let p = Payload::within(Some(&buf), &buf[..]);
        drop(buf);
        let v = p.into_vec();
        assert_eq!(v.as_ptr(), addr);
        assert_eq!(v.len(), 4096);
    }
}
