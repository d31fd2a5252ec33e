//! A persistent volume in an SQLite database (WAL mode: a committed write survives a
//! crash of the process).

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};

use super::{fill_page, Entry, Volume, VolumeError};

/// Entries in one table of an SQLite file.
#[derive(Debug)]
pub struct SqliteVolume {
    db: Mutex<Connection>,
}

impl SqliteVolume {
    /// Opens (or creates) the database at `path`, and its directory if need be.
    pub fn open(path: &Path) -> Result<Self, VolumeError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| VolumeError::Directory {
                path: dir.display().to_string(),
                source,
            })?;
        }
        let db = Connection::open(path)?;
        db.pragma_update(None, "journal_mode", "WAL")?;
        db.pragma_update(None, "synchronous", "NORMAL")?;
        db.execute(
            "CREATE TABLE IF NOT EXISTS entries (
                key TEXT PRIMARY KEY,
                payload BLOB NOT NULL,
                encoding TEXT NOT NULL,
                time INTEGER NOT NULL,
                clock BLOB NOT NULL,
                deleted INTEGER NOT NULL
            )",
            [],
        )?;
        Ok(Self { db: Mutex::new(db) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.db.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn entry(row: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<Entry> {
    let clock: Vec<u8> = row.get(first + 3)?;
    let mut bytes = [0u8; 16];
    let n = clock.len().min(16);
    bytes[..n].copy_from_slice(&clock[..n]);
    Ok(Entry {
        payload: row.get(first)?,
        encoding: row.get(first + 1)?,
        // SQLite integers are signed: the u64 time is stored bit for bit.
        time: row.get::<_, i64>(first + 2)? as u64,
        clock: u128::from_le_bytes(bytes),
        deleted: row.get::<_, i64>(first + 4)? != 0,
    })
}

impl Volume for SqliteVolume {
    fn load(&self, key: &str) -> Result<Option<Entry>, VolumeError> {
        Ok(self
            .lock()
            .query_row(
                "SELECT payload, encoding, time, clock, deleted FROM entries WHERE key = ?1",
                params![key],
                |row| entry(row, 0),
            )
            .optional()?)
    }

    fn store(&self, key: &str, e: &Entry) -> Result<(), VolumeError> {
        self.lock().execute(
            "INSERT INTO entries (key, payload, encoding, time, clock, deleted)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(key) DO UPDATE SET payload = ?2, encoding = ?3, time = ?4,
                 clock = ?5, deleted = ?6",
            params![
                key,
                e.payload,
                e.encoding,
                e.time as i64,
                e.clock.to_le_bytes().to_vec(),
                i64::from(e.deleted)
            ],
        )?;
        Ok(())
    }

    fn scan_page(
        &self,
        prefix: &str,
        after: Option<&str>,
        max_bytes: usize,
    ) -> Result<Vec<(String, Entry)>, VolumeError> {
        // The key's index walks from where the page starts, and the walk stops with the
        // page: a page costs its own rows, not the table's. Keys compare bytewise in both
        // SQLite and Rust, so a prefix's keys are contiguous from the prefix on.
        let db = self.lock();
        let (sql, from) = match after {
            None => ("key >= ?1", prefix),
            Some(a) => ("key > ?1", a),
        };
        let mut stmt = db.prepare(&format!(
            "SELECT key, payload, encoding, time, clock, deleted FROM entries
             WHERE {sql} ORDER BY key"
        ))?;
        let rows = stmt.query_map(params![from], |row| Ok((row.get(0)?, entry(row, 1)?)))?;
        fill_page(
            prefix,
            max_bytes,
            rows.map(|r| r.map_err(VolumeError::from)),
        )
    }
}
