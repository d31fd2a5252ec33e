//! What a link is asked to write: a group of batches, framed for the link, and how much of
//! it the link has taken so far.

use std::io::IoSlice;

use weft_proto::batch::framing::PrefixWidth;

/// Most batches one [`Transmit`] gathers (one vectored write on a stream link).
pub const GATHER_MAX: usize = 4;

/// How batches are delimited on a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// A byte stream (TCP, Unix sockets, TLS, QUIC streams, serial): each batch is preceded
    /// by its length.
    Stream(PrefixWidth),
    /// Datagrams (UDP): one batch per datagram, no prefix.
    Datagram,
}

/// Batches handed to the link's driver for writing, and the right to write: while a
/// `Transmit` is out, the connection hands out no other (one writer per link, whoever holds
/// it). The driver writes what [`Transmit::io_slices`] (or [`Transmit::datagrams`]) gives
/// and reports what the link took with
/// [`Outbound::transmitted`](super::Outbound::transmitted), which takes the `Transmit`
/// back whole or keeps its rest for the link's next writable moment.
#[derive(Debug)]
pub struct Transmit {
    pub(super) batches: Vec<Vec<u8>>,
    pub(super) prefixes: [[u8; 4]; GATHER_MAX],
    pub(super) framing: Framing,
    /// Bytes of the framed batches, laid end to end, the link has taken.
    pub(super) written: usize,
}

impl Transmit {
    pub(super) fn new(batches: Vec<Vec<u8>>, framing: Framing) -> Self {
        let mut prefixes = [[0; 4]; GATHER_MAX];
        if let Framing::Stream(width) = framing {
            for (prefix, batch) in prefixes.iter_mut().zip(&batches) {
                // A batch never exceeds the negotiated size, which its prefix carries.
                match width {
                    PrefixWidth::U16 => {
                        prefix[..2].copy_from_slice(&(batch.len() as u16).to_le_bytes());
                    }
                    PrefixWidth::U32 => {
                        prefix.copy_from_slice(&(batch.len() as u32).to_le_bytes());
                    }
                }
            }
        }
        Self {
            batches,
            prefixes,
            framing,
            written: 0,
        }
    }

    fn prefix(&self, i: usize) -> &[u8] {
        match self.framing {
            Framing::Stream(width) => &self.prefixes[i][..width.len()],
            Framing::Datagram => &[],
        }
    }

    /// Bytes of every batch with its framing.
    pub fn len(&self) -> usize {
        (0..self.batches.len())
            .map(|i| self.prefix(i).len() + self.batches[i].len())
            .sum()
    }

    /// Whether it holds nothing (never the case for a `Transmit` handed out).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the link has not taken yet.
    pub fn remaining(&self) -> usize {
        self.len() - self.written
    }

    /// Batches it carries.
    pub fn batch_count(&self) -> usize {
        self.batches.len()
    }

    /// What remains to be written on a stream link, as slices for one vectored write
    /// (prefix, batch, prefix, batch...), in `out`; returns how many slices were set.
    /// `out` needs `2 * GATHER_MAX` places to take everything.
    pub fn io_slices<'a>(&'a self, out: &mut [IoSlice<'a>]) -> usize {
        let mut skip = self.written;
        let mut n = 0;
        for (i, batch) in self.batches.iter().enumerate() {
            for part in [self.prefix(i), batch.as_slice()] {
                if skip >= part.len() {
                    skip -= part.len();
                    continue;
                }
                let Some(slot) = out.get_mut(n) else {
                    return n;
                };
                *slot = IoSlice::new(&part[skip..]);
                n += 1;
                skip = 0;
            }
        }
        n
    }

    /// The batches not yet written, one datagram each, on a datagram link.
    pub fn datagrams(&self) -> impl Iterator<Item = &[u8]> {
        let mut skip = self.written;
        self.batches.iter().filter_map(move |b| {
            if skip >= b.len() {
                skip -= b.len();
                None
            } else {
                Some(b.as_slice())
            }
        })
    }

    /// Takes the batches out, leaving the list empty (to be reused).
    pub(super) fn take_batches(&mut self) -> std::vec::Drain<'_, Vec<u8>> {
        self.batches.drain(..)
    }

    /// The emptied list of batches, to be reused.
    pub(super) fn into_list(self) -> Vec<Vec<u8>> {
        self.batches
    }

    /// Marks `n` more bytes as taken by the link; whether everything is out.
    pub(super) fn advance(&mut self, n: usize) -> bool {
        self.written = (self.written + n).min(self.len());
        self.written == self.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_slices_skip_what_was_written_across_prefixes_and_batches() {
        let t0 = Transmit::new(
            vec![vec![1, 2, 3], vec![4, 5]],
            Framing::Stream(PrefixWidth::U16),
        );
        assert_eq!(t0.len(), 2 + 3 + 2 + 2);
        let mut t = t0;
        let flat = |t: &Transmit| {
            let mut v = [IoSlice::new(&[]); 2 * GATHER_MAX];
            let n = t.io_slices(&mut v);
            v[..n].iter().flat_map(|s| s.to_vec()).collect::<Vec<u8>>()
        };
        assert_eq!(flat(&t), vec![3, 0, 1, 2, 3, 2, 0, 4, 5]);
        assert!(!t.advance(1));
        assert_eq!(flat(&t), vec![0, 1, 2, 3, 2, 0, 4, 5]);
        assert!(!t.advance(5));
        assert_eq!(flat(&t), vec![0, 4, 5]);
        assert!(t.advance(3));
        assert_eq!(t.remaining(), 0);
        assert!(flat(&t).is_empty());
    }

    #[test]
    fn datagrams_are_the_batches_without_prefixes() {
        let mut t = Transmit::new(vec![vec![1, 2, 3], vec![4, 5]], Framing::Datagram);
        assert_eq!(t.len(), 5);
        assert_eq!(t.datagrams().count(), 2);
        t.advance(3);
        assert_eq!(t.datagrams().collect::<Vec<_>>(), vec![&[4u8, 5][..]]);
    }
}
