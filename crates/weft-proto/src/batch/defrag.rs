//! Reassembly of fragmented network messages.
//!
//! One [`Defragmenter`] per (reliability, priority) channel. Fragments are appended with
//! bulk copies into one buffer whose size is bounded; a sequence-number gap, a message
//! over the bound or a Drop marker discards the partial message.

use alloc::vec::Vec;

use thiserror::Error;

use crate::core::Bits;
use crate::transport::FragmentHeader;

/// Why a fragment was not accepted; the partial message (if any) is discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum DefragError {
    /// A fragment's SN is not the one following the previous fragment.
    #[error("fragment SN gap: expected {expected}, got {got}")]
    Gap {
        /// The SN that should have come.
        expected: u32,
        /// The SN that came.
        got: u32,
    },
    /// The message would exceed the reassembly bound.
    #[error("reassembled message would be {size} bytes, over the {max}-byte bound")]
    TooLarge {
        /// Size the message would reach.
        size: usize,
        /// The bound.
        max: usize,
    },
    /// A fragment without the First marker arrived when no message was in progress.
    #[error("fragment SN {sn} continues a message whose start was not received")]
    NoStart {
        /// The fragment's SN.
        sn: u32,
    },
}

/// What a fragment did to the reassembly.
#[derive(Debug, PartialEq, Eq)]
pub enum Defragmented<'d> {
    /// Stored; more fragments are needed.
    Pending,
    /// The last fragment arrived: the whole serialized network message.
    Complete(&'d [u8]),
    /// A Drop marker: the partial message was discarded.
    Dropped,
}

/// Largest reassembly buffer kept between messages: a larger one is freed once its
/// message is complete or discarded, so that one huge message (or a hostile endless
/// one) does not leave its memory held by the channel. 2 MiB: a buffer grown by doubling
/// to hold a 1 MiB message and its headers is 2 MiB, and a stream of such messages
/// (camera frames, point clouds) reassembles into it without growing it again, a copy
/// of the whole message saved each time.
pub const KEPT_CAPACITY: usize = 2 << 20;

/// Reassembles the fragments of one channel.
#[derive(Debug)]
pub struct Defragmenter {
    buf: Vec<u8>,
    next_sn: Option<u32>,
    max_len: usize,
    sn_bits: Bits,
    markers: bool,
    complete: bool,
}

impl Defragmenter {
    /// A reassembler for messages of at most `max_len` bytes.
    ///
    /// `markers` says whether First/Drop markers are honoured (Patch >= 1 negotiated).
    pub fn new(max_len: usize, sn_bits: Bits, markers: bool) -> Self {
        Self {
            buf: Vec::new(),
            next_sn: None,
            max_len,
            sn_bits,
            markers,
            complete: false,
        }
    }

    /// Discards any partial message (freeing a buffer over [`KEPT_CAPACITY`]).
    pub fn clear(&mut self) {
        self.buf.clear();
        if self.buf.capacity() > KEPT_CAPACITY {
            self.buf = Vec::new();
        }
        self.next_sn = None;
        self.complete = false;
    }

    /// Whether a message is in progress.
    pub fn is_pending(&self) -> bool {
        self.next_sn.is_some()
    }

    /// Bytes currently buffered.
    pub fn buffered(&self) -> usize {
        if self.complete {
            0
        } else {
            self.buf.len()
        }
    }

    /// Hands over the buffer of the message just completed (after
    /// [`Defragmented::Complete`]; empty otherwise), so that it can outlive the next
    /// fragment without a copy. The next message starts in a fresh buffer, or in one given
    /// back with [`Defragmenter::recycle`].
    pub fn take_complete(&mut self) -> Vec<u8> {
        if !self.complete {
            return Vec::new();
        }
        self.complete = false;
        core::mem::take(&mut self.buf)
    }

