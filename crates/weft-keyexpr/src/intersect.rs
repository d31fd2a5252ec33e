//! Intersection of two key expressions (spec section 13.3).
//!
//! Two expressions intersect when some key matches both. Without `**` this is a
//! chunk-by-chunk comparison. With `**` it is a reachability question over the
//! grid of positions `(i, j)` (the first `i` chunks of one side and the first `j`
//! of the other are accounted for), solved row by row with a bit set: time is
//! `O(rows × columns)`, there is no recursion, and nothing is allocated unless
//! the shorter expression has more than 255 chunks.

use crate::bits::{self, BitRow};
use crate::chunk::{chunk_intersects, is_verbatim};
use crate::key_expr::{Chunks, KeyExpr};

/// `true` if at least one key matches both `a` and `b`.
///
/// ```
/// use weft_keyexpr::{intersects, KeyExpr};
/// let ke = |s| KeyExpr::new(s).unwrap();
/// assert!(intersects(ke("demo/**"), ke("demo")));
/// assert!(intersects(ke("a/$*d"), ke("a/b$*")));
/// assert!(!intersects(ke("**"), ke("@a/b")));
/// ```
pub fn intersects(a: KeyExpr<'_>, b: KeyExpr<'_>) -> bool {
    let (x, y) = (a.as_str(), b.as_str());
    if x == y {
        return true;
    }
    if !x.contains('*') && !y.contains('*') {
        return false;
    }
    if !x.contains("**") && !y.contains("**") {
        return pairwise(a.chunks(), b.chunks(), chunk_intersects);
    }
    // The relation is symmetric: put the expression with fewer chunks on the columns.
    let (rows, columns) = if a.chunks().count() >= b.chunks().count() {
        (a, b)
    } else {
        (b, a)
    };
    grid(rows, columns)
}

/// `true` if both sides have the same number of chunks and `f` holds for each pair.
pub(crate) fn pairwise(
    mut a: Chunks<'_>,
    mut b: Chunks<'_>,
    f: impl Fn(&str, &str) -> bool,
) -> bool {
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if f(x, y) => {}
            (None, None) => return true,
            _ => return false,
        }
    }
}

/// Grid reachability from `(0, 0)` to `(rows, columns)`.
///
/// Moves: a `**` on either side may absorb one non-verbatim chunk of the other
/// side (staying in place) or stand for nothing (moving past it); two ordinary
/// chunks move both sides on when they intersect.
fn grid(rows: KeyExpr<'_>, columns: KeyExpr<'_>) -> bool {
    let width = columns.chunks().count();
    let mut row = BitRow::new(width + 1);
    let reach = row.words();
    bits::set(reach, 0);
    let mut chunks = rows.chunks().peekable();
    close_row(reach, chunks.peek().copied(), columns);
    while let Some(chunk) = chunks.next() {
        next_row(reach, chunk, columns, width);
        close_row(reach, chunks.peek().copied(), columns);
        if bits::is_empty(reach) {
            return false;
        }
    }
    bits::get(reach, width)
}

/// Moves within a row: past a column `**`, or a column chunk absorbed by the
/// row's next chunk when that is `**` (`next` is `None` past the last row).
fn close_row(reach: &mut [u64], next: Option<&str>, columns: KeyExpr<'_>) {
    let absorbing = next == Some("**");
    for (j, chunk) in columns.chunks().enumerate() {
        if bits::get(reach, j) && (chunk == "**" || (absorbing && !is_verbatim(chunk))) {
            bits::set(reach, j + 1);
        }
    }
}

/// Moves from one row to the next over the row chunk `chunk`, in place.
fn next_row(reach: &mut [u64], chunk: &str, columns: KeyExpr<'_>, width: usize) {
    if chunk == "**" {
        // Standing for nothing keeps every position; absorbing was done in `close_row`.
        return;
    }
    let verbatim = is_verbatim(chunk);
    // Right to left, so that each position is read before it is rewritten.
    bits::clear(reach, width);
    for (k, column) in columns.chunks().rev().enumerate() {
        let j = width - 1 - k;
        let here = bits::get(reach, j);
        if here && column != "**" && chunk_intersects(chunk, column) {
            bits::set(reach, j + 1);
        }
        if !(here && column == "**" && !verbatim) {
            bits::clear(reach, j);
        }
    }
}
