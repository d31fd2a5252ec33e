//! The table `weft top` shows: samples per key counted over one refresh, turned into
//! rates (time passed in), the busiest keys first, with the publishers and subscribers the
//! routers know for each key, and the drops their subscriptions' counters tell.

use std::collections::HashMap;
use std::time::Duration;

/// Keys counted at most per refresh: beyond, samples count under [`OTHER_KEYS`] (the table
/// stays bounded whatever the key space).
pub const MAX_KEYS: usize = 10_000;

/// The row samples on keys beyond [`MAX_KEYS`] count under.
pub const OTHER_KEYS: &str = "(other keys)";

/// Samples counted since the last refresh.
#[derive(Debug, Default)]
pub struct Counts {
    by_key: HashMap<String, (u64, u64)>,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The key.
    pub key: String,
    /// Samples per second.
    pub msgs_per_s: f64,
    /// Bytes per second.
    pub bytes_per_s: f64,
    /// Mean sample size, in bytes.
    pub mean_size: f64,
    /// Nodes that declared a publisher on a key expression matching the key.
    pub publishers: usize,
    /// Nodes that declared a subscriber on a key expression matching the key (this tool
    /// aside).
    pub subscribers: usize,
    /// Messages per second the routers dropped for subscriptions matching the key (a
    /// subscription on `robot/**` counts for every key it matches).
    pub drops_per_s: f64,
}

/// What a key's row takes from the routers: its publishers, its subscribers, and the
/// drops of its subscriptions since the last refresh.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyContext {
    /// Nodes publishing on a matching key expression.
    pub publishers: usize,
    /// Nodes subscribed to a matching key expression.
    pub subscribers: usize,
    /// Messages dropped for matching subscriptions since the last refresh.
    pub drops: u64,
}

/// Where a subscription lives: the router that counts it, the node that declared it, and
/// its key expression.
pub type SubscriptionId = (String, String, String);

/// The routers' per-subscription drop counters from one refresh to the next: each reading
/// turned into what was dropped since the one before.
#[derive(Debug, Default)]
pub struct SubscriptionDrops {
    last: HashMap<SubscriptionId, u64>,
}

impl SubscriptionDrops {
    /// Takes a reading of every subscription's cumulative `dropped` counter and returns,
    /// per key expression, what was dropped since the last reading. A subscription seen
    /// for the first time counts from zero at the next reading; one whose counter went
    /// back (declared again) counts from its new value.
    pub fn update(&mut self, reading: Vec<(SubscriptionId, u64)>) -> Vec<(String, u64)> {
        let mut since: HashMap<String, u64> = HashMap::new();
        let mut next = HashMap::with_capacity(reading.len());
        for (id, dropped) in reading {
            let delta = match self.last.get(&id) {
                Some(before) if dropped >= *before => dropped - before,
                Some(_) => dropped,
                None => 0,
            };
            if delta > 0 {
                *since.entry(id.2.clone()).or_default() += delta;
            }
            next.insert(id, dropped);
        }
        self.last = next;
        let mut out: Vec<(String, u64)> = since.into_iter().collect();
        out.sort();
        out
    }
}

impl Counts {
    /// A sample of `size` bytes on `key`.
    pub fn add(&mut self, key: &str, size: usize) {
        let known = self.by_key.contains_key(key);
        let key = if known || self.by_key.len() < MAX_KEYS {
            key
        } else {
            OTHER_KEYS
        };
        let entry = match self.by_key.get_mut(key) {
            Some(e) => e,
            None => self.by_key.entry(key.to_string()).or_default(),
        };
        entry.0 += 1;
        entry.1 += size as u64;
    }

    /// The rows for the `elapsed` time counted, busiest first, and starts over.
    /// `context(key)` tells the publishers, subscribers and drops of a key.
    pub fn take_rows(
        &mut self,
        elapsed: Duration,
        context: impl Fn(&str) -> KeyContext,
    ) -> Vec<Row> {
        let seconds = elapsed.as_secs_f64().max(1e-9);
        let mut rows: Vec<Row> = self
            .by_key
            .drain()
            .map(|(key, (n, bytes))| {
                let c = context(&key);
                Row {
                    msgs_per_s: n as f64 / seconds,
                    bytes_per_s: bytes as f64 / seconds,
                    mean_size: bytes as f64 / n.max(1) as f64,
                    publishers: c.publishers,
                    subscribers: c.subscribers,
                    drops_per_s: c.drops as f64 / seconds,
                    key,
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.msgs_per_s
                .total_cmp(&a.msgs_per_s)
                .then_with(|| a.key.cmp(&b.key))
        });
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_per_key_busiest_first_and_bounded() {
        let mut c = Counts::default();
        for _ in 0..50 {
            c.add("a", 100);
        }
        for _ in 0..20 {
            c.add("b", 10);
        }
        let rows = c.take_rows(Duration::from_secs(2), |k| KeyContext {
            publishers: usize::from(k == "a"),
            subscribers: 2,
            drops: 4,
        });
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].key, "a");
        assert!((rows[0].msgs_per_s - 25.0).abs() < 1e-9);
        assert!((rows[0].bytes_per_s - 2_500.0).abs() < 1e-9);
        assert!((rows[0].mean_size - 100.0).abs() < 1e-9);
        assert_eq!((rows[0].publishers, rows[0].subscribers), (1, 2));
        assert!((rows[0].drops_per_s - 2.0).abs() < 1e-9);
        assert_eq!(rows[1].key, "b");
        assert!(
            c.take_rows(Duration::from_secs(1), |_| KeyContext::default())
                .is_empty(),
            "started over"
        );
        for i in 0..MAX_KEYS + 5 {
            c.add(&format!("k/{i}"), 1);
        }
        let rows = c.take_rows(Duration::from_secs(1), |_| KeyContext::default());
        assert_eq!(rows.len(), MAX_KEYS + 1);
        let other = rows.iter().find(|r| r.key == OTHER_KEYS).unwrap();
        assert!((other.msgs_per_s - 5.0).abs() < 1e-9);
    }

    #[test]
    fn subscription_drops_are_told_since_the_last_reading() {
        let id = |router: &str, node: &str, ke: &str| {
            (router.to_owned(), node.to_owned(), ke.to_owned())
        };
        let mut d = SubscriptionDrops::default();
        // First seen: nothing yet.
        assert!(d
            .update(vec![
                (id("r", "a", "robot/**"), 10),
                (id("r", "b", "robot/*"), 0)
            ])
            .is_empty());
        let since = d.update(vec![
            (id("r", "a", "robot/**"), 15),
            (id("r", "b", "robot/*"), 2),
            (id("s", "c", "robot/**"), 7),
        ]);
        assert_eq!(
            since,
            [("robot/*".to_owned(), 2), ("robot/**".to_owned(), 5)]
        );
        // Declared again: its counter starts over.
        let since = d.update(vec![
            (id("r", "a", "robot/**"), 3),
            (id("s", "c", "robot/**"), 9),
        ]);
        assert_eq!(since, [("robot/**".to_owned(), 5)]);
    }
}
