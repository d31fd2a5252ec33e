//! A recording's files: each named with the time it was started, closed (summary and index
//! written) and replaced by a new one once it is larger or older than the configured
//! limits.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::config::Rotation;
use crate::mcap_file::{Compression, Recorder, RecordingError, SampleRef};

/// Bytes buffered before they reach the file.
const BUFFER: usize = 1 << 20;

/// A sink that tells how long the file it writes has grown (`end`, shared with whoever
/// watches the file's size while the MCAP writer owns the sink).
#[derive(Debug)]
pub(crate) struct Counted<W> {
    inner: W,
    position: u64,
    end: Arc<AtomicU64>,
}

impl<W> Counted<W> {
    fn grown_to(&mut self, position: u64) {
        self.position = position;
        self.end.fetch_max(position, Ordering::Relaxed);
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.grown_to(self.position + n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Seek> Seek for Counted<W> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let position = self.inner.seek(to)?;
        self.grown_to(position);
        Ok(position)
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.position)
    }
}

type Sink = Counted<BufWriter<File>>;

/// The file being written.
struct Current {
    recorder: Recorder<Sink>,
    path: PathBuf,
    opened: Instant,
    size: Arc<AtomicU64>,
}

impl Current {
    fn size(&self) -> u64 {
        self.size.load(Ordering::Relaxed)
    }
}

/// A file finished: closed with its summary and index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finished {
    /// Where it is.
    pub(crate) path: PathBuf,
    /// The samples it holds.
    pub(crate) samples: u64,
    /// Its size.
    pub(crate) bytes: u64,
}

/// A recording's files in one directory, rotated.
pub(crate) struct RotatingFiles {
    directory: PathBuf,
    rotate: Rotation,
    compression: Compression,
    current: Option<Current>,
}

impl RotatingFiles {
    /// Files in `directory` (which must exist), rotated by `rotate`.
    pub(crate) fn new(directory: PathBuf, rotate: Rotation, compression: Compression) -> Self {
        Self {
            directory,
            rotate,
            compression,
            current: None,
        }
    }

    /// The file being written, if one is open.
    pub(crate) fn current(&self) -> Option<&Path> {
        self.current.as_ref().map(|c| c.path.as_path())
    }

    /// The size the file being written has reached (0 when none is open).
    pub(crate) fn current_bytes(&self) -> u64 {
        self.current.as_ref().map_or(0, Current::size)
    }

    /// Writes `sample` into the current file, opening one (named with the time now) if
    /// none is open.
    pub(crate) fn write(&mut self, sample: SampleRef<'_>) -> Result<(), RecordingError> {
        let current = match &mut self.current {
            Some(c) => c,
            None => self
                .current
                .insert(open(&self.directory, self.compression)?),
        };
        current.recorder.write_ref(sample)
    }

    /// Whether the file being written has reached a limit, at `now`.
    pub(crate) fn due(&self, now: Instant) -> bool {
        let Some(c) = &self.current else {
            return false;
        };
        self.rotate
            .size_bytes
            .is_some_and(|limit| c.size() >= limit)
            || self
                .rotate
                .age
                .is_some_and(|age| now.saturating_duration_since(c.opened) >= age)
    }

    /// Closes the file being written, if any: the next sample starts a new one.
    pub(crate) fn finish(&mut self) -> Result<Option<Finished>, RecordingError> {
        let Some(current) = self.current.take() else {
            return Ok(None);
        };
        let (samples, mut sink) = current.recorder.finish()?;
        sink.flush().map_err(|e| RecordingError::Mcap(e.into()))?;
        Ok(Some(Finished {
            path: current.path,
            samples,
            bytes: sink.end.load(Ordering::Relaxed),
        }))
    }

    /// Forgets the file being written without finishing it (after a write error: what it
    /// holds stays as the disk took it).
    pub(crate) fn abandon(&mut self) -> Option<PathBuf> {
        self.current.take().map(|c| c.path)
    }
}

/// A new file in `directory`, named with the time now (UTC, to the microsecond); a
/// suffix (`_001`...) keeps two files started in the same microsecond apart, and sorts
/// after the first: the names sort in the order the files were started.
fn open(directory: &Path, compression: Compression) -> Result<Current, RecordingError> {
    let stamp = utc_stamp(SystemTime::now());
    let mut n = 0u32;
    loop {
        let name = if n == 0 {
            format!("{stamp}.mcap")
        } else {
            format!("{stamp}_{n:03}.mcap")
        };
        let path = directory.join(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => {
                let size = Arc::new(AtomicU64::new(0));
                let sink = Counted {
                    inner: BufWriter::with_capacity(BUFFER, file),
                    position: 0,
                    end: size.clone(),
                };
                let recorder = Recorder::create(sink, compression)?;
                return Ok(Current {
                    recorder,
                    path,
                    opened: Instant::now(),
                    size,
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 999 => n += 1,
            Err(e) => return Err(RecordingError::Mcap(e.into())),
        }
    }
}

/// `time` as `YYYYMMDDTHHMMSS.ffffffZ` (UTC).
pub(crate) fn utc_stamp(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_date(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}.{:06}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_micros()
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01.
const fn civil_date(days: u64) -> (u64, u64, u64) {
    // Days counted from 0000-03-01, in 400-year eras of 146,097 days.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use weft::SampleKind;

    use super::*;

    #[test]
    fn file_names_are_the_utc_start_time() {
        let at = |secs: u64, micros: u64| {
            utc_stamp(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros))
        };
        assert_eq!(at(0, 0), "19700101T000000.000000Z");
        // 2000-02-29 12:34:56 UTC, a leap day.
        assert_eq!(at(951_827_696, 7), "20000229T123456.000007Z");
        // 2026-11-26 18:05:40 UTC.
        assert_eq!(at(1_795_716_340, 123_456), "20261126T180540.123456Z");
    }

    #[test]
    fn a_file_past_its_size_is_due_and_the_next_sample_opens_another() {
        let dir = std::env::temp_dir().join(format!("weft-rotation-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rotate = Rotation {
            size_bytes: Some(64 * 1024),
            age: None,
        };
        let mut files = RotatingFiles::new(dir.clone(), rotate, Compression::None);
        let payload = vec![7u8; 1_000];
        let sample = SampleRef {
            key: "a/b",
            encoding: "zenoh/bytes",
            kind: SampleKind::Put,
            payload: &payload,
            attachment: None,
            time_ns: 1,
        };
        let mut finished = Vec::new();
        for _ in 0..1_000 {
            files.write(sample).unwrap();
            if files.due(Instant::now()) {
                finished.push(files.finish().unwrap().unwrap());
            }
        }
        finished.extend(files.finish().unwrap());
        assert!(finished.len() > 5, "{finished:?}");
        assert_eq!(finished.iter().map(|f| f.samples).sum::<u64>(), 1_000);
        for f in &finished {
            assert_eq!(std::fs::metadata(&f.path).unwrap().len(), f.bytes);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
