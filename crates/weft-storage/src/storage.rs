//! A running storage: a subscriber feeding a volume, a queryable answering from it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use thiserror::Error;
use weft::metrics::DurationHistogram;
use weft::{PutOptions, Query, Queryable, Sample, SampleKind, Session, SessionError, Subscriber};
use weft_keyexpr::KeyExpr;

use crate::answers::Answers;
use crate::config::{StorageConfig, VolumeKind};
use crate::discards::{self, DiscardLog};
use crate::volume::{Entry, MemoryVolume, SqliteVolume, Volume, VolumeError, PAGE_BYTES};

/// A storage that could not start.
#[derive(Debug, Error)]
pub enum StorageError {
    /// Its volume could not be opened.
    #[error("storage `{name}`: {source}")]
    Volume {
        /// The storage.
        name: String,
        /// Why.
        source: VolumeError,
    },
    /// Its answering thread could not start.
    #[error("storage `{name}`: cannot start its thread: {source}")]
    Thread {
        /// The storage.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// Its subscriber or queryable could not be declared.
    #[error("storage `{name}`: {source}")]
    Session {
        /// The storage.
        name: String,
        /// Why.
        source: SessionError,
    },
}

/// A running storage; stops when dropped.
pub struct Storage {
    /// Its configuration.
    pub config: StorageConfig,
    stats: Arc<StorageStats>,
    _subscriber: Subscriber,
    _queryable: Queryable,
}

impl Storage {
    /// Its counters, shared: they go on counting while the storage runs.
    pub fn stats(&self) -> Arc<StorageStats> {
        self.stats.clone()
    }
}

/// What a storage holds and how its writes went.
#[derive(Debug, Default)]
pub struct StorageStats {
    /// Keys holding a value (deleted ones not counted).
    pub keys: AtomicU64,
    /// Bytes of the values held.
    pub bytes: AtomicU64,
    /// Samples written to the volume.
    pub writes: AtomicU64,
    /// Samples not stored: older than what the volume holds (last writer wins). Each is
    /// also told in the logs, naming its key (rate-limited).
    pub stale: AtomicU64,
    /// Samples the volume failed to store.
    pub errors: AtomicU64,
    /// Queries answered with an error at once: the storage's queue of queries was full
    /// (`answers::QUEUED_QUERIES`).
    pub queries_refused: AtomicU64,
    /// How long writes (load, compare and store) took.
    pub write_durations: DurationHistogram,
}

impl StorageStats {
    /// What `entry` replacing `old` changes in the keys and bytes held.
    fn count_change(&self, old: Option<&Entry>, entry: &Entry) {
        let held = |e: Option<&Entry>| e.filter(|e| !e.deleted).map(|e| e.payload.len() as u64);
        match (held(old), held(Some(entry))) {
            (None, Some(new)) => {
                self.keys.fetch_add(1, Ordering::Relaxed);
                self.bytes.fetch_add(new, Ordering::Relaxed);
            }
            (Some(old), None) => {
                self.keys.fetch_sub(1, Ordering::Relaxed);
                self.bytes.fetch_sub(old, Ordering::Relaxed);
            }
            (Some(old), Some(new)) => {
                self.bytes.fetch_add(new, Ordering::Relaxed);
                self.bytes.fetch_sub(old, Ordering::Relaxed);
            }
            (None, None) => {}
        }
    }
}

/// Maps full keys to stored keys and back, for `strip_prefix`.
#[derive(Clone)]
struct Keys {
    strip: Option<String>,
}

impl Keys {
    fn stored<'k>(&self, key: &'k str) -> Option<&'k str> {
        match &self.strip {
            None => Some(key),
            Some(p) => key.strip_prefix(p.as_str())?.strip_prefix('/'),
        }
    }

    fn full(&self, stored: &str) -> String {
        match &self.strip {
            None => stored.to_string(),
            Some(p) => format!("{p}/{stored}"),
        }
    }
}

