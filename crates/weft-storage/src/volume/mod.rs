//! Volumes: where a storage keeps its entries.

mod memory;
mod sqlite;

pub use memory::MemoryVolume;
pub use sqlite::SqliteVolume;

use thiserror::Error;

/// A failure of a volume.
#[derive(Debug, Error)]
pub enum VolumeError {
    /// The SQLite database failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The directory of the database could not be created.
    #[error("cannot create the directory {path}: {source}")]
    Directory {
        /// The directory.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The latest state of a key: a value, or a deletion (kept so that older puts lose).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The value (empty for a deletion).
    pub payload: Vec<u8>,
    /// Its encoding.
    pub encoding: String,
    /// NTP64 time of the timestamp.
    pub time: u64,
    /// ZenohID of the timestamp's clock.
    pub clock: u128,
    /// Whether this is a deletion.
    pub deleted: bool,
}

impl Entry {
    /// The (time, clock) pair that orders entries: last writer wins.
    pub const fn order(&self) -> (u64, u128) {
        (self.time, self.clock)
    }
}

/// Payload bytes a storage reads from its volume at once while answering a query (a page
/// holds at least one entry): a query over a large volume holds one page, not a copy of
/// every matching entry.
pub const PAGE_BYTES: usize = 1 << 20;

/// A store of entries by key.
pub trait Volume: Send + Sync {
    /// The entry of `key`.
    fn load(&self, key: &str) -> Result<Option<Entry>, VolumeError>;
    /// Replaces the entry of `key`.
    fn store(&self, key: &str, entry: &Entry) -> Result<(), VolumeError>;
    /// The entries whose key starts with `prefix` and comes after `after` (from the first
    /// when `None`), in key order: as many as hold about `max_bytes` of payload, at least
    /// one. Empty once none is left.
    fn scan_page(
        &self,
        prefix: &str,
        after: Option<&str>,
        max_bytes: usize,
    ) -> Result<Vec<(String, Entry)>, VolumeError>;

    /// Every entry whose key starts with `prefix`, in key order, page by page.
    fn scan(&self, prefix: &str) -> Result<Vec<(String, Entry)>, VolumeError> {
        let mut all: Vec<(String, Entry)> = Vec::new();
        loop {
            let after = all.last().map(|(k, _)| k.as_str());
            let page = self.scan_page(prefix, after, PAGE_BYTES)?;
            if page.is_empty() {
                return Ok(all);
            }
            all.extend(page);
        }
    }
}

/// Adds the entries of `rows` (in key order, from a first key at or after `prefix`) that
/// start with `prefix` to a page, until one does not or the page holds `max_bytes`.
fn fill_page(
    prefix: &str,
    max_bytes: usize,
    rows: impl Iterator<Item = Result<(String, Entry), VolumeError>>,
) -> Result<Vec<(String, Entry)>, VolumeError> {
    let mut page = Vec::new();
    let mut bytes = 0;
    for row in rows {
        let (key, entry) = row?;
        if !key.starts_with(prefix) {
            break;
        }
        bytes += entry.payload.len() + key.len();
        page.push((key, entry));
        if bytes >= max_bytes {
            break;
        }
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(v: &str, time: u64, deleted: bool) -> Entry {
        Entry {
            payload: v.as_bytes().to_vec(),
            encoding: "text/plain".into(),
            time,
            clock: 0xABCD_0000_0000_0000_0000_0000_0000_0001,
            deleted,
        }
    }

    fn exercise(v: &dyn Volume) {
        assert_eq!(v.load("a/b").unwrap(), None);
        v.store("a/b", &entry("one", 7_710_826_898_753_645_360, false))
            .unwrap();
        v.store("a/c", &entry("two", 2, true)).unwrap();
        v.store("b/a", &entry("three", 3, false)).unwrap();
        assert_eq!(
            v.load("a/b").unwrap(),
            Some(entry("one", 7_710_826_898_753_645_360, false))
        );
        v.store("a/b", &entry("uno", u64::MAX, false)).unwrap();
        assert_eq!(v.load("a/b").unwrap().unwrap().time, u64::MAX);
        let keys: Vec<String> = v.scan("a").unwrap().into_iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["a/b", "a/c"]);
        assert_eq!(v.scan("").unwrap().len(), 3);
        pages(v);
    }

    /// Pages of a scan: bounded by bytes, at least one entry, contiguous, in key order,
    /// never past the prefix.
    fn pages(v: &dyn Volume) {
        for i in 0..50 {
            v.store(&format!("p/{i:02}"), &entry(&"x".repeat(100), 1, false))
                .unwrap();
        }
        v.store("q", &entry("after the prefix", 1, false)).unwrap();
        v.store("p", &entry("before the prefix's children", 1, false))
            .unwrap();
        let mut seen = Vec::new();
        let mut sizes = Vec::new();
        loop {
            let page = v
                .scan_page("p/", seen.last().map(String::as_str), 450)
                .unwrap();
            if page.is_empty() {
                break;
            }
            sizes.push(page.len());
            seen.extend(page.into_iter().map(|(k, _)| k));
        }
        let expected: Vec<String> = (0..50).map(|i| format!("p/{i:02}")).collect();
        assert_eq!(seen, expected);
        // 104 bytes an entry: the fifth reaches 450.
        assert!(
            sizes[..sizes.len() - 1].iter().all(|&n| n == 5),
            "{sizes:?}"
        );
        // A budget below one entry still makes progress.
        assert_eq!(v.scan_page("p/", None, 1).unwrap().len(), 1);
        assert_eq!(v.scan("p/").unwrap().len(), 50);
    }

    #[test]
    fn memory_volume() {
        exercise(&MemoryVolume::default());
    }

    #[test]
    fn sqlite_volume() {
        let path = std::env::temp_dir().join(format!("weft-volume-{}.sqlite3", std::process::id()));
        let _ = std::fs::remove_file(&path);
        exercise(&SqliteVolume::open(&path).unwrap());
        // Reopened: the entries are still there (three, and the 52 of the pages' check).
        let again = SqliteVolume::open(&path).unwrap();
        assert_eq!(again.scan("").unwrap().len(), 55);
        let _ = std::fs::remove_file(&path);
    }
}
