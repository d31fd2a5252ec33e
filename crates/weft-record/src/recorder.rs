//! Recordings running inside a process: each one a subscriber on its key expression and a
//! writing thread behind a bounded queue, writing rotated MCAP files into its directory.
//!
//! The subscriber's callback only queues a clone of the sample (its key and its payload
//! shared: the payload left its batch when it was received); the
//! thread writes what is queued, closes a file (summary and index written) once it
//! reaches its size or age limit, and the next sample opens a new one named with its
//! start time. When the queue is full the callback waits for room: nothing is
//! dropped, the link is read no faster than the disk writes. A write error is logged and
//! counted; the file it happened in is given up, writing resumes with a new file a second
//! later, and the samples received meanwhile are counted as lost.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use thiserror::Error;
use weft::{Sample, Session, SessionError, Subscriber};

use crate::config::{RecordingConfig, WhenFull, SECTION};
use crate::mcap_file::{ntp64_to_ns, SampleRef};
use crate::queue::{Pushed, Queue};
use crate::rotation::RotatingFiles;
use crate::stats::RecordingStats;

/// Samples waiting for the writing thread at most.
const QUEUE_SAMPLES: usize = 16_384;
/// Bytes (payloads, attachments and keys) waiting for the writing thread at most.
const QUEUE_BYTES: usize = 256 << 20;
/// How often the writing thread looks at its file's age when no sample comes.
const TICK: Duration = Duration::from_millis(200);
/// How long writing stays suspended after an error.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// A recording that could not start.
#[derive(Debug, Error)]
pub enum RecorderError {
    /// Its directory cannot be created or written.
    #[error("invalid value for `{key}`: cannot write into {}: {source}", path.display())]
    Directory {
        /// The configuration key, dotted.
        key: String,
        /// The directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Its subscriber could not be declared.
    #[error("`{key}`: {source}")]
    Subscribe {
        /// The configuration key, dotted.
        key: String,
        /// Why.
        source: SessionError,
    },
    /// Its writing thread could not be started.
    #[error("recording {name}: cannot start its thread: {source}")]
    Thread {
        /// The recording's name.
        name: String,
        /// Why.
        source: io::Error,
    },
}

/// A sample waiting to be written, with the time it was received.
type Queued = (Sample, u64);

/// A running recording; stopped (its last file finished) when dropped.
pub struct Recording {
    /// Its configuration.
    pub config: RecordingConfig,
    stats: Arc<RecordingStats>,
    queue: Arc<Queue<Queued>>,
    subscriber: Option<Subscriber>,
    thread: Option<JoinHandle<()>>,
}

impl Recording {
    /// Its counters.
    pub fn stats(&self) -> Arc<RecordingStats> {
        self.stats.clone()
    }