    /// Gives back a buffer (from [`Defragmenter::take_complete`]) for the next message
    /// to be reassembled in, if none is held.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.buf.capacity() == 0 && buf.capacity() <= KEPT_CAPACITY {
            buf.clear();
            self.buf = buf;
        }
    }

    fn following(&self, sn: u32) -> u32 {
        if u64::from(sn) >= self.sn_bits.max_sn() {
            0
        } else {
            sn + 1
        }
    }

    /// Adds a fragment (whose SN already passed the channel's ordering check).
    pub fn push(
        &mut self,
        header: &FragmentHeader<'_>,
        payload: &[u8],
    ) -> Result<Defragmented<'_>, DefragError> {
        if self.complete {
            self.clear();
        }
        if self.markers {
            if header.drop {
                self.clear();
                return Ok(Defragmented::Dropped);
            }
            if header.first {
                self.clear();
            } else if self.next_sn.is_none() {
                return Err(DefragError::NoStart { sn: header.sn });
            }
        }
        match self.next_sn {
            Some(expected) if expected != header.sn => {
                self.clear();
                return Err(DefragError::Gap {
                    expected,
                    got: header.sn,
                });
            }
            _ => {}
        }
        let size = self.buf.len() + payload.len();
        if size > self.max_len {
            self.clear();
            return Err(DefragError::TooLarge {
                size,
                max: self.max_len,
            });
        }
        self.buf.extend_from_slice(payload);
        self.next_sn = Some(self.following(header.sn));
        if header.more {
            return Ok(Defragmented::Pending);
        }
        self.complete = true;
        self.next_sn = None;
        Ok(Defragmented::Complete(&self.buf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::{Priority, Reliability};

    #[test]
    fn a_completed_message_can_be_taken_and_its_buffer_recycled() {
        let mut d = Defragmenter::new(100, Bits::U32, true);
        assert_eq!(d.take_complete(), Vec::<u8>::new(), "nothing complete yet");
        assert_eq!(
            d.push(&frag(1, true, true), b"ab"),
            Ok(Defragmented::Pending)
        );
        assert_eq!(d.take_complete(), Vec::<u8>::new(), "still pending");
        assert_eq!(
            d.push(&frag(2, false, false), b"cd"),
            Ok(Defragmented::Complete(b"abcd".as_slice()))
        );
        let taken = d.take_complete();
        assert_eq!(taken, b"abcd");
        assert_eq!(d.buffered(), 0);
        d.recycle(taken);
        assert_eq!(
            d.push(&frag(3, false, true), b"x"),
            Ok(Defragmented::Complete(b"x".as_slice()))
        );
        assert_eq!(
            d.take_complete(),
            b"x",
            "the recycled buffer holds only the new message"
        );
    }

    fn frag(sn: u32, more: bool, first: bool) -> FragmentHeader<'static> {
        let mut h = FragmentHeader::new(Reliability::Reliable, Priority::Data, sn, more);
        h.first = first;
        h
    }

    #[test]
    fn one_mebibyte_messages_in_a_row_reassemble_in_one_buffer() {
        let chunk = alloc::vec![7u8; 60_000];
        let mut d = Defragmenter::new(4 * KEPT_CAPACITY, Bits::U32, true);
        let mut sn = 0;
        let mut kept = None;
        for _ in 0..3 {
            // 1 MiB and a few bytes of headers, in fragments of 60,000 bytes.
            let mut left = (1 << 20) + 30;
            while left > 0 {
                let n = left.min(chunk.len());
                left -= n;
                sn += 1;
                let first = left + n == (1 << 20) + 30;
                let got = d.push(&frag(sn, left > 0, first), &chunk[..n]).unwrap();
                assert_eq!(matches!(got, Defragmented::Complete(_)), left == 0);
            }
            let taken = d.take_complete();
            assert_eq!(taken.len(), (1 << 20) + 30);
            let at = taken.as_ptr();
            d.recycle(taken);
            assert_eq!(
                d.buf.as_ptr(),
                at,
                "the buffer is kept for the next message"
            );
            if let Some(before) = kept {
                assert_eq!(at, before, "and not grown again");
            }
            kept = Some(at);
        }
    }

    #[test]
    fn a_discarded_or_taken_large_message_does_not_leave_its_buffer_behind() {
        let chunk = alloc::vec![1u8; KEPT_CAPACITY];
        let mut d = Defragmenter::new(3 * KEPT_CAPACITY, Bits::U32, true);
        assert_eq!(
            d.push(&frag(1, true, true), &chunk),
            Ok(Defragmented::Pending)
        );
        assert_eq!(
            d.push(&frag(2, true, false), &chunk),
            Ok(Defragmented::Pending)
        );
        // Over the bound: discarded, and its buffer (grown past the kept size) freed.
        assert!(d.push(&frag(3, true, false), &chunk[..]).is_ok());
        assert_eq!(
            d.push(&frag(4, true, false), &chunk),
            Err(DefragError::TooLarge {
                size: 4 * KEPT_CAPACITY,
                max: 3 * KEPT_CAPACITY
            })
        );
        assert_eq!(d.buf.capacity(), 0);
        // A large completed message's buffer is not taken back for the next one.
        assert_eq!(
            d.push(&frag(5, true, true), &chunk),
            Ok(Defragmented::Pending)
        );
        assert!(matches!(
            d.push(&frag(6, false, false), &chunk),
            Ok(Defragmented::Complete(_))
        ));
        let taken = d.take_complete();
        d.recycle(taken);
        assert_eq!(d.buf.capacity(), 0);
    }

    #[test]
    fn reassembles_in_order_fragments() {
        let mut d = Defragmenter::new(100, Bits::U32, true);
        assert_eq!(
            d.push(&frag(7, true, true), b"abc"),
            Ok(Defragmented::Pending)
        );
        assert_eq!(
            d.push(&frag(8, true, false), b"def"),
            Ok(Defragmented::Pending)
        );
        assert_eq!(
            d.push(&frag(9, false, false), b"g"),
            Ok(Defragmented::Complete(b"abcdefg".as_slice()))
        );
        assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn a_gap_discards_the_message() {
        let mut d = Defragmenter::new(100, Bits::U32, true);
        d.push(&frag(1, true, true), b"abc").unwrap();
        assert_eq!(
            d.push(&frag(3, false, false), b"x"),
            Err(DefragError::Gap {
                expected: 2,
                got: 3
            })
        );
        assert!(!d.is_pending());
        assert_eq!(
            d.push(&frag(4, false, false), b"x"),
            Err(DefragError::NoStart { sn: 4 })
        );
    }

    #[test]
    fn the_bound_is_enforced_and_sn_wraps() {
        let mut d = Defragmenter::new(4, Bits::U8, false);
        d.push(&frag(0x7F, true, false), b"ab").unwrap();
        assert_eq!(
            d.push(&frag(0, true, false), b"cde"),
            Err(DefragError::TooLarge { size: 5, max: 4 })
        );
        d.push(&frag(0x7F, true, false), b"ab").unwrap();
        assert_eq!(
            d.push(&frag(0, false, false), b"cd"),
            Ok(Defragmented::Complete(b"abcd".as_slice()))
        );
    }
}
