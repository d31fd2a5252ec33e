//! A volume in memory.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Mutex;

use super::{fill_page, Entry, Volume, VolumeError};

/// Entries in an ordered map, lost when the process ends.
#[derive(Debug, Default)]
pub struct MemoryVolume {
    entries: Mutex<BTreeMap<String, Entry>>,
}

impl Volume for MemoryVolume {
    fn load(&self, key: &str) -> Result<Option<Entry>, VolumeError> {
        Ok(self
            .entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned())
    }

    fn store(&self, key: &str, entry: &Entry) -> Result<(), VolumeError> {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.to_string(), entry.clone());
        Ok(())
    }

    fn scan_page(
        &self,
        prefix: &str,
        after: Option<&str>,
        max_bytes: usize,
    ) -> Result<Vec<(String, Entry)>, VolumeError> {
        let map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let from = after.map_or_else(
            || Bound::Included(prefix.to_string()),
            |a| Bound::Excluded(a.to_string()),
        );
        let rows = map
            .range((from, Bound::Unbounded))
            .map(|(k, v)| Ok((k.clone(), v.clone())));
        fill_page(prefix, max_bytes, rows)
    }
}