    /// Stops receiving, writes what is queued and finishes the last file.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        // The subscriber goes first, so that what it already received is written.
        drop(self.subscriber.take());
        self.queue.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.shut_down();
    }
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("config", &self.config)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Starts every recording of `configs` on `session`: their directories are created, then
/// their subscribers declared. On an error the recordings started are stopped.
pub fn start(
    session: &Session,
    configs: Vec<RecordingConfig>,
) -> Result<Vec<Recording>, RecorderError> {
    for config in &configs {
        writable_directory(config)?;
    }
    configs
        .into_iter()
        .map(|config| start_one(session, config))
        .collect()
}

/// Creates `config`'s directory if missing, and checks that a file can be created in it.
fn writable_directory(config: &RecordingConfig) -> Result<(), RecorderError> {
    let fail = |source| RecorderError::Directory {
        key: format!("{SECTION}.recordings.{}.directory", config.name),
        path: config.directory.clone(),
        source,
    };
    std::fs::create_dir_all(&config.directory).map_err(fail)?;
    let probe = config
        .directory
        .join(format!(".weft-record-{}", std::process::id()));
    std::fs::File::create(&probe).map_err(fail)?;
    std::fs::remove_file(&probe).map_err(fail)
}

fn start_one(session: &Session, config: RecordingConfig) -> Result<Recording, RecorderError> {
    let stats = Arc::new(RecordingStats::default());
    let queue = Arc::new(Queue::new(QUEUE_SAMPLES, QUEUE_BYTES));
    let files = RotatingFiles::new(config.directory.clone(), config.rotate, config.compression);
    let writer = Writer {
        name: config.name.clone(),
        files,
        stats: stats.clone(),
        suspended_until: None,
    };
    let thread = {
        let queue = queue.clone();
        std::thread::Builder::new()
            .name(format!("weft-rec-{}", config.name))
            .spawn(move || writer.run(&queue))
            .map_err(|source| RecorderError::Thread {
                name: config.name.clone(),
                source,
            })?
    };
    let mut recording = Recording {
        config,
        stats: stats.clone(),
        queue: queue.clone(),
        subscriber: None,
        thread: Some(thread),
    };
    let when_full = recording.config.when_full;
    let name = recording.config.name.clone();
    let subscriber = session
        .declare_subscriber(recording.config.key_expr.as_str(), move |s| {
            let received = if s.timestamp.is_some() { 0 } else { now_ns() };
            let bytes =
                s.payload.len() + s.attachment.as_ref().map_or(0, Vec::len) + s.key_expr.len();
            let item = (s.clone(), received);
            match when_full {
                WhenFull::Block => {
                    if queue.push(item, bytes) == Pushed::Waited {
                        stats.waited();
                    }
                }
                WhenFull::Drop => {
                    if queue.try_push(item, bytes) == Pushed::Full {
                        let n = stats.dropped();
                        if n.is_power_of_two() {
                            tracing::warn!(
                                "recording {name} cannot keep up: {n} sample(s) dropped so far \
                                 (its queue is full; when_full: \"block\" waits instead)"
                            );
                        }
                    }
                }
            }
        })
        .map_err(|source| RecorderError::Subscribe {
            key: format!("{SECTION}.recordings.{}.key_expr", recording.config.name),
            source,
        })?;
    recording.subscriber = Some(subscriber);
    tracing::info!(
        "recording {} of {} into {}",
        recording.config.name,
        recording.config.key_expr,
        recording.config.directory.display()
    );
    Ok(recording)
}

/// Nanoseconds since the UNIX epoch, now.
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The writing thread's state.
struct Writer {
    name: String,
    files: RotatingFiles,
    stats: Arc<RecordingStats>,
    /// After an error, no file is opened before this.
    suspended_until: Option<Instant>,
}

impl Writer {
    fn run(mut self, queue: &Queue<Queued>) {
        let mut batch = Vec::new();
        loop {
            let open = queue.pop_all(&mut batch, Instant::now() + TICK);
            let now = Instant::now();
            for (sample, received) in batch.drain(..) {
                self.write(&sample, received, now);
            }
            if self.files.due(now) {
                self.finish();
            }
            self.stats.set_current(
                self.files.current().map(PathBuf::from),
                self.files.current_bytes(),
            );
            if !open {
                break;
            }
        }
        self.finish();
        self.stats.set_current(None, 0);
    }

    fn write(&mut self, sample: &Sample, received: u64, now: Instant) {
        if self.suspended_until.is_some_and(|t| now < t) {
            self.stats.lost(1);
            return;
        }
        self.suspended_until = None;
        let attachment = sample.attachment.as_deref();
        let written = self.files.write(SampleRef {
            key: &sample.key_expr,
            encoding: &sample.encoding,
            kind: sample.kind,
            payload: &sample.payload,
            attachment,
            time_ns: sample.timestamp.map_or(received, |t| ntp64_to_ns(t.time)),
        });
        match written {
            Ok(()) => {
                let bytes = sample.payload.len() + attachment.map_or(0, <[u8]>::len);
                self.stats.written(bytes as u64);
                if self.files.due(now) {
                    self.finish();
                }
            }
            Err(e) => {
                let file = self.files.abandon();
                let at = file.map_or_else(String::new, |f| format!(" ({})", f.display()));
                tracing::warn!("recording {}: write error{at}: {e}", self.name);
                self.stats.failed(e.to_string(), 1);
                self.suspended_until = Some(now + RETRY_AFTER);
            }
        }
    }

    /// Finishes the file being written, if any.
    fn finish(&mut self) {
        match self.files.finish() {
            Ok(Some(done)) => {
                tracing::debug!(
                    "recording {}: {} closed ({} samples, {} bytes)",
                    self.name,
                    done.path.display(),
                    done.samples,
                    done.bytes
                );
                self.stats.finished(done.bytes);
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!("recording {}: cannot finish its file: {e}", self.name);
                self.stats.failed(e.to_string(), 0);
            }
        }
    }
}
