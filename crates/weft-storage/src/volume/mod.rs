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

/// A store of entries by key.
pub trait Volume: Send + Sync {
    /// The entry of `key`.
    fn load(&self, key: &str) -> Result<Option<Entry>, VolumeError>;
    /// Replaces the entry of `key`.
    fn store(&self, key: &str, entry: &Entry) -> Result<(), VolumeError>;
    /// Every entry whose key starts with `prefix`, in key order.
    fn scan(&self, prefix: &str) -> Result<Vec<(String, Entry)>, VolumeError>;
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
        // Reopened: the entries are still there.
        let again = SqliteVolume::open(&path).unwrap();
        assert_eq!(again.scan("").unwrap().len(), 3);
        let _ = std::fs::remove_file(&path);
    }
}
