//! [`KeyExprIndex`]: registered key expressions, found by relation to a query
//! without scanning them all.

mod node;
mod walk;

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::key_expr::{Chunks, KeyExpr};

use self::node::{Entry, Node, NodeId, ROOT};
use self::walk::{IncludedBy, Including, Intersecting, Relation};

/// Expressions with more chunks than this are kept outside the tree, in a list
/// that queries scan; this bounds the recursion depth of every tree operation.
const MAX_TREE_DEPTH: usize = 128;

/// A map from key expressions to values, queried by intersection or inclusion.
///
/// It is a tree with one level per chunk. A node's children are kept by kind:
/// plain chunks in a sorted map looked up by the query's chunk, `@` chunks in
/// another, `*` and `**` in their own slots, and `$*` pattern chunks in a short
/// list. A query walks only the branches that can still relate to it.
///
/// Memory is allocated when inserting; queries and removals do not allocate
/// (queries of more than 255 chunks, rare in practice, fall back to checking
/// every registration in turn).
///
/// ```
/// use weft_keyexpr::{KeyExpr, KeyExprIndex};
/// let ke = |s| KeyExpr::new(s).unwrap();
/// let mut subscribers = KeyExprIndex::new();
/// subscribers.insert(ke("robot/*/pose"), 1);
/// subscribers.insert(ke("robot/**"), 2);
/// subscribers.insert(ke("camera/**"), 3);
/// let mut hits: Vec<i32> = subscribers
///     .intersecting(ke("robot/7/pose"))
///     .into_iter()
///     .map(|(_, v)| *v)
///     .collect();
/// hits.sort();
/// assert_eq!(hits, [1, 2]);
/// ```
pub struct KeyExprIndex<V> {
    nodes: Vec<Node<V>>,
    free: Vec<NodeId>,
    deep: Vec<Entry<V>>,
    len: usize,
}

impl<V> Default for KeyExprIndex<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> KeyExprIndex<V> {
    /// An empty index.
    pub fn new() -> Self {
        Self {
            nodes: alloc::vec![Node::new()],
            free: Vec::new(),
            deep: Vec::new(),
            len: 0,
        }
    }

    /// Number of registered key expressions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` if nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Removes every registration.
    pub fn clear(&mut self) {
        *self = Self::new();
    }

    /// Registers `key` with `value`, returning the value it replaces, if any.
    pub fn insert(&mut self, key: KeyExpr<'_>, value: V) -> Option<V> {
        if key.chunks().count() > MAX_TREE_DEPTH {
            if let Some(entry) = self.deep.iter_mut().find(|e| e.key == key) {
                return Some(core::mem::replace(&mut entry.value, value));
            }
            self.deep.push(Entry {
                key: key.to_owned_key_expr(),
                value,
            });
            self.len += 1;
            return None;
        }
        let mut node = ROOT;
        for chunk in key.chunks() {
            node = match self.child(node, chunk) {
                Some(child) => child,
                None => self.add_child(node, chunk),
            };
        }
        let slot = &mut self.nodes[node as usize].entry;
        if let Some(entry) = slot {
            return Some(core::mem::replace(&mut entry.value, value));
        }
        *slot = Some(Entry {
            key: key.to_owned_key_expr(),
            value,
        });
        self.len += 1;
        None
    }

    /// Unregisters `key`, returning its value if it was registered.
    pub fn remove(&mut self, key: KeyExpr<'_>) -> Option<V> {
        if key.chunks().count() > MAX_TREE_DEPTH {
            let at = self.deep.iter().position(|e| e.key == key)?;
            self.len -= 1;
            return Some(self.deep.swap_remove(at).value);
        }
        self.remove_below(ROOT, &mut key.chunks())
    }

    /// The value registered for exactly `key`.
    pub fn get(&self, key: KeyExpr<'_>) -> Option<&V> {
        let entry = match self.find(key) {
            Some(node) => self.nodes[node as usize].entry.as_ref(),
            None => self.deep.iter().find(|e| e.key == key),
        };
        entry.map(|e| &e.value)
    }

    /// The value registered for exactly `key`, mutably.
    pub fn get_mut(&mut self, key: KeyExpr<'_>) -> Option<&mut V> {
        let entry = match self.find(key) {
            Some(node) => self.nodes[node as usize].entry.as_mut(),
            None => self.deep.iter_mut().find(|e| e.key == key),
        };
        entry.map(|e| &mut e.value)
    }

