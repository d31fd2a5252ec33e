//! `weft record` (samples into an MCAP file) and `weft replay` (an MCAP file published
//! again, with its original spacing). The file layout is `weft_record::mcap_file`'s.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use weft::{CongestionControl, PutOptions, Sample, SampleKind, Session};
use weft_cli::recording::{ntp64_to_ns, Compression, Playback, Recorder, SampleRef};
use weft_record::queue::{Pushed, Queue};

use super::common::{stop_flag, stopped, usage_error, SessionArgs};

/// Samples waiting for the file at most: beyond, the subscriber's callback waits for the
/// writer (the link is read no faster than the disk takes it: nothing is dropped here).
const QUEUE_SAMPLES: usize = 16_384;
/// Bytes (payloads, attachments, keys) waiting for the file at most, likewise.
const QUEUE_BYTES: usize = 256 << 20;
/// Bytes buffered before they reach the file.
const WRITE_BUFFER: usize = 1 << 20;

/// Arguments of `weft record`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: weft record -m client -e tcp/127.0.0.1:7447 -k 'robot/**' \
                        -o robot.mcap --duration 60"
)]
pub(crate) struct RecordArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The key expression to record.
    #[arg(short, long, default_value = "**", value_parser = super::common::key_expr_arg)]
    key: String,
    /// The MCAP file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Stop after this many seconds.
    #[arg(long)]
    duration: Option<f64>,
    /// Stop after this many samples.
    #[arg(long)]
    count: Option<u64>,
    /// How the file's chunks are compressed.
    #[arg(long, value_enum, default_value = "zstd")]
    compression: CompressionArg,
}

/// How a recording's chunks are compressed, as `--compression` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CompressionArg {
    /// zstd (the MCAP tools' default).
    Zstd,
    /// LZ4: faster, larger files.
    Lz4,
    /// None.
    None,
}

impl From<CompressionArg> for Compression {
    fn from(c: CompressionArg) -> Self {
        match c {
            CompressionArg::Zstd => Self::Zstd,
            CompressionArg::Lz4 => Self::Lz4,
            CompressionArg::None => Self::None,
        }
    }
}

/// Arguments of `weft replay`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: weft replay robot.mcap -m client -e tcp/127.0.0.1:7447 \
                        --rate 2 --remap robot/1=sim/robot/1"
)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The MCAP file to replay (written by `weft record`).
    file: PathBuf,
    /// Speed: 2 replays twice as fast, 0.5 at half speed.
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// Start over at the end, until interrupted.
    #[arg(long = "loop")]
    looping: bool,
    /// Publish keys starting with FROM under TO instead (FROM=TO; may be given again).
    #[arg(long, value_parser = remap_arg)]
    remap: Vec<(String, String)>,
}

/// `FROM=TO`.
fn remap_arg(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((from, to)) if !from.is_empty() && !to.is_empty() => {
            Ok((from.to_string(), to.to_string()))
        }
        _ => Err(format!("expected FROM=TO (key prefixes), got {s:?}")),
    }
}

/// Nanoseconds since the UNIX epoch, now.
fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// `sample` as it is recorded: borrowed from the received sample; `received` is its time
/// when it has no timestamp.
fn recorded(sample: &Sample, received: u64) -> SampleRef<'_> {
    SampleRef {
        key: &sample.key_expr,
        encoding: &sample.encoding,
        kind: sample.kind,
        payload: &sample.payload,
        attachment: sample.attachment.as_deref(),
        time_ns: sample.timestamp.map_or(received, |t| ntp64_to_ns(t.time)),
    }
}

