//! What a recording has written, counted with atomics by its writing thread and read by
//! whoever shows them (weftd's admin space).

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use serde_json::{json, Value};

/// A recording's counters.
#[derive(Debug, Default)]
pub struct RecordingStats {
    messages: AtomicU64,
    bytes: AtomicU64,
    files: AtomicU64,
    file_bytes: AtomicU64,
    errors: AtomicU64,
    lost: AtomicU64,
    waited: AtomicU64,
    dropped: AtomicU64,
    current: Mutex<Current>,
}

/// The file being written and what is known of it.
#[derive(Debug, Default, Clone)]
struct Current {
    file: Option<PathBuf>,
    bytes: u64,
    last_error: Option<String>,
}

/// A recording's counters at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordingStatus {
    /// Samples written.
    pub messages: u64,
    /// Their payload and attachment bytes.
    pub bytes: u64,
    /// Files finished (closed with their summary and index).
    pub files: u64,
    /// The size of the files finished.
    pub file_bytes: u64,
    /// Write errors (each logged).
    pub errors: u64,
    /// Samples not written because of an error.
    pub lost: u64,
    /// Times the subscriber waited for the writer (its queue was full, `when_full:
    /// "block"`).
    pub waited: u64,
    /// Samples dropped because the queue was full (`when_full: "drop"`).
    pub dropped: u64,
    /// The file being written, if any.
    pub current_file: Option<PathBuf>,
    /// Its size so far.
    pub current_file_bytes: u64,
    /// The last write error, if any.
    pub last_error: Option<String>,
}

impl RecordingStats {
    fn current(&self) -> std::sync::MutexGuard<'_, Current> {
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts a sample written, of `bytes` (payload and attachment).
    pub(crate) fn written(&self, bytes: u64) {
        self.messages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a file finished, of `bytes`.
    pub(crate) fn finished(&self, bytes: u64) {
        self.files.fetch_add(1, Ordering::Relaxed);
        self.file_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts an error, and the samples it lost.
    pub(crate) fn failed(&self, error: String, lost: u64) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.lost.fetch_add(lost, Ordering::Relaxed);
        self.current().last_error = Some(error);
    }

    /// Counts samples not written (while writing is suspended after an error).
    pub(crate) fn lost(&self, samples: u64) {
        self.lost.fetch_add(samples, Ordering::Relaxed);
    }

    /// Counts a wait of the subscriber for the writer.
    /// Counts a sample dropped for a full queue; returns how many so far.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(crate) fn waited(&self) {
        self.waited.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets the file being written and its size.
    pub(crate) fn set_current(&self, file: Option<PathBuf>, bytes: u64) {
        let mut current = self.current();
        current.file = file;
        current.bytes = bytes;
    }

    /// The counters now.
    pub fn status(&self) -> RecordingStatus {
        let current = self.current().clone();
        RecordingStatus {
            messages: self.messages.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            files: self.files.load(Ordering::Relaxed),
            file_bytes: self.file_bytes.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            lost: self.lost.load(Ordering::Relaxed),
            waited: self.waited.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            current_file: current.file,
            current_file_bytes: current.bytes,
            last_error: current.last_error,
        }
    }
}

impl RecordingStatus {
    /// As JSON: every counter by its field name, `current_file` a path or null.
    pub fn json(&self) -> Value {
        json!({
            "messages": self.messages,
            "bytes": self.bytes,
            "files": self.files,
            "file_bytes": self.file_bytes,
            "errors": self.errors,
            "lost": self.lost,
            "waited": self.waited,
            "dropped": self.dropped,
            "current_file": self.current_file.as_ref().map(|p| p.display().to_string()),
            "current_file_bytes": self.current_file_bytes,
            "last_error": self.last_error,
        })
    }
}
