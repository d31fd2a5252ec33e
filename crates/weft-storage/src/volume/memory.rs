//! A volume in memory.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{Entry, Volume, VolumeError};

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

    fn scan(&self, prefix: &str) -> Result<Vec<(String, Entry)>, VolumeError> {
        let map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        Ok(map
            .range(prefix.to_string()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    }
}
