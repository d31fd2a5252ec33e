//! What connected nodes declared of one kind (subscribers, queryables, tokens): per face, by
//! entity id, and for all faces together in one index by key expression, so that the
//! faces a message or a query goes to are found without visiting every face.
//!
//! A face's table and the index are changed together, only through [`DeclaredIndex`]'s
//! methods, so that they cannot disagree.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use weft_keyexpr::{KeyExpr, KeyExprIndex, OwnedKeyExpr};
use weft_proto::core::ZenohId;
use weft_proto::network::InterestOptions;

/// The kinds of declared entities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum EntityKind {
    Subscriber,
    Queryable,
    Token,
}

impl EntityKind {
    /// The interest option that asks for this kind's declarations.
    pub(crate) const fn interest(self) -> InterestOptions {
        match self {
            Self::Subscriber => InterestOptions::SUBSCRIBERS,
            Self::Queryable => InterestOptions::QUERYABLES,
            Self::Token => InterestOptions::TOKENS,
        }
    }
}

/// What a router forwarded because of one face's declared key expression: messages and
/// payload bytes sent to the face for it, and messages dropped on the way (a full queue,
/// a closed link). A message matching two of a face's key expressions counts for both.
///
/// Counted on every message forwarded, so kept cheap: each I/O thread has a slot of its
/// own that only it writes (plain loads and stores, no locked instruction); other threads
/// share one slot with atomic additions. Reading sums the slots.
#[derive(Debug)]
pub(crate) struct Traffic {
    per_io_thread: Box<[Tally]>,
    shared: Tally,
}

/// One slot of [`Traffic`].
#[derive(Debug, Default)]
struct Tally {
    messages: AtomicU64,
    bytes: AtomicU64,
    dropped: AtomicU64,
}

/// Adds `n` to a counter only the calling thread writes.
fn add_own(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Ordering::Relaxed) + n, Ordering::Relaxed);
}

impl Default for Traffic {
    fn default() -> Self {
        Self {
            per_io_thread: (0..crate::transport::io_thread_count())
                .map(|_| Tally::default())
                .collect(),
            shared: Tally::default(),
        }
    }
}

impl Traffic {
    /// A message of `bytes` payload bytes went to the face.
    pub(crate) fn sent(&self, bytes: u64) {
        match self.own_slot() {
            Some(own) => {
                add_own(&own.messages, 1);
                add_own(&own.bytes, bytes);
            }
            None => {
                self.shared.messages.fetch_add(1, Ordering::Relaxed);
                self.shared.bytes.fetch_add(bytes, Ordering::Relaxed);
            }
        }
    }

