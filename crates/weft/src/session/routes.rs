//! Routes already computed, by key: where data on a key goes. Computing a route walks the
//! declarations; a message on a key seen before finds it here instead.
//!
//! Three caches: this session's subscribers matching a key (`local`), the faces data
//! published here goes to (`remote`), and, in a router, the faces data received goes on
//! to (`forward`). Each holds at most [`ROUTE_CACHE_MAX`] keys and starts over beyond.
//! Everything is forgotten whenever declarations, interests or faces change, and the
//! epoch counts those changes, so that routes kept elsewhere (a publisher's own, an I/O
//! thread's last one) are known stale without taking the session lock.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::face_transport::FaceTransport;
use super::{Callback, FastMap};
use crate::api::SharedKey;

/// Routes cached at most, per cache (keys in use at once: a publisher cycling over more
/// keys than this finds none cached); beyond, the cache starts over. A route costs about
/// 100 bytes, so a full cache holds about 6 MiB.
pub(crate) const ROUTE_CACHE_MAX: usize = 1 << 16;

/// A route: the faces data goes to.
pub(crate) type FaceRoute = Arc<[Arc<dyn FaceTransport>]>;

/// A map of at most [`ROUTE_CACHE_MAX`] entries that starts over when full.
pub(crate) struct Bounded<K, V> {
    map: FastMap<K, V>,
}

impl<K: Hash + Eq, V: Clone> Bounded<K, V> {
    fn new() -> Self {
        Self {
            map: FastMap::default(),
        }
    }

    /// The value for `key`, with the stored key.
    pub(crate) fn get<Q>(&self, key: &Q) -> Option<(&K, &V)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get_key_value(key)
    }

    /// Keeps `value` for `key`, forgetting everything first if the map is full.
    pub(crate) fn insert(&mut self, key: K, value: V) {
        if self.map.len() >= ROUTE_CACHE_MAX {
            self.map.clear();
        }
        self.map.insert(key, value);
    }

    fn clear(&mut self) {
        self.map.clear();
    }
}

/// The session's route caches and the epoch of their contents.
pub(crate) struct RouteCache {
    /// This session's subscribers matching a key.
    pub(crate) local: Bounded<SharedKey, Arc<[Callback]>>,
    /// The faces data published on a key goes to.
    pub(crate) remote: Bounded<String, FaceRoute>,
    /// Router mode: the faces data received on a key is forwarded to (its source
    /// excepted).
    pub(crate) forward: Bounded<SharedKey, FaceRoute>,
    epoch: Arc<AtomicU64>,
}

impl RouteCache {
    /// Empty caches counting their changes in `epoch` (shared with whoever checks it
    /// without the session lock).
    pub(crate) fn new(epoch: Arc<AtomicU64>) -> Self {
        Self {
            local: Bounded::new(),
            remote: Bounded::new(),
            forward: Bounded::new(),
            epoch,
        }
    }

    /// The epoch the cached routes belong to.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Forgets every route (declarations, interests or faces changed), and starts a new
    /// epoch.
    pub(crate) fn changed(&mut self) {
        self.local.clear();
        self.remote.clear();
        self.forward.clear();
        self.epoch.fetch_add(1, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_cache_starts_over_and_a_change_forgets_everything() {
        let epoch = Arc::new(AtomicU64::new(0));
        let mut cache = RouteCache::new(epoch.clone());
        let empty: FaceRoute = Arc::new([]);
        for n in 0..ROUTE_CACHE_MAX {
            cache.forward.insert(n.to_string().into(), empty.clone());
        }
        assert!(cache.forward.get("0").is_some());
        cache
            .forward
            .insert(SharedKey::from("one more"), empty.clone());
        assert!(cache.forward.get("0").is_none(), "a full cache starts over");
        assert!(cache.forward.get("one more").is_some());
        cache.remote.insert("k".into(), empty);
        cache.changed();
        assert!(cache.forward.get("one more").is_none());
        assert!(cache.remote.get("k").is_none());
        assert_eq!(cache.epoch(), 1);
        assert_eq!(epoch.load(Ordering::Acquire), 1);
    }
}
