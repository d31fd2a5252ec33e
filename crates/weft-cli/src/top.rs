//! The table `weft top` shows: samples per key counted over one refresh, turned into
//! rates (time passed in), the busiest keys first, with the publishers and subscribers the
//! routers know for each key.

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
    /// `declared(key)` tells the publishers and subscribers of a key.
    pub fn take_rows(
        &mut self,
        elapsed: Duration,
        declared: impl Fn(&str) -> (usize, usize),
    ) -> Vec<Row> {
        let seconds = elapsed.as_secs_f64().max(1e-9);
        let mut rows: Vec<Row> = self
            .by_key
            .drain()
            .map(|(key, (n, bytes))| {
                let (publishers, subscribers) = declared(&key);
                Row {
                    msgs_per_s: n as f64 / seconds,
                    bytes_per_s: bytes as f64 / seconds,
                    mean_size: bytes as f64 / n.max(1) as f64,
                    publishers,
                    subscribers,
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
        let rows = c.take_rows(Duration::from_secs(2), |k| (usize::from(k == "a"), 2));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].key, "a");
        assert!((rows[0].msgs_per_s - 25.0).abs() < 1e-9);
        assert!((rows[0].bytes_per_s - 2_500.0).abs() < 1e-9);
        assert!((rows[0].mean_size - 100.0).abs() < 1e-9);
        assert_eq!((rows[0].publishers, rows[0].subscribers), (1, 2));
        assert_eq!(rows[1].key, "b");
        assert!(
            c.take_rows(Duration::from_secs(1), |_| (0, 0)).is_empty(),
            "started over"
        );
        for i in 0..MAX_KEYS + 5 {
            c.add(&format!("k/{i}"), 1);
        }
        let rows = c.take_rows(Duration::from_secs(1), |_| (0, 0));
        assert_eq!(rows.len(), MAX_KEYS + 1);
        let other = rows.iter().find(|r| r.key == OTHER_KEYS).unwrap();
        assert!((other.msgs_per_s - 5.0).abs() < 1e-9);
    }
}