    /// A message for the face was dropped.
    pub(crate) fn dropped(&self) {
        match self.own_slot() {
            Some(own) => add_own(&own.dropped, 1),
            None => {
                self.shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The slot of the calling I/O thread (none on other threads).
    fn own_slot(&self) -> Option<&Tally> {
        crate::transport::current_io_thread().and_then(|i| self.per_io_thread.get(i))
    }

    /// (messages, bytes, dropped) so far.
    pub(crate) fn read(&self) -> (u64, u64, u64) {
        std::iter::once(&self.shared)
            .chain(self.per_io_thread.iter())
            .fold((0, 0, 0), |(m, b, d), t| {
                (
                    m + t.messages.load(Ordering::Relaxed),
                    b + t.bytes.load(Ordering::Relaxed),
                    d + t.dropped.load(Ordering::Relaxed),
                )
            })
    }
}

/// A face that declared a key expression: how many times, and its traffic for it.
#[derive(Debug)]
struct Declarer {
    face: ZenohId,
    count: u32,
    traffic: Arc<Traffic>,
}

/// One face's declarations of one kind.
#[derive(Debug, Default)]
pub(crate) struct FaceDeclarations {
    /// Declared with an entity id.
    pub(crate) by_id: HashMap<u32, OwnedKeyExpr>,
    /// Declared without one (entity id 0: answers to Current interests), by key.
    pub(crate) current: Vec<OwnedKeyExpr>,
}

impl FaceDeclarations {
    /// Every key declared, those with an id first.
    #[cfg(test)]
    fn keys(&self) -> impl Iterator<Item = &OwnedKeyExpr> {
        self.by_id.values().chain(&self.current)
    }

    /// Whether nothing is declared.
    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.by_id.is_empty() && self.current.is_empty()
    }
}

/// What every face declared, indexed by key expression, one index per kind.
#[derive(Default)]
pub(crate) struct Declared {
    /// The faces' subscribers.
    pub(crate) subscribers: DeclaredIndex,
    /// The faces' queryables.
    pub(crate) queryables: DeclaredIndex,
    /// The faces' liveliness tokens.
    pub(crate) tokens: DeclaredIndex,
}

/// Every face's declarations of one kind, by key expression: for each key, the faces that
/// declared it, how many times, and the traffic each one drew.
#[derive(Default)]
pub(crate) struct DeclaredIndex {
    index: KeyExprIndex<Vec<Declarer>>,
}

impl DeclaredIndex {
    /// Records a declaration of `key` by `face` (whose table is `decls`), with an entity
    /// id or without. A declaration that reuses an id replaces the one it had.
    pub(crate) fn declare(
        &mut self,
        face: ZenohId,
        decls: &mut FaceDeclarations,
        id: Option<u32>,
        key: OwnedKeyExpr,
    ) {
        self.add(face, key.as_key_expr());
        match id {
            Some(id) => {
                if let Some(old) = decls.by_id.insert(id, key) {
                    self.remove(face, old.as_key_expr(), 1);
                }
            }
            None => decls.current.push(key),
        }
    }

    /// Forgets the declaration `id` of `face`, returning its key if there was one.
    pub(crate) fn undeclare_id(
        &mut self,
        face: ZenohId,
        decls: &mut FaceDeclarations,
        id: u32,
    ) -> Option<OwnedKeyExpr> {
        let key = decls.by_id.remove(&id)?;
        self.remove(face, key.as_key_expr(), 1);
        Some(key)
    }

    /// Forgets every declaration of `key` by `face`, with an id or without.
    pub(crate) fn undeclare_key(&mut self, face: ZenohId, decls: &mut FaceDeclarations, key: &str) {
        let before = decls.by_id.len() + decls.current.len();
        decls.current.retain(|k| k.as_str() != key);
        decls.by_id.retain(|_, k| k.as_str() != key);
        let removed = before - decls.by_id.len() - decls.current.len();
        if removed > 0 {
            if let Ok(k) = KeyExpr::new(key) {
                self.remove(face, k, removed as u32);
            }
        }
    }

    /// Forgets everything `face` declared (it is gone), emptying its table.
    pub(crate) fn forget_face(&mut self, face: ZenohId, decls: &mut FaceDeclarations) {
        for key in decls
            .by_id
            .drain()
            .map(|(_, k)| k)
            .chain(decls.current.drain(..))
        {
            self.remove(face, key.as_key_expr(), 1);
        }
    }

    /// The faces that declared a key expression intersecting `key`, each once, in order.
    pub(crate) fn faces_intersecting(&self, key: KeyExpr<'_>) -> Vec<ZenohId> {
        let mut faces = Vec::new();
        self.index.for_each_intersecting(key, |_, declared_by| {
            faces.extend(declared_by.iter().map(|d| d.face));
        });
        faces.sort_unstable();
        faces.dedup();
        faces
    }

    /// As [`Self::faces_intersecting`], each face with the traffic counters of its key
    /// expressions intersecting `key`.
    pub(crate) fn faces_and_traffic_intersecting(
        &self,
        key: KeyExpr<'_>,
    ) -> Vec<(ZenohId, Vec<Arc<Traffic>>)> {
        let mut found: Vec<(ZenohId, Arc<Traffic>)> = Vec::new();
        self.index.for_each_intersecting(key, |_, declared_by| {
            found.extend(declared_by.iter().map(|d| (d.face, d.traffic.clone())));
        });
        found.sort_unstable_by_key(|(face, _)| *face);
        let mut faces: Vec<(ZenohId, Vec<Arc<Traffic>>)> = Vec::new();
        for (face, traffic) in found {
            match faces.last_mut() {
                Some((last, all)) if *last == face => all.push(traffic),
                _ => faces.push((face, vec![traffic])),
            }
        }
        faces
    }

    /// The traffic `face` drew with each of the key expressions in `decls` (its table),
    /// each key once, in order: (key, messages, bytes, dropped).
    pub(crate) fn traffic_of(
        &self,
        face: ZenohId,
        decls: &FaceDeclarations,
    ) -> Vec<(String, u64, u64, u64)> {
        let mut keys: Vec<&OwnedKeyExpr> = decls.by_id.values().chain(&decls.current).collect();
        keys.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
        keys.dedup_by(|a, b| a.as_str() == b.as_str());
        keys.into_iter()
            .filter_map(|k| {
                let declarer = self
                    .index
                    .get(k.as_key_expr())?
                    .iter()
                    .find(|d| d.face == face)?;
                let (messages, bytes, dropped) = declarer.traffic.read();
                Some((k.as_str().to_owned(), messages, bytes, dropped))
            })
            .collect()
    }

    /// Every key declared that intersects `key`, once per declaration (a key two faces
    /// declared, or one face twice, comes as many times).
    pub(crate) fn declarations_intersecting(&self, key: KeyExpr<'_>) -> Vec<String> {
        let mut keys = Vec::new();
        self.index.for_each_intersecting(key, |declared, by| {
            let count: u32 = by.iter().map(|d| d.count).sum();
            keys.extend((0..count).map(|_| declared.as_str().to_string()));
        });
        keys
    }

    /// Number of distinct key expressions declared.
    #[cfg(test)]
    pub(crate) fn keys(&self) -> usize {
        self.index.len()
    }

    fn add(&mut self, face: ZenohId, key: KeyExpr<'_>) {
        let first = || Declarer {
            face,
            count: 1,
            traffic: Arc::default(),
        };
        match self.index.get_mut(key) {
            Some(faces) => match faces.iter_mut().find(|d| d.face == face) {
                Some(d) => d.count += 1,
                None => faces.push(first()),
            },
            None => {
                self.index.insert(key, vec![first()]);
            }
        }
    }

    fn remove(&mut self, face: ZenohId, key: KeyExpr<'_>, count: u32) {
        let Some(faces) = self.index.get_mut(key) else {
            return;
        };
        if let Some(at) = faces.iter().position(|d| d.face == face) {
            let left = faces[at].count.saturating_sub(count);
            if left == 0 {
                faces.swap_remove(at);
            } else {
                faces[at].count = left;
            }
        }
        if faces.is_empty() {
            self.index.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zid(n: u8) -> ZenohId {
        ZenohId::from_le_slice(&[n]).unwrap()
    }

    fn key(s: &str) -> OwnedKeyExpr {
        KeyExpr::new(s).unwrap().to_owned_key_expr()
    }

    fn found(index: &DeclaredIndex, k: &str) -> Vec<ZenohId> {
        index.faces_intersecting(KeyExpr::new(k).unwrap())
    }

    #[test]
    fn faces_are_found_by_intersection_each_once() {
        let mut index = DeclaredIndex::default();
        let (mut a, mut b) = (FaceDeclarations::default(), FaceDeclarations::default());
        index.declare(zid(1), &mut a, Some(1), key("robot/*/pose"));
        index.declare(zid(1), &mut a, Some(2), key("robot/**"));
        index.declare(zid(2), &mut b, None, key("robot/7/pose"));
        index.declare(zid(2), &mut b, None, key("camera/**"));
        assert_eq!(found(&index, "robot/7/pose"), [zid(1), zid(2)]);
        assert_eq!(found(&index, "robot/8/pose"), [zid(1)]);
        assert_eq!(found(&index, "camera/front"), [zid(2)]);
        assert_eq!(found(&index, "**"), [zid(1), zid(2)]);
        assert!(found(&index, "lidar").is_empty());
    }

    #[test]
    fn an_id_declared_again_replaces_its_key() {
        let mut index = DeclaredIndex::default();
        let mut a = FaceDeclarations::default();
        index.declare(zid(1), &mut a, Some(1), key("a/x"));
        index.declare(zid(1), &mut a, Some(1), key("a/y"));
        assert!(found(&index, "a/x").is_empty());
        assert_eq!(found(&index, "a/y"), [zid(1)]);
        assert_eq!(index.keys(), 1);
    }

    #[test]
    fn a_key_declared_twice_stays_until_both_are_undeclared() {
        let mut index = DeclaredIndex::default();
        let mut a = FaceDeclarations::default();
        index.declare(zid(1), &mut a, Some(1), key("k"));
        index.declare(zid(1), &mut a, Some(2), key("k"));
        assert_eq!(index.undeclare_id(zid(1), &mut a, 1), Some(key("k")));
        assert_eq!(found(&index, "k"), [zid(1)]);
        assert_eq!(index.undeclare_id(zid(1), &mut a, 2), Some(key("k")));
        assert!(found(&index, "k").is_empty());
        assert_eq!(index.undeclare_id(zid(1), &mut a, 2), None);
        assert_eq!(index.keys(), 0);
    }

    #[test]
    fn undeclaring_by_key_removes_every_declaration_of_it() {
        let mut index = DeclaredIndex::default();
        let mut a = FaceDeclarations::default();
        index.declare(zid(1), &mut a, Some(1), key("k"));
        index.declare(zid(1), &mut a, None, key("k"));
        index.declare(zid(1), &mut a, None, key("other"));
        index.undeclare_key(zid(1), &mut a, "k");
        assert!(found(&index, "k").is_empty());
        assert_eq!(found(&index, "other"), [zid(1)]);
        assert_eq!(a.keys().count(), 1);
    }

    #[test]
    fn declarations_are_listed_once_per_declaration() {
        let mut index = DeclaredIndex::default();
        let (mut a, mut b) = (FaceDeclarations::default(), FaceDeclarations::default());
        index.declare(zid(1), &mut a, Some(1), key("lv/a"));
        index.declare(zid(2), &mut b, Some(1), key("lv/a"));
        index.declare(zid(2), &mut b, Some(2), key("lv/b/c"));
        index.declare(zid(2), &mut b, Some(3), key("other"));
        let mut found = index.declarations_intersecting(KeyExpr::new("lv/**").unwrap());
        found.sort();
        assert_eq!(found, ["lv/a", "lv/a", "lv/b/c"]);
        index.forget_face(zid(1), &mut a);
        let found = index.declarations_intersecting(KeyExpr::new("lv/a").unwrap());
        assert_eq!(found, ["lv/a"]);
    }

    #[test]
    fn a_face_forgotten_leaves_the_others() {
        let mut index = DeclaredIndex::default();
        let (mut a, mut b) = (FaceDeclarations::default(), FaceDeclarations::default());
        for i in 0..100 {
            index.declare(zid(1), &mut a, Some(i), key(&format!("s/{i}")));
        }
        index.declare(zid(1), &mut a, None, key("shared/**"));
        index.declare(zid(2), &mut b, Some(1), key("shared/**"));
        index.forget_face(zid(1), &mut a);
        assert!(a.is_empty());
        assert_eq!(index.keys(), 1);
        assert_eq!(found(&index, "shared/x"), [zid(2)]);
        assert!(found(&index, "s/5").is_empty());
    }
}
