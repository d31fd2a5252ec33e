//! Small bit sets over chunk positions, used by the matching algorithms.

use alloc::vec;
use alloc::vec::Vec;

/// Words kept inline by [`BitRow`]: positions `0..INLINE_WORDS * 64`.
const INLINE_WORDS: usize = 4;

/// `true` if bit `i` is set.
pub(crate) fn get(words: &[u64], i: usize) -> bool {
    words
        .get(i / 64)
        .is_some_and(|word| word & (1 << (i % 64)) != 0)
}

/// Sets bit `i` (ignored if out of range).
pub(crate) fn set(words: &mut [u64], i: usize) {
    if let Some(word) = words.get_mut(i / 64) {
        *word |= 1 << (i % 64);
    }
}

/// Clears bit `i` (ignored if out of range).
pub(crate) fn clear(words: &mut [u64], i: usize) {
    if let Some(word) = words.get_mut(i / 64) {
        *word &= !(1 << (i % 64));
    }
}

/// `true` if no bit is set.
pub(crate) fn is_empty(words: &[u64]) -> bool {
    words.iter().all(|&word| word == 0)
}

/// A bit set over `0..len`, inline for short lengths and on the heap beyond.
pub(crate) enum BitRow {
    Inline([u64; INLINE_WORDS]),
    Heap(Vec<u64>),
}

impl BitRow {
    /// An empty set able to hold positions `0..len`. Allocates only when `len`
    /// exceeds 256.
    pub(crate) fn new(len: usize) -> Self {
        let words = len.div_ceil(64);
        if words <= INLINE_WORDS {
            Self::Inline([0; INLINE_WORDS])
        } else {
            Self::Heap(vec![0; words])
        }
    }

    /// The words of the set.
    pub(crate) fn words(&mut self) -> &mut [u64] {
        match self {
            Self::Inline(words) => words,
            Self::Heap(words) => words,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_clear() {
        for len in [1, 64, 65, 256, 257, 1000] {
            let mut row = BitRow::new(len);
            let words = row.words();
            assert!(is_empty(words));
            set(words, len - 1);
            assert!(get(words, len - 1));
            assert!(!get(words, len / 2) || len == 1);
            clear(words, len - 1);
            assert!(is_empty(words));
        }
    }
}