    /// Every registration, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (KeyExpr<'_>, &V)> {
        self.nodes
            .iter()
            .filter_map(|node| node.entry.as_ref())
            .chain(&self.deep)
            .map(|e| (e.key.as_key_expr(), &e.value))
    }

    /// Calls `f` for every registered expression that intersects `query`.
    pub fn for_each_intersecting<'a>(
        &'a self,
        query: KeyExpr<'_>,
        mut f: impl FnMut(KeyExpr<'a>, &'a V),
    ) {
        self.run::<Intersecting>(query, &mut f);
    }

    /// Calls `f` for every registered expression that includes `query`.
    pub fn for_each_including<'a>(
        &'a self,
        query: KeyExpr<'_>,
        mut f: impl FnMut(KeyExpr<'a>, &'a V),
    ) {
        self.run::<Including>(query, &mut f);
    }

    /// Calls `f` for every registered expression that `query` includes.
    pub fn for_each_included_by<'a>(
        &'a self,
        query: KeyExpr<'_>,
        mut f: impl FnMut(KeyExpr<'a>, &'a V),
    ) {
        self.run::<IncludedBy>(query, &mut f);
    }

    /// The registered expressions that intersect `query`, with their values.
    pub fn intersecting(&self, query: KeyExpr<'_>) -> Vec<(KeyExpr<'_>, &V)> {
        let mut found = Vec::new();
        self.for_each_intersecting(query, |key, value| found.push((key, value)));
        found
    }

    /// The registered expressions that include `query`, with their values.
    pub fn including(&self, query: KeyExpr<'_>) -> Vec<(KeyExpr<'_>, &V)> {
        let mut found = Vec::new();
        self.for_each_including(query, |key, value| found.push((key, value)));
        found
    }

    /// The registered expressions that `query` includes, with their values.
    pub fn included_by(&self, query: KeyExpr<'_>) -> Vec<(KeyExpr<'_>, &V)> {
        let mut found = Vec::new();
        self.for_each_included_by(query, |key, value| found.push((key, value)));
        found
    }

    /// Dispatches a query by its length: the tree walk with a one-word or a
    /// four-word bit set, or a check of every registration for longer queries.
    fn run<'a, R: Relation>(&'a self, query: KeyExpr<'_>, f: &mut impl FnMut(KeyExpr<'a>, &'a V)) {
        match query.chunks().count() {
            0..64 => self.walk::<R, 1, 64>(query, f),
            64..256 => self.walk::<R, 4, 256>(query, f),
            _ => {
                for node in &self.nodes {
                    if let Some(e) = &node.entry {
                        if R::holds(e.key.as_key_expr(), query) {
                            f(e.key.as_key_expr(), &e.value);
                        }
                    }
                }
            }
        }
        for e in &self.deep {
            if R::holds(e.key.as_key_expr(), query) {
                f(e.key.as_key_expr(), &e.value);
            }
        }
    }

    fn child(&self, node: NodeId, chunk: &str) -> Option<NodeId> {
        self.nodes[node as usize].children.as_ref()?.get(chunk)
    }

    /// The tree node of exactly `key`, if the path exists.
    fn find(&self, key: KeyExpr<'_>) -> Option<NodeId> {
        if key.chunks().count() > MAX_TREE_DEPTH {
            return None;
        }
        key.chunks()
            .try_fold(ROOT, |node, chunk| self.child(node, chunk))
    }

    fn add_child(&mut self, parent: NodeId, chunk: &str) -> NodeId {
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.nodes.push(Node::new());
                // Keep room to free every node later without allocating.
                self.free.reserve(self.nodes.len() - self.free.len());
                NodeId::try_from(self.nodes.len() - 1).unwrap_or(NodeId::MAX)
            }
        };
        self.nodes[parent as usize]
            .children
            .get_or_insert_with(Box::default)
            .insert(chunk, id);
        id
    }

    /// Removes the entry at the end of `chunks` below `node`, freeing the nodes
    /// left vacant on the way back up. Recursion depth is at most `MAX_TREE_DEPTH`.
    fn remove_below(&mut self, node: NodeId, chunks: &mut Chunks<'_>) -> Option<V> {
        let Some(chunk) = chunks.next() else {
            let entry = self.nodes[node as usize].entry.take()?;
            self.len -= 1;
            return Some(entry.value);
        };
        let child = self.child(node, chunk)?;
        let value = self.remove_below(child, chunks)?;
        if self.nodes[child as usize].is_vacant() {
            let parent = &mut self.nodes[node as usize];
            if let Some(children) = parent.children.as_mut() {
                children.remove(chunk);
                if children.is_empty() {
                    parent.children = None;
                }
            }
            self.free.push(child);
        }
        Some(value)
    }
}

impl<V: core::fmt::Debug> core::fmt::Debug for KeyExprIndex<V> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}