pub(crate) struct Shared {
    volume: Arc<dyn Volume>,
    keys: Keys,
    /// The session's clock, for samples that come without a timestamp: the one the
    /// router stamps with, so that what the storage stamps and what the router stamped
    /// order as they came.
    clock: weft::Clock,
    /// Held from the stamp of a sample to the store of its entries: samples handled by
    /// two threads at once are stamped in the order they are written, and not both
    /// compared with the same old entry.
    writing: Mutex<()>,
    discards: Mutex<DiscardLog>,
    pub(crate) name: String,
    pub(crate) stats: Arc<StorageStats>,
}

impl Shared {
    /// Last writer wins: the sample is stored unless the volume holds a newer entry. A
    /// sample on a key expression with wildcards updates every stored key it includes
    /// (as Zenoh's storages do), each by the same rule.
    fn on_sample(&self, s: &Sample) {
        let _writing = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let entry = self.entry_of(s);
        match KeyExpr::new(&s.key_expr) {
            Ok(expr) if expr.is_wild() => {
                for stored in self.stored_keys_within(expr) {
                    self.apply(&stored, &entry, &s.key_expr);
                }
            }
            _ => {
                if let Some(key) = self.keys.stored(&s.key_expr) {
                    self.apply(key, &entry, &s.key_expr);
                }
            }
        }
    }

    /// What the volume keeps of `s`.
    fn entry_of(&self, s: &Sample) -> Entry {
        let ts = s.timestamp.unwrap_or_else(|| self.clock.new_timestamp());
        let (time, clock) = (ts.time, ts.id.to_u128());
        Entry {
            payload: if s.kind == SampleKind::Put {
                s.payload.to_vec()
            } else {
                Vec::new()
            },
            encoding: s.encoding.to_string(),
            time,
            clock,
            deleted: s.kind == SampleKind::Delete,
        }
    }

    /// The stored keys (deleted ones included) that `expr` includes.
    fn stored_keys_within(&self, expr: KeyExpr<'_>) -> Vec<String> {
        let mut keys = Vec::new();
        let scanned = self.scan_pages(self.scan_prefix(expr), |page| {
            keys.extend(page.into_iter().map(|(stored, _)| stored).filter(|stored| {
                KeyExpr::new(&self.keys.full(stored)).is_ok_and(|k| expr.includes(k))
            }));
        });
        if let Err(e) = scanned {
            self.stats.errors.fetch_add(1, Ordering::Relaxed);
            tracing::error!(
                "storage `{}`: cannot update {}: {e}",
                self.name,
                weft::printable(expr.as_str())
            );
            return Vec::new();
        }
        keys
    }

    /// Hands `each` the entries whose stored key starts with `prefix`, in key order, a
    /// page ([`PAGE_BYTES`]) at a time: what a scan holds is one page.
    fn scan_pages(
        &self,
        prefix: &str,
        mut each: impl FnMut(Vec<(String, Entry)>),
    ) -> Result<(), VolumeError> {
        let mut after: Option<String> = None;
        loop {
            let page = self
                .volume
                .scan_page(prefix, after.as_deref(), PAGE_BYTES)?;
            let Some((last, _)) = page.last() else {
                return Ok(());
            };
            after = Some(last.clone());
            each(page);
        }
    }