/// Runs `weft record`.
pub(crate) fn record(args: &RecordArgs) -> ExitCode {
    let stop = stop_flag();
    let file = match File::create(&args.output) {
        Ok(f) => f,
        Err(e) => {
            return usage_error(
                "record",
                &format!("cannot create {}: {e}", args.output.display()),
            )
        }
    };
    let sink = BufWriter::with_capacity(WRITE_BUFFER, file);
    let mut recorder = match Recorder::create(sink, args.compression.into()) {
        Ok(r) => r,
        Err(e) => return usage_error("record", &e.to_string()),
    };
    let session = match args.session.open("record") {
        Ok(s) => s,
        Err(code) => return code,
    };
    // The callback queues a clone of the sample: its key is shared, and so is a payload
    // that came in fragments (reassembled); a small one is copied, as before.
    let queue = Arc::new(Queue::<(Sample, u64)>::new(QUEUE_SAMPLES, QUEUE_BYTES));
    let waited = Arc::new(AtomicU64::new(0));
    let subscriber = {
        let (queue, waited) = (queue.clone(), waited.clone());
        session.declare_subscriber(&args.key, move |s| {
            let received = if s.timestamp.is_some() { 0 } else { now_ns() };
            let bytes = s.payload.len() + s.attachment.as_ref().map_or(0, Vec::len);
            // The recording stops only when the file does: a full queue waits for it.
            if queue.push((s.clone(), received), bytes + s.key_expr.len()) == Pushed::Waited {
                waited.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let subscriber = match subscriber {
        Ok(s) => s,
        Err(e) => {
            session.close();
            return usage_error("record", &e.to_string());
        }
    };
    let deadline = args
        .duration
        .map(|s| Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    let wanted = |recorder: &Recorder<_>| args.count.is_none_or(|n| recorder.samples() < n);
    let mut failed = None;
    let mut batch = Vec::new();
    let mut open = true;
    while open
        && failed.is_none()
        && !stopped(&stop)
        && wanted(&recorder)
        && deadline.is_none_or(|d| Instant::now() < d)
    {
        open = queue.pop_all(&mut batch, Instant::now() + Duration::from_millis(100));
        for (sample, received) in batch.drain(..) {
            if failed.is_some() || !wanted(&recorder) {
                break;
            }
            failed = recorder.write_ref(recorded(&sample, received)).err();
        }
    }
    // What already waits is written too (within --count); then the queue is closed, so
    // that a callback waiting for room gives up at once, then the subscriber goes.
    if failed.is_none() && wanted(&recorder) {
        queue.pop_all(&mut batch, Instant::now());
        for (sample, received) in batch.drain(..) {
            if failed.is_some() || !wanted(&recorder) {
                break;
            }
            failed = recorder.write_ref(recorded(&sample, received)).err();
        }
    }
    queue.close();
    drop(subscriber);
    session.close();
    if let Some(e) = failed {
        eprintln!("weft record: {e}");
        return ExitCode::from(1);
    }
    match recorder.finish() {
        Ok((samples, _)) => {
            eprintln!(
                "weft record: {samples} samples written to {}; the link waited for the disk \
                 {} times",
                args.output.display(),
                waited.load(Ordering::Relaxed)
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("weft record: {}: {e}", args.output.display());
            ExitCode::from(1)
        }
    }
}

/// `key` with the first matching prefix of `remap` replaced.
fn remapped(key: &str, remap: &[(String, String)]) -> String {
    for (from, to) in remap {
        if let Some(rest) = key.strip_prefix(from.as_str()) {
            if rest.is_empty() || rest.starts_with('/') || from.ends_with('/') {
                return format!("{to}{rest}");
            }
        }
    }
    key.to_string()
}

/// Runs `weft replay`.
pub(crate) fn replay(args: &ReplayArgs) -> ExitCode {
    if !(args.rate.is_finite() && args.rate > 0.0) {
        return usage_error("replay", &format!("--rate {}: must be above 0", args.rate));
    }
    let stop = stop_flag();
    let session = match args.session.open("replay") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let mut replayed = 0u64;
    let outcome = loop {
        match replay_once(&session, args, &stop, &mut replayed) {
            Ok(true) if args.looping && !stopped(&stop) => continue,
            other => break other,
        }
    };
    session.close();
    match outcome {
        Ok(_) => {
            eprintln!("weft replay: {replayed} samples published");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("weft replay: {}: {e}", args.file.display());
            ExitCode::from(1)
        }
    }
}

/// Publishes the file once, with its spacing; `Ok(true)` when it got to the end.
fn replay_once(
    session: &Session,
    args: &ReplayArgs,
    stop: &std::sync::atomic::AtomicBool,
    replayed: &mut u64,
) -> Result<bool, String> {
    let file = File::open(&args.file).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut first = None;
    for sample in Playback::new(BufReader::new(file)) {
        let sample = sample.map_err(|e| e.to_string())?;
        let first_ns = *first.get_or_insert(sample.time_ns);
        let offset = sample.time_ns.saturating_sub(first_ns) as f64 / args.rate;
        let due = started + Duration::from_secs_f64(offset / 1e9);
        while Instant::now() < due {
            if stopped(stop) {
                return Ok(false);
            }
            std::thread::sleep((due - Instant::now()).min(Duration::from_millis(50)));
        }
        if stopped(stop) {
            return Ok(false);
        }
        let key = remapped(&sample.key, &args.remap);
        let options = PutOptions {
            encoding: sample.encoding,
            attachment: sample.attachment,
            congestion_control: CongestionControl::Block,
            ..PutOptions::default()
        };
        let sent = match sample.kind {
            SampleKind::Put => session.put(&key, &sample.payload, &options),
            SampleKind::Delete => session.delete(&key, &options),
        };
        sent.map_err(|e| format!("{key}: {e}"))?;
        *replayed += 1;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_is_remapped_on_chunk_boundaries_only() {
        let remap = vec![("robot/1".to_string(), "sim/robot/1".to_string())];
        assert_eq!(remapped("robot/1/pose", &remap), "sim/robot/1/pose");
        assert_eq!(remapped("robot/1", &remap), "sim/robot/1");
        assert_eq!(remapped("robot/10/pose", &remap), "robot/10/pose");
        assert_eq!(remapped("other", &remap), "other");
        assert!(remap_arg("a=b").is_ok());
        assert!(remap_arg("=b").is_err());
        assert!(remap_arg("ab").is_err());
    }
}
