//! Storage of the chunk tree: nodes and their children, sorted by chunk kind.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use crate::chunk::ChunkKind;
use crate::key_expr::OwnedKeyExpr;

/// Position of a node in the index's node arena.
pub(super) type NodeId = u32;

/// The root node's id.
pub(super) const ROOT: NodeId = 0;

/// A registered key expression and its value.
pub(super) struct Entry<V> {
    pub(super) key: OwnedKeyExpr,
    pub(super) value: V,
}

/// A node of the tree: the key expression spelled by the path from the root,
/// if registered, and the children one chunk further.
pub(super) struct Node<V> {
    pub(super) entry: Option<Entry<V>>,
    pub(super) children: Option<Box<Children>>,
}

impl<V> Node<V> {
    pub(super) const fn new() -> Self {
        Self {
            entry: None,
            children: None,
        }
    }

    /// `true` if the node holds nothing and can be freed.
    pub(super) fn is_vacant(&self) -> bool {
        self.entry.is_none() && self.children.is_none()
    }
}

/// The children of a node, one field per chunk kind so that lookups only look
/// where a chunk can match: plain chunks by exact text, `@` chunks apart (no
/// wildcard ever matches them), the two wildcard chunks, and the few `$*`
/// pattern chunks in a list.
#[derive(Default)]
pub(super) struct Children {
    pub(super) literal: BTreeMap<Box<str>, NodeId>,
    pub(super) verbatim: BTreeMap<Box<str>, NodeId>,
    pub(super) patterns: Vec<(Box<str>, NodeId)>,
    pub(super) star: Option<NodeId>,
    pub(super) double_star: Option<NodeId>,
}

impl Children {
    /// The child reached by exactly `chunk`.
    pub(super) fn get(&self, chunk: &str) -> Option<NodeId> {
        match ChunkKind::of(chunk) {
            ChunkKind::Literal => self.literal.get(chunk).copied(),
            ChunkKind::Verbatim => self.verbatim.get(chunk).copied(),
            ChunkKind::Star => self.star,
            ChunkKind::DoubleStar => self.double_star,
            ChunkKind::Pattern => self
                .patterns
                .iter()
                .find(|(pattern, _)| **pattern == *chunk)
                .map(|&(_, id)| id),
        }
    }

    /// Adds the child reached by `chunk`, which must not exist yet.
    pub(super) fn insert(&mut self, chunk: &str, id: NodeId) {
        match ChunkKind::of(chunk) {
            ChunkKind::Literal => {
                self.literal.insert(chunk.into(), id);
            }
            ChunkKind::Verbatim => {
                self.verbatim.insert(chunk.into(), id);
            }
            ChunkKind::Star => self.star = Some(id),
            ChunkKind::DoubleStar => self.double_star = Some(id),
            ChunkKind::Pattern => self.patterns.push((chunk.into(), id)),
        }
    }

    /// Forgets the child reached by `chunk`.
    pub(super) fn remove(&mut self, chunk: &str) {
        match ChunkKind::of(chunk) {
            ChunkKind::Literal => {
                self.literal.remove(chunk);
            }
            ChunkKind::Verbatim => {
                self.verbatim.remove(chunk);
            }
            ChunkKind::Star => self.star = None,
            ChunkKind::DoubleStar => self.double_star = None,
            ChunkKind::Pattern => self.patterns.retain(|(pattern, _)| **pattern != *chunk),
        }
    }

    /// `true` if there is no child left.
    pub(super) fn is_empty(&self) -> bool {
        self.literal.is_empty()
            && self.verbatim.is_empty()
            && self.patterns.is_empty()
            && self.star.is_none()
            && self.double_star.is_none()
    }
}
