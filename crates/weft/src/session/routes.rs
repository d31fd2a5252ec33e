//! Routes already computed, by key: where data on a key goes. Computing a route walks the
//! declarations; a message on a key seen before finds it here instead.
//!
//! Three caches: this session's subscribers matching a key (`local`), the faces data
//! published here goes to (`remote`), and, in a router, the faces data received goes on
//! to (`forward`). Each holds at most [`ROUTE_CACHE_MAX`] keys; beyond, a new route takes
//! the place of one chosen at random (so that a publisher cycling over more keys than
//! that still finds most of them: forgetting the oldest, or everything, would find none).
//! Everything is forgotten whenever declarations, interests or faces change, and the
//! epoch counts those changes, so that routes kept elsewhere (a publisher's own, an I/O
//! thread's last one) are known stale without taking the session lock.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::declared::Traffic;
use super::face_transport::FaceTransport;
use super::{Callback, FastMap};
use crate::api::SharedKey;

/// Routes cached at most, per cache. A route costs about 100 bytes, so a full cache
/// holds about 6 MiB.
pub(crate) const ROUTE_CACHE_MAX: usize = 1 << 16;

/// A route: the faces data goes to.
pub(crate) type FaceRoute = Arc<[Arc<dyn FaceTransport>]>;

/// One face a router forwards data on a key to, with the traffic counters of that face's
/// key expressions matching the key (what drew the data there).
pub(crate) struct ForwardTarget {
    /// The face.
    pub(crate) face: Arc<dyn FaceTransport>,
    /// Its declarations' counters.
    pub(crate) drawn_by: Box<[Arc<Traffic>]>,
}

/// A router's route: where data received on a key goes on to.
pub(crate) type ForwardRoute = Arc<[ForwardTarget]>;

/// A map of at most [`ROUTE_CACHE_MAX`] entries (`capacity` in tests): a new entry in a
/// full map replaces one chosen at random.
pub(crate) struct Bounded<K, V> {
    /// Each key's value and its place in `keys`.
    map: FastMap<K, (V, usize)>,
    /// The keys, for choosing one at random.
    keys: Vec<K>,
    capacity: usize,
    /// The state of the generator choosing what to replace (xorshift).
    random: u64,
}

impl<K: Hash + Eq + Clone, V: Clone> Bounded<K, V> {
    fn new() -> Self {
        Self::with_capacity(ROUTE_CACHE_MAX)
    }

    fn with_capacity(capacity: usize) -> Self {
        Self {
            map: FastMap::default(),
            keys: Vec::new(),
            capacity: capacity.max(1),
            random: 0x9e37_79b9_7f4a_7c15,
        }
    }

    /// The value for `key`, with the stored key.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get_key_value(key).map(|(k, (v, _))| (k, v))
    }

    /// Keeps `value` for `key`, in place of an entry chosen at random if the map is full.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        if let Some((old, _)) = self.map.get_mut(&key) {
            *old = value;
            return;
        }
        if self.keys.len() >= self.capacity {
            let at = (self.next_random() % self.keys.len() as u64) as usize;
            let gone = self.keys.swap_remove(at);
            self.map.remove(&gone);
            if let Some(moved) = self.keys.get(at) {
                if let Some((_, place)) = self.map.get_mut(moved) {
                    *place = at;
                }
            }
        }
        self.map.insert(key.clone(), (value, self.keys.len()));
        self.keys.push(key);
    }

    fn clear(&mut self) {
        self.map.clear();
        self.keys.clear();
    }

    /// Entries held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }

    fn next_random(&mut self) -> u64 {
        let mut x = self.random;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.random = x;
        x
    }
}

/// The session's route caches and the epoch of their contents.
pub(crate) struct RouteCache {
    /// This session's subscribers matching a key, for data from other nodes.
    pub(crate) local: Bounded<SharedKey, Arc<[Callback]>>,
    /// This session's subscribers matching a key, for its own publications.
    pub(crate) own_local: Bounded<SharedKey, Arc<[Callback]>>,
    /// The faces data published on a key goes to.
    pub(crate) remote: Bounded<SharedKey, FaceRoute>,
    /// Router mode: the faces data received on a key is forwarded to (its source
    /// excepted).
    pub(crate) forward: Bounded<SharedKey, ForwardRoute>,
    epoch: Arc<AtomicU64>,
}

impl RouteCache {
    /// Empty caches counting their changes in `epoch` (shared with whoever checks it
    /// without the session lock).
    pub(crate) fn new(epoch: Arc<AtomicU64>) -> Self {
        Self {
            local: Bounded::new(),
            own_local: Bounded::new(),
            remote: Bounded::new(),
            forward: Bounded::new(),
            epoch,
        }
    }

    /// Forgets every route (declarations, interests or faces changed), and starts a new
    /// epoch.
    pub(crate) fn changed(&mut self) {
        self.local.clear();
        self.own_local.clear();
        self.remote.clear();
        self.forward.clear();
        self.epoch.fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_forgets_everything() {
        let epoch = Arc::new(AtomicU64::new(0));
        let mut cache = RouteCache::new(epoch.clone());
        let empty: FaceRoute = Arc::new([]);
        cache.forward.insert(SharedKey::from("k"), Arc::new([]));
        cache.remote.insert(SharedKey::from("k"), empty);
        cache.changed();
        assert!(cache.forward.get("k").is_none());
        assert!(cache.remote.get("k").is_none());
        assert_eq!(epoch.load(Ordering::Acquire), 1);
    }

    #[test]
    fn a_full_cache_replaces_one_entry_and_keeps_the_others_findable() {
        let mut cache: Bounded<String, usize> = Bounded::with_capacity(100);
        for n in 0..100 {
            cache.insert(n.to_string(), n);
        }
        cache.insert("one more".into(), 100);
        assert_eq!(cache.len(), 100);
        assert_eq!(cache.get("one more").map(|(_, v)| *v), Some(100));
        let kept = (0..100)
            .filter(|n| cache.get(&n.to_string()).is_some())
            .count();
        assert_eq!(kept, 99, "exactly one entry was replaced");
        // Every key kept still maps to its own value after the moves.
        for n in 0..100 {
            if let Some((k, v)) = cache.get(&n.to_string()) {
                assert_eq!((k.as_str(), *v), (n.to_string().as_str(), n));
            }
        }
        cache.insert("one more".into(), 7);
        assert_eq!(
            cache.get("one more").map(|(_, v)| *v),
            Some(7),
            "updated in place"
        );
        assert_eq!(cache.len(), 100);
    }

    #[test]
    fn cycling_over_more_keys_than_it_holds_still_finds_many() {
        let mut cache: Bounded<u32, u32> = Bounded::with_capacity(1000);
        let (mut hits, mut lookups) = (0, 0);
        for round in 0..10 {
            for key in 0..1500u32 {
                if round >= 5 {
                    lookups += 1;
                    hits += usize::from(cache.get(&key).is_some());
                }
                if cache.get(&key).is_none() {
                    cache.insert(key, key);
                }
            }
        }
        // Starting over when full (or dropping the oldest) would find none of them.
        assert!(hits * 3 > lookups, "{hits} hits of {lookups}");
    }
}
