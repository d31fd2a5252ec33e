//! Inclusion of key expressions (spec section 13.4), as Zenoh 1.x decides it.
//!
//! `left` includes `right` when `left`'s chunks can be laid over `right`'s from
//! left to right: a `**` of `left` absorbs any number of `right`'s non-verbatim
//! chunks (including `**`), and every other chunk of `left` must include the
//! chunk of `right` it lies on, which may not be `**`. This is Zenoh's rule; it
//! is not full set inclusion (`*/**` does not include `**/x` by it, though every
//! key of the second matches the first). Solved like intersection, row by row
//! over a bit set, with no recursion and no allocation unless `right` has more
//! than 255 chunks.

use crate::bits::{self, BitRow};
use crate::chunk::{chunk_includes, is_verbatim};
use crate::intersect::pairwise;
use crate::key_expr::KeyExpr;

/// `true` if `left` includes `right`: every key matching `right` matches `left`.
///
/// ```
/// use weft_keyexpr::{includes, KeyExpr};
/// let ke = |s| KeyExpr::new(s).unwrap();
/// assert!(includes(ke("demo/**"), ke("demo")));
/// assert!(includes(ke("a/*"), ke("a/b$*")));
/// assert!(!includes(ke("a/**"), ke("a/@b")));
/// ```
pub fn includes(left: KeyExpr<'_>, right: KeyExpr<'_>) -> bool {
    let (l, r) = (left.as_str(), right.as_str());
    if l == r {
        return true;
    }
    if !l.contains('*') {
        return false;
    }
    if !l.contains("**") {
        return pairwise(left.chunks(), right.chunks(), |l, r| {
            r != "**" && chunk_includes(l, r)
        });
    }
    let width = right.chunks().count();
    let mut row = BitRow::new(width + 1);
    let reach = row.words();
    bits::set(reach, 0);
    for chunk in left.chunks() {
        if chunk == "**" {
            absorb(reach, right);
        } else {
            next_row(reach, chunk, right, width);
        }
        if bits::is_empty(reach) {
            return false;
        }
    }
    bits::get(reach, width)
}

/// A `**` of `left` absorbs a run of non-verbatim chunks of `right`.
fn absorb(reach: &mut [u64], right: KeyExpr<'_>) {
    for (j, chunk) in right.chunks().enumerate() {
        if bits::get(reach, j) && !is_verbatim(chunk) {
            bits::set(reach, j + 1);
        }
    }
}

/// Lays the non-`**` chunk `chunk` of `left` on the next chunk of `right`, in place.
fn next_row(reach: &mut [u64], chunk: &str, right: KeyExpr<'_>, width: usize) {
    bits::clear(reach, width);
    for (k, other) in right.chunks().rev().enumerate() {
        let j = width - 1 - k;
        if bits::get(reach, j) && other != "**" && chunk_includes(chunk, other) {
            bits::set(reach, j + 1);
        }
        bits::clear(reach, j);
    }
}