    /// The stored-key prefix of every key `expr` can match: its wildcard-free start.
    fn scan_prefix<'k>(&self, expr: KeyExpr<'k>) -> &'k str {
        let prefix = expr.nonwild_prefix().map(KeyExpr::as_str).unwrap_or("");
        if self.keys.strip.is_some() {
            self.keys.stored(prefix).unwrap_or("")
        } else {
            prefix
        }
    }

    /// Stores `entry` at the stored key `key` unless the volume holds a newer entry
    /// there (`what` names the sample in a log line); called under `writing`.
    fn apply(&self, key: &str, entry: &Entry, what: &str) {
        let began = Instant::now();
        let outcome = self.volume.load(key).and_then(|old| match old {
            // Last writer wins: an older sample is not stored.
            Some(old) if old.order() >= entry.order() => Ok(None),
            old => self.volume.store(key, entry).map(|()| Some(old)),
        });
        // The duration first: whoever sees a write counted sees its duration too.
        self.stats.write_durations.record(began.elapsed());
        match outcome {
            Ok(None) => {
                self.stats.stale.fetch_add(1, Ordering::Relaxed);
                self.tell_discarded(key);
            }
            Ok(Some(old)) => {
                self.stats.count_change(old.as_ref(), entry);
                self.stats.writes.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                tracing::error!(
                    "storage `{}`: cannot store {}: {e}",
                    self.name,
                    weft::printable(what)
                );
            }
        }
    }

    /// Logs (rate-limited) that a write of the stored key `key` was discarded.
    fn tell_discarded(&self, key: &str) {
        let tell = self
            .discards
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .count(Instant::now());
        if let Some(tell) = tell {
            let key = self.keys.full(key);
            tracing::warn!("{}", discards::line(&self.name, &key, tell));
        }
    }

    /// Answers `q` from the volume (on the storage's answering thread: `answers`).
    pub(crate) fn on_query(&self, q: &Query) {
        let Ok(asked) = KeyExpr::new(q.key_expr()) else {
            return;
        };
        // Scan what starts with the query's wildcard-free prefix (in stored-key space), a
        // page at a time: a paced reader (weftd's REST) holds the replies back while it
        // streams them, so a query over a large storage holds about a page.
        let scanned = self.scan_pages(self.scan_prefix(asked), |page| {
            for (stored, entry) in page {
                if entry.deleted {
                    continue;
                }
                let full = self.keys.full(&stored);
                if KeyExpr::new(&full).is_ok_and(|k| k.intersects(asked)) {
                    let options = PutOptions {
                        encoding: entry.encoding,
                        timestamp: ZidTime(entry.time, entry.clock).timestamp(),
                        ..PutOptions::default()
                    };
                    let _ = q.reply(&full, &entry.payload, &options);
                }
            }
        });
        if let Err(e) = scanned {
            let _ = q.reply_err(format!("storage error: {e}").as_bytes(), "text/plain");
        }
    }
}

/// A stored (time, clock) as a protocol timestamp.
struct ZidTime(u64, u128);

impl ZidTime {
    fn timestamp(&self) -> Option<weft::Timestamp> {
        weft::ZenohId::new(self.1).map(|id| weft::Timestamp { time: self.0, id })
    }
}

/// Starts `configs` on `session`.
pub fn start(session: &Session, configs: Vec<StorageConfig>) -> Result<Vec<Storage>, StorageError> {
    let mut out = Vec::new();
    for config in configs {
        let name = config.name.clone();
        let volume: Arc<dyn Volume> =
            match &config.volume {
                VolumeKind::Memory => Arc::new(MemoryVolume::default()),
                VolumeKind::Sqlite(path) => Arc::new(SqliteVolume::open(path).map_err(
                    |source| StorageError::Volume {
                        name: name.clone(),
                        source,
                    },
                )?),
            };
        // What a persistent volume holds already.
        let stats = Arc::new(StorageStats::default());
        let held = volume.scan("").map_err(|source| StorageError::Volume {
            name: name.clone(),
            source,
        })?;
        for (_, entry) in held.iter().filter(|(_, e)| !e.deleted) {
            stats.count_change(None, entry);
        }
        let shared = Arc::new(Shared {
            stats: stats.clone(),
            volume,
            keys: Keys {
                strip: config.strip_prefix.clone(),
            },
            clock: session.clock(),
            writing: Mutex::new(()),
            discards: Mutex::new(DiscardLog::default()),
            name: name.clone(),
        });
        let on_sample = shared.clone();
        let subscriber = session
            .declare_subscriber(config.key_expr.as_str(), move |s| on_sample.on_sample(s))
            .map_err(|source| StorageError::Session {
                name: name.clone(),
                source,
            })?;
        let answers = Answers::start(shared.clone()).map_err(|source| StorageError::Thread {
            name: name.clone(),
            source,
        })?;
        let queryable = session
            .declare_queryable(config.key_expr.as_str(), true, move |q| answers.ask(q))
            .map_err(|source| StorageError::Session {
                name: name.clone(),
                source,
            })?;
        out.push(Storage {
            config,
            stats,
            _subscriber: subscriber,
            _queryable: queryable,
        });
    }
    Ok(out)
}
