//! A message in fragments that its sender writes from its own bytes ([`DirectWrite`]):
//! the fragments' headers are planned and the message's head encoded, but its bulk (the
//! payload) is never copied into a batch. What the link does not take goes back to the
//! sending half ([`super::Outbound::direct_blocked`]), copied then, and only that.

use std::io::IoSlice;
use std::time::Instant;

use weft_proto::batch::framing::PrefixWidth;
use weft_proto::SliceWriter;

use crate::queue::slice_parts;
use crate::tx::{Fragments, PlannedFragment};

/// The slices of one framed fragment: its length prefix, its header, and the parts of the
/// message it carries (head before the bulk, bulk, head after).
pub const FRAGMENT_SLICES: usize = 5;

/// A message in fragments whose sender holds the right to write the link, from
/// [`super::Sent::Direct`]: write each fragment ([`DirectWrite::next_fragment`]) in order,
/// then tell the sending half how it went ([`super::Outbound::direct_done`],
/// [`super::Outbound::direct_blocked`] or [`super::Outbound::direct_failed`]).
#[derive(Debug)]
pub struct DirectWrite {
    pub(super) head: Vec<u8>,
    pub(super) at: usize,
    pub(super) bulk_len: usize,
    pub(super) fragments: Fragments,
    pub(super) width: PrefixWidth,
    pub(super) count: usize,
    /// Fragments handed out so far, and their bytes (headers and what they carry).
    pub(super) handed: (u64, u64),
    /// Whether the sender waits for the socket when it takes no more
    /// ([`super::Outbound::direct_wait`]), rather than handing the rest over.
    pub(super) waits: bool,
    /// Since when the sender has waited for the socket, if it has.
    pub(super) blocked_at: Option<Instant>,
}

/// Two plans are alike when they write the same message the same way (for tests).
impl PartialEq for DirectWrite {
    fn eq(&self, other: &Self) -> bool {
        (
            self.head.as_slice(),
            self.at,
            self.bulk_len,
            self.count,
            self.handed,
        ) == (
            other.head.as_slice(),
            other.at,
            other.bulk_len,
            other.count,
            other.handed,
        )
    }
}

impl Eq for DirectWrite {}

/// One fragment of a [`DirectWrite`], as the link writes it.
#[derive(Debug, Clone, Copy)]
pub struct DirectFragment {
    planned: PlannedFragment,
    prefix: [u8; 4],
    width: PrefixWidth,
}

impl DirectWrite {
    /// The next fragment to write, or `None` when all were handed out.
    pub fn next_fragment(&mut self) -> Option<DirectFragment> {
        let planned = self.fragments.next()?;
        let len = planned.head().len() + planned.range().len();
        self.handed.0 += 1;
        self.handed.1 += len as u64;
        let mut prefix = [0u8; 4];
        // A fragment never exceeds the negotiated batch size, which its prefix carries.
        let framed = self.width.write(len, &mut SliceWriter::new(&mut prefix));
        debug_assert!(framed.is_ok(), "a fragment fits its prefix");
        Some(DirectFragment {
            planned,
            prefix,
            width: self.width,
        })
    }

    /// The message as three parts laid end to end (head before the bulk, the bulk, head
    /// after); `bulk` is the message's own ([`weft_proto::network::NetworkMessage::bulk`]).
    pub fn parts<'a>(&'a self, bulk: &'a [u8]) -> [&'a [u8]; 3] {
        debug_assert_eq!(bulk.len(), self.bulk_len, "the bulk of the message planned");
        let (before, after) = self.head.split_at(self.at.min(self.head.len()));
        [before, bulk, after]
    }

    /// How many fragments the message is cut into.
    pub const fn count(&self) -> usize {
        self.count
    }

    /// Fragments not handed out yet.
    pub(super) fn left(&self) -> usize {
        self.count - self.handed.0 as usize
    }
}

impl DirectFragment {
    /// The framed fragment as slices for one vectored write, at the start of `out` (at
    /// least [`FRAGMENT_SLICES`] long); returns how many were set.
    pub fn io_slices<'a>(&'a self, parts: [&'a [u8]; 3], out: &mut [IoSlice<'a>]) -> usize {
        let mut n = 0;
        let carried = slice_parts(parts, self.planned.range());
        for slice in [&self.prefix[..self.width.len()], self.planned.head()]
            .into_iter()
            .chain(carried)
        {
            if !slice.is_empty() {
                out[n] = IoSlice::new(slice);
                n += 1;
            }
        }
        n
    }

    /// Bytes of the fragment as a batch (its header and what it carries).
    pub(super) fn batch_len(&self) -> usize {
        self.planned.head().len() + self.planned.range().len()
    }

    /// Bytes of the framed fragment.
    pub fn framed_len(&self) -> usize {
        self.width.len() + self.batch_len()
    }

    /// The fragment as a batch (its header and what it carries, copied), for the rest of
    /// a message the link did not take.
    pub(super) fn to_batch(self, parts: [&[u8]; 3], mut buf: Vec<u8>) -> Vec<u8> {
        buf.clear();
        buf.extend_from_slice(self.planned.head());
        for part in slice_parts(parts, self.planned.range()) {
            buf.extend_from_slice(part);
        }
        buf
    }
}
