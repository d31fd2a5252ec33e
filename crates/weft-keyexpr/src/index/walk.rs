//! Walking the chunk tree for one query.
//!
//! Each visited node carries a bit set over the query's chunk positions: bit `j`
//! says that the path from the root to the node can be laid over the first `j`
//! query chunks (the same grid as in `intersect.rs` and `include.rs`, one row per
//! tree level). A child is visited only if its set is not empty, so each node is
//! visited at most once, and plain chunks are found by lookup rather than by
//! scanning, unless the query has a wildcard at a reachable position.
//!
//! The sets live on the stack: `W` words hold up to `64 * W - 1` query chunks.
//! Recursion depth is bounded by the tree depth, which the index caps.

use crate::bits;
use crate::chunk::{chunk_includes, chunk_intersects, ChunkKind};
use crate::key_expr::KeyExpr;

use super::node::{Children, NodeId, ROOT};
use super::KeyExprIndex;

/// The query, split into chunks once.
pub(super) struct Query<'q> {
    chunks: &'q [&'q str],
    kinds: &'q [ChunkKind],
}

impl Query<'_> {
    fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Positions `j < len` set in `state`.
    fn active<'s, const W: usize>(
        &'s self,
        state: &'s [u64; W],
    ) -> impl Iterator<Item = usize> + 's {
        (0..self.len()).filter(move |&j| bits::get(state, j))
    }

    /// Sets `j + 1` wherever `j` is set and `moves(kind of chunk j)` holds,
    /// left to right (so runs are followed).
    fn close<const W: usize>(&self, state: &mut [u64; W], moves: impl Fn(ChunkKind) -> bool) {
        for (j, &kind) in self.kinds.iter().enumerate() {
            if bits::get(state, j) && moves(kind) {
                bits::set(state, j + 1);
            }
        }
    }
}

/// What the walk looks for: the relation between a registered expression (one
/// tree path) and the query.
pub(super) trait Relation {
    /// `true` if a `*`, `**` or `$*` query chunk at a reachable position may
    /// relate to any plain child chunk, so that plain children must be scanned.
    const WILD_QUERY_SCANS_LITERALS: bool;

    /// The set at the root: the query's first position, and those a leading
    /// query `**` may skip to. Relations in which a query `**` must be covered
    /// by registered chunks override this.
    fn start<const W: usize>(query: &Query<'_>) -> [u64; W] {
        let mut state = [0; W];
        bits::set(&mut state, 0);
        query.close(&mut state, |kind| kind == ChunkKind::DoubleStar);
        state
    }

    /// The set one level down, through the child chunk `chunk` of kind `kind`.
    fn step<const W: usize>(
        state: &[u64; W],
        query: &Query<'_>,
        chunk: &str,
        kind: ChunkKind,
    ) -> [u64; W];

    /// The relation for two whole expressions, used outside the tree.
    fn holds(registered: KeyExpr<'_>, query: KeyExpr<'_>) -> bool;
}

/// Registered expressions that intersect the query.
pub(super) struct Intersecting;

impl Relation for Intersecting {
    const WILD_QUERY_SCANS_LITERALS: bool = true;

    fn step<const W: usize>(
        state: &[u64; W],
        query: &Query<'_>,
        chunk: &str,
        kind: ChunkKind,
    ) -> [u64; W] {
        if kind == ChunkKind::DoubleStar {
            // The registered `**` stands for nothing, or absorbs non-verbatim chunks.
            let mut next = *state;
            query.close(&mut next, |kind| kind != ChunkKind::Verbatim);
            return next;
        }
        let mut next = [0; W];
        for j in query.active(state) {
            let (other, other_kind) = (query.chunks[j], query.kinds[j]);
            if other_kind == ChunkKind::DoubleStar {
                // The query's `**` absorbs the registered chunk.
                if kind != ChunkKind::Verbatim {
                    bits::set(&mut next, j);
                }
            } else if same_or_related(chunk, kind, other, other_kind, chunk_intersects) {
                bits::set(&mut next, j + 1);
            }
        }
        // The query's `**` may also stand for nothing.
        query.close(&mut next, |kind| kind == ChunkKind::DoubleStar);
        next
    }

    fn holds(registered: KeyExpr<'_>, query: KeyExpr<'_>) -> bool {
        registered.intersects(query)
    }
}

/// Registered expressions that include the query.
pub(super) struct Including;

impl Relation for Including {
    const WILD_QUERY_SCANS_LITERALS: bool = false;

    fn start<const W: usize>(_: &Query<'_>) -> [u64; W] {
        let mut state = [0; W];
        bits::set(&mut state, 0);
        state
    }

    fn step<const W: usize>(
        state: &[u64; W],
        query: &Query<'_>,
        chunk: &str,
        kind: ChunkKind,
    ) -> [u64; W] {
        if kind == ChunkKind::DoubleStar {
            let mut next = *state;
            query.close(&mut next, |kind| kind != ChunkKind::Verbatim);
            return next;
        }
        let mut next = [0; W];
        for j in query.active(state) {
            let (other, other_kind) = (query.chunks[j], query.kinds[j]);
            if other_kind != ChunkKind::DoubleStar
                && same_or_related(chunk, kind, other, other_kind, chunk_includes)
            {
                bits::set(&mut next, j + 1);
            }
        }
        next
    }

