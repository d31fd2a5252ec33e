//! Deterministic random key expressions for the randomized tests.

#![allow(dead_code)] // each test file uses part of this module

use weft_keyexpr::{canonize, OwnedKeyExpr};

/// xorshift64*: small, fast and deterministic.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// `true` with probability `percent / 100`.
    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// Chunks of random expressions: a small alphabet so that relations often hold,
/// wildcards, `$*` patterns (including non-canonical ones), verbatim chunks,
/// non-ASCII text.
pub(crate) const CHUNKS: &[&str] = &[
    "a", "b", "c", "ab", "ba", "é", "a b", "*", "*", "**", "**", "$*", "$*$*", "a$*", "$*a", "b$*",
    "a$*b", "$*a$*", "a$*$*b", "ab$*ba", "@a", "@b", "@a$*", "@",
];

/// A random valid canonical key expression of 1 to `max_chunks` chunks (before
/// canonicalisation, which may shorten it).
pub(crate) fn key_expr(rng: &mut Rng, max_chunks: usize) -> OwnedKeyExpr {
    let n = 1 + rng.below(max_chunks);
    let joined: Vec<&str> = (0..n).map(|_| *rng.pick(CHUNKS)).collect();
    let canonical = canonize(&joined.join("/")).expect("chunks from CHUNKS canonicalise");
    OwnedKeyExpr::new(canonical).expect("canonize returns canonical expressions")
}

/// A random key without wildcards, shaped like the expressions of `key_expr`.
pub(crate) fn concrete_key(rng: &mut Rng, max_chunks: usize) -> OwnedKeyExpr {
    const PLAIN: &[&str] = &["a", "b", "c", "ab", "ba", "abba", "é", "@a", "@b"];
    let n = 1 + rng.below(max_chunks);
    let joined: Vec<&str> = (0..n).map(|_| *rng.pick(PLAIN)).collect();
    OwnedKeyExpr::new(joined.join("/")).expect("plain chunks form a valid key")
}

/// A random expression built from `base` by keeping, replacing, dropping or
/// expanding its chunks, so that it is often (not always) related to `base`.
pub(crate) fn variant_of(rng: &mut Rng, base: &OwnedKeyExpr) -> OwnedKeyExpr {
    let mut out: Vec<&str> = Vec::new();
    for chunk in base.as_key_expr().chunks() {
        match rng.below(10) {
            0..=4 => out.push(chunk),
            5 | 6 => out.push(*rng.pick(CHUNKS)),
            7 => {}
            _ => {
                for _ in 0..rng.below(3) {
                    out.push(*rng.pick(CHUNKS));
                }
                if rng.chance(50) {
                    out.push(chunk);
                }
            }
        }
    }
    if out.is_empty() {
        out.push(*rng.pick(CHUNKS));
    }
    let canonical = canonize(&out.join("/")).expect("chunks canonicalise");
    OwnedKeyExpr::new(canonical).expect("canonize returns canonical expressions")
}
