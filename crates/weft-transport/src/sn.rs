//! Sequence numbers: the valid range for a resolution, the sender's counter and the
//! receiver's "is it ahead?" rule.
//!
//! The range is not 2^bits: SNs are kept within a fixed number of zint bytes (for the
//! default 32-bit resolution, 0..=2^28-1). A receiver accepts an SN iff it is ahead of the
//! last accepted one by at most half the space; duplicates and old SNs are dropped, gaps
//! (lost best-effort frames) are allowed.

use weft_proto::core::Bits;

/// The sender's counter for one (reliability, priority) channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnCounter {
    next: u32,
    max: u32,
}

impl SnCounter {
    /// A counter starting at `initial` (which must be in range).
    pub fn new(initial: u32, bits: Bits) -> Self {
        let max = bits.max_sn() as u32;
        Self {
            next: initial & max,
            max,
        }
    }

    /// The SN the next Frame or Fragment takes.
    pub const fn peek(&self) -> u32 {
        self.next
    }

    /// Takes the next SN.
    pub fn take(&mut self) -> u32 {
        let sn = self.next;
        self.next = if sn == self.max { 0 } else { sn + 1 };
        sn
    }
}

/// The receiver's state for one (reliability, priority) channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnWindow {
    last: u32,
    max: u32,
}

/// What the receiver does with an SN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnVerdict {
    /// The next expected SN.
    InOrder,
    /// Ahead, with `missing` SNs skipped (lost best-effort frames).
    Gap {
        /// How many SNs were skipped.
        missing: u32,
    },
    /// A duplicate or an old SN: drop the frame.
    Stale,
    /// Outside the negotiated range: a protocol error.
    OutOfRange,
}

impl SnWindow {
    /// A window expecting `initial` (the peer's announced initial SN) first.
    pub fn new(initial: u32, bits: Bits) -> Self {
        let max = bits.max_sn() as u32;
        let initial = initial & max;
        Self {
            last: if initial == 0 { max } else { initial - 1 },
            max,
        }
    }

    /// Expects `next` (within the window's range) next, whatever came before.
    pub fn restart(&mut self, next: u32) {
        let next = next & self.max;
        self.last = if next == 0 { self.max } else { next - 1 };
    }

    /// Judges `sn` and, if it is accepted, makes it the last accepted SN.
    pub fn accept(&mut self, sn: u32) -> SnVerdict {
        if sn > self.max {
            return SnVerdict::OutOfRange;
        }
        let space = u64::from(self.max) + 1;
        let gap = (u64::from(sn) + space - u64::from(self.last)) % space;
        if gap == 0 || gap > space / 2 {
            return SnVerdict::Stale;
        }
        self.last = sn;
        if gap == 1 {
            SnVerdict::InOrder
        } else {
            SnVerdict::Gap {
                missing: (gap - 1) as u32,
            }
        }
    }
}

/// Derives an initial SN from both ZenohIDs (the same pair always gives the same SN),
/// within the range of `bits`.
pub fn initial_sn(own: &[u8], peer: &[u8], bits: Bits) -> u32 {
    // FNV-1a over both ids: cheap, deterministic, spreads the values over the range.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in own.iter().chain(peer) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    (h & bits.max_sn()) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_wraps_within_the_range() {
        let mut c = SnCounter::new(0x7E, Bits::U8);
        assert_eq!(c.take(), 0x7E);
        assert_eq!(c.take(), 0x7F);
        assert_eq!(c.take(), 0);
    }

    #[test]
    fn window_accepts_ahead_and_drops_stale() {
        let mut w = SnWindow::new(100, Bits::U32);
        assert_eq!(w.accept(100), SnVerdict::InOrder);
        assert_eq!(w.accept(100), SnVerdict::Stale);
        assert_eq!(w.accept(99), SnVerdict::Stale);
        assert_eq!(w.accept(104), SnVerdict::Gap { missing: 3 });
        assert_eq!(w.accept(105), SnVerdict::InOrder);
        assert_eq!(w.accept(1 << 28), SnVerdict::OutOfRange);
    }

    #[test]
    fn window_crosses_the_wrap() {
        let mut w = SnWindow::new(0x7F, Bits::U8);
        assert_eq!(w.accept(0x7F), SnVerdict::InOrder);
        assert_eq!(w.accept(0), SnVerdict::InOrder);
        assert_eq!(w.accept(0x7F), SnVerdict::Stale);
        // More than half the space ahead counts as behind.
        assert_eq!(w.accept(0x41), SnVerdict::Stale);
        assert_eq!(w.accept(0x40), SnVerdict::Gap { missing: 63 });
        let mut w = SnWindow::new(0, Bits::U8);
        assert_eq!(w.accept(0), SnVerdict::InOrder);
    }

    #[test]
    fn derived_initial_sns_are_in_range() {
        for bits in [Bits::U8, Bits::U16, Bits::U32, Bits::U64] {
            let sn = initial_sn(&[1, 2, 3], &[4, 5, 6, 7], bits);
            assert!(u64::from(sn) <= bits.max_sn());
        }
        assert_ne!(
            initial_sn(&[1], &[2], Bits::U32),
            initial_sn(&[2], &[1], Bits::U32)
        );
    }
}