    fn holds(registered: KeyExpr<'_>, query: KeyExpr<'_>) -> bool {
        registered.includes(query)
    }
}

/// Registered expressions included by the query. Here the query is the
/// including side: the bit set is over its positions.
pub(super) struct IncludedBy;

impl Relation for IncludedBy {
    const WILD_QUERY_SCANS_LITERALS: bool = true;

    fn step<const W: usize>(
        state: &[u64; W],
        query: &Query<'_>,
        chunk: &str,
        kind: ChunkKind,
    ) -> [u64; W] {
        let mut next = [0; W];
        for i in query.active(state) {
            let (other, other_kind) = (query.chunks[i], query.kinds[i]);
            if other_kind == ChunkKind::DoubleStar {
                if kind != ChunkKind::Verbatim {
                    bits::set(&mut next, i);
                }
            } else if kind != ChunkKind::DoubleStar
                && same_or_related(other, other_kind, chunk, kind, chunk_includes)
            {
                bits::set(&mut next, i + 1);
            }
        }
        query.close(&mut next, |kind| kind == ChunkKind::DoubleStar);
        next
    }

    fn holds(registered: KeyExpr<'_>, query: KeyExpr<'_>) -> bool {
        query.includes(registered)
    }
}

/// Applies a chunk relation, answering the frequent plain-versus-plain case by
/// comparing the strings only.
fn same_or_related(
    x: &str,
    x_kind: ChunkKind,
    y: &str,
    y_kind: ChunkKind,
    related: fn(&str, &str) -> bool,
) -> bool {
    if x_kind == ChunkKind::Literal && y_kind == ChunkKind::Literal {
        x == y
    } else {
        related(x, y)
    }
}

impl<V> KeyExprIndex<V> {
    /// Runs the walk for `query`, which must have fewer than `CAP` chunks, with
    /// `CAP == 64 * W`.
    pub(super) fn walk<'a, R: Relation, const W: usize, const CAP: usize>(
        &'a self,
        query: KeyExpr<'_>,
        f: &mut impl FnMut(KeyExpr<'a>, &'a V),
    ) {
        let mut chunks = [""; CAP];
        let mut kinds = [ChunkKind::Literal; CAP];
        let mut len = 0;
        for (chunk, (slot, kind)) in query.chunks().zip(chunks.iter_mut().zip(kinds.iter_mut())) {
            *slot = chunk;
            *kind = ChunkKind::of(chunk);
            len += 1;
        }
        let query = Query {
            chunks: &chunks[..len],
            kinds: &kinds[..len],
        };
        let start = R::start::<W>(&query);
        self.visit::<R, W>(ROOT, start, &query, f);
    }

    fn visit<'a, R: Relation, const W: usize>(
        &'a self,
        node: NodeId,
        state: [u64; W],
        query: &Query<'_>,
        f: &mut impl FnMut(KeyExpr<'a>, &'a V),
    ) {
        let Some(node) = self.nodes.get(node as usize) else {
            return;
        };
        if let Some(entry) = &node.entry {
            if bits::get(&state, query.len()) {
                f(entry.key.as_key_expr(), &entry.value);
            }
        }
        let Some(children) = node.children.as_deref() else {
            return;
        };
        let mut descend = |child: NodeId, chunk: &str, kind: ChunkKind| {
            let next = R::step(&state, query, chunk, kind);
            if !bits::is_empty(&next) {
                self.visit::<R, W>(child, next, query, f);
            }
        };
        if let Some(child) = children.double_star {
            descend(child, "**", ChunkKind::DoubleStar);
        }
        if let Some(child) = children.star {
            descend(child, "*", ChunkKind::Star);
        }
        for (pattern, child) in &children.patterns {
            descend(*child, pattern, ChunkKind::Pattern);
        }
        let scan_literals = R::WILD_QUERY_SCANS_LITERALS
            && query.active(&state).any(|j| {
                matches!(
                    query.kinds[j],
                    ChunkKind::Star | ChunkKind::DoubleStar | ChunkKind::Pattern
                )
            });
        if scan_literals {
            for (chunk, child) in &children.literal {
                descend(*child, chunk, ChunkKind::Literal);
            }
        }
        for j in query.active(&state) {
            let kind = query.kinds[j];
            let looked_up = match kind {
                ChunkKind::Literal if !scan_literals => lookup(children, kind, query.chunks[j]),
                ChunkKind::Verbatim => lookup(children, kind, query.chunks[j]),
                _ => None,
            };
            let Some(child) = looked_up else {
                continue;
            };
            // The same text at two reachable positions leads to the same child:
            // visit it once (its set covers both positions).
            let chunk = query.chunks[j];
            if query
                .active(&state)
                .take_while(|&k| k < j)
                .any(|k| query.chunks[k] == chunk)
            {
                continue;
            }
            descend(child, chunk, kind);
        }
    }
}

fn lookup(children: &Children, kind: ChunkKind, chunk: &str) -> Option<NodeId> {
    match kind {
        ChunkKind::Literal => children.literal.get(chunk).copied(),
        ChunkKind::Verbatim => children.verbatim.get(chunk).copied(),
        _ => None,
    }
}
