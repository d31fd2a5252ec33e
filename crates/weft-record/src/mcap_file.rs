//! The MCAP layout of a recording: samples written to an MCAP file and read back in order,
//! in a layout the official MCAP readers and Foxglove read as they are (`weft record` and
//! `weft replay`, and weftd's recorder, use it).
//!
//! Layout: one channel per key, encoding and kind. A channel's topic is the key, its
//! `message_encoding` the Zenoh encoding (`text/plain`, `application/json`,
//! `zenoh/bytes`...), no schema; a message's data is the payload, its log and publish
//! times the sample's timestamp (HLC time, in nanoseconds since the UNIX epoch) or, for a
//! sample without one, the time it was received. Deletions go on channels whose metadata
//! has `weft.kind: delete` (empty data). A sample's attachment is a message of its own,
//! written just before the sample's, with the same sequence number, on a channel of the
//! same topic whose encoding is [`ATTACHMENT_ENCODING`] (metadata `weft.attachment:
//! true`): readers that do not know it see one more channel, nothing else changes.

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Seek, Write};

use thiserror::Error;
use weft::SampleKind;

/// The `message_encoding` of the channels holding attachments.
pub const ATTACHMENT_ENCODING: &str = "weft/attachment";

/// Channel metadata naming what a channel holds beyond payloads of puts.
const KIND: &str = "weft.kind";
const ATTACHMENT: &str = "weft.attachment";

/// A recorded sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Its key.
    pub key: String,
    /// Its encoding, as text.
    pub encoding: String,
    /// Put or delete.
    pub kind: SampleKind,
    /// The value (empty for a deletion).
    pub payload: Vec<u8>,
    /// Bytes attached to it.
    pub attachment: Option<Vec<u8>>,
    /// When it was produced (or received), in nanoseconds since the UNIX epoch.
    pub time_ns: u64,
}

/// How chunks of a recording are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    /// zstd (the MCAP tools' default).
    Zstd,
    /// LZ4: faster, larger files.
    Lz4,
    /// None.
    None,
}

impl Compression {
    /// Every choice, by name.
    pub const ALL: [Self; 3] = [Self::Zstd, Self::Lz4, Self::None];

    /// `"zstd"`, `"lz4"` or `"none"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Zstd => "zstd",
            Self::Lz4 => "lz4",
            Self::None => "none",
        }
    }
}

impl std::str::FromStr for Compression {
    type Err = UnknownCompression;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCompression(s.to_string()))
    }
}

/// A compression name that is not `zstd`, `lz4` or `none`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown compression {0:?}: expected \"zstd\", \"lz4\" or \"none\"")]
pub struct UnknownCompression(pub String);

/// What went wrong with a recording.
#[derive(Debug, Error)]
pub enum RecordingError {
    /// The MCAP file could not be written or read.
    #[error("MCAP: {0}")]
    Mcap(#[from] mcap::McapError),
    /// More distinct (key, encoding, kind) than an MCAP file has channel ids.
    #[error("more than 65,535 channels (distinct key, encoding and kind) in one recording")]
    TooManyChannels,
    /// An attachment message with no sample after it.
    #[error("an attachment (sequence {0}) has no sample after it")]
    LoneAttachment(u32),
}

/// A sample to record, borrowed from wherever it is (a received sample, a [`Recorded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRef<'a> {
    /// Its key.
    pub key: &'a str,
    /// Its encoding, as text.
    pub encoding: &'a str,
    /// Put or delete.
    pub kind: SampleKind,
    /// The value (empty for a deletion).
    pub payload: &'a [u8],
    /// Bytes attached to it.
    pub attachment: Option<&'a [u8]>,
    /// When it was produced (or received), in nanoseconds since the UNIX epoch.
    pub time_ns: u64,
}

impl Recorded {
    /// The sample, borrowed.
    pub fn as_ref(&self) -> SampleRef<'_> {
        SampleRef {
            key: &self.key,
            encoding: &self.encoding,
            kind: self.kind,
            payload: &self.payload,
            attachment: self.attachment.as_deref(),
            time_ns: self.time_ns,
        }
    }
}

/// One channel of a key: samples differing in encoding, kind or being an attachment go
/// on different channels.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Channel {
    encoding: String,
    kind: SampleKind,
    attachment: bool,
    id: u16,
}

/// Writes samples into an MCAP file.
pub struct Recorder<W: Write + Seek> {
    writer: mcap::Writer<W>,
    /// The channels by key (looked up without allocating: a key has few of them).
    channels: HashMap<String, Vec<Channel>>,
    channel_count: usize,
    sequence: u32,
    samples: u64,
}

impl<W: Write + Seek> Recorder<W> {
    /// Starts a recording into `sink`, its chunks compressed with `compression`.
    pub fn create(sink: W, compression: Compression) -> Result<Self, RecordingError> {
        let compression = match compression {
            Compression::Zstd => Some(mcap::Compression::Zstd),
            Compression::Lz4 => Some(mcap::Compression::Lz4),
            Compression::None => None,
        };
        let writer = mcap::WriteOptions::new()
            .compression(compression)
            // zstd on the writing thread itself: mcap's multi-threaded encoder (a worker per
            // core) takes a lock for every write it is handed, and the writer hands it each
            // record in pieces; on one thread it writes 15 to 45 % more (bench/RESULTS.md,
            // "Recording: where it stops").
            .compression_threads(0)
            .library(format!("weft {}", env!("CARGO_PKG_VERSION")))
            .create(sink)?;
        Ok(Self {
            writer,
            channels: HashMap::new(),
            channel_count: 0,
            sequence: 0,
            samples: 0,
        })
    }

    /// Writes one sample (and its attachment, if any).
    pub fn write(&mut self, sample: &Recorded) -> Result<(), RecordingError> {
        self.write_ref(sample.as_ref())
    }

    /// Writes one borrowed sample (and its attachment, if any).
    pub fn write_ref(&mut self, sample: SampleRef<'_>) -> Result<(), RecordingError> {
        self.sequence = self.sequence.wrapping_add(1);
        if let Some(attachment) = sample.attachment {
            let channel = self.channel(&sample, true)?;
            self.write_message(channel, sample.time_ns, attachment)?;
        }
        let channel = self.channel(&sample, false)?;
        self.write_message(channel, sample.time_ns, sample.payload)?;
        self.samples += 1;
        Ok(())
    }

    /// Samples written so far.
    pub const fn samples(&self) -> u64 {
        self.samples
    }

    /// Writes the summary and index, and ends the file; returns the samples written and
    /// the sink.
    pub fn finish(mut self) -> Result<(u64, W), RecordingError> {
        self.writer.finish()?;
        Ok((self.samples, self.writer.into_inner()))
    }

    fn write_message(
        &mut self,
        channel: u16,
        time_ns: u64,
        data: &[u8],
    ) -> Result<(), RecordingError> {
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: self.sequence,
            log_time: time_ns,
            publish_time: time_ns,
        };
        self.writer.write_to_known_channel(&header, data)?;
        Ok(())
    }

    /// The channel of `sample`'s payload (or attachment), added on first use.
    fn channel(&mut self, sample: &SampleRef<'_>, attachment: bool) -> Result<u16, RecordingError> {
        let found = self.channels.get(sample.key).and_then(|list| {
            list.iter().find(|c| {
                c.attachment == attachment && c.kind == sample.kind && c.encoding == sample.encoding
            })
        });
        if let Some(c) = found {
            return Ok(c.id);
        }
        if self.channel_count >= usize::from(u16::MAX) {
            return Err(RecordingError::TooManyChannels);
        }
        let mut metadata = BTreeMap::new();
        if sample.kind == SampleKind::Delete {
            metadata.insert(KIND.to_string(), "delete".to_string());
        }
        let encoding = if attachment {
            metadata.insert(ATTACHMENT.to_string(), "true".to_string());
            ATTACHMENT_ENCODING
        } else {
            sample.encoding
        };
        let id = self
            .writer
            .add_channel(0, sample.key, encoding, &metadata)?;
        self.channels
            .entry(sample.key.to_string())
            .or_default()
            .push(Channel {
                encoding: sample.encoding.to_string(),
                kind: sample.kind,
                attachment,
                id,
            });
        self.channel_count += 1;
        Ok(id)
    }
}

/// Reads the samples of a recording in the order they were written.
pub struct Playback<R: Read> {
    messages: mcap::io::MessageReader<R>,
}

impl<R: Read> Playback<R> {
    /// Reads the recording from `source`.
    pub fn new(source: R) -> Self {
        Self {
            messages: mcap::io::MessageReader::new(source),
        }
    }
}

impl<R: Read> Iterator for Playback<R> {
    type Item = Result<Recorded, RecordingError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut attachment: Option<(u32, Vec<u8>)> = None;
        loop {
            let message = match self.messages.next() {
                Some(Ok(m)) => m,
                Some(Err(e)) => return Some(Err(e.into())),
                None => {
                    return attachment.map(|(seq, _)| Err(RecordingError::LoneAttachment(seq)));
                }
            };
            let channel = &message.channel;
            if channel
                .metadata
                .get(ATTACHMENT)
                .is_some_and(|v| v == "true")
            {
                attachment = Some((message.sequence, message.data.into_owned()));
                continue;
            }
            let kind = if channel.metadata.get(KIND).is_some_and(|v| v == "delete") {
                SampleKind::Delete
            } else {
                SampleKind::Put
            };
            let attachment = attachment
                .take()
                .filter(|(seq, _)| *seq == message.sequence)
                .map(|(_, data)| data);
            return Some(Ok(Recorded {
                key: channel.topic.clone(),
                encoding: channel.message_encoding.clone(),
                kind,
                payload: message.data.into_owned(),
                attachment,
                time_ns: message.log_time,
            }));
        }
    }
}

/// An HLC timestamp's time (NTP64: seconds in the high 32 bits, a binary fraction in the
/// low 32) in nanoseconds since the UNIX epoch.
pub const fn ntp64_to_ns(time: u64) -> u64 {
    let seconds = time >> 32;
    let fraction = time & 0xffff_ffff;
    seconds * 1_000_000_000 + ((fraction * 1_000_000_000) >> 32)
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn sample(key: &str, encoding: &str, kind: SampleKind, payload: &[u8]) -> Recorded {
        Recorded {
            key: key.into(),
            encoding: encoding.into(),
            kind,
            payload: payload.to_vec(),
            attachment: None,
            time_ns: 0,
        }
    }

    #[test]
    fn every_sample_reads_back_as_written_whatever_the_compression() {
        let mut samples = vec![
            sample(
                "robot/1/pose",
                "application/json",
                SampleKind::Put,
                b"{\"x\":1}",
            ),
            sample("robot/1/pose", "text/plain", SampleKind::Put, b"x=1"),
            sample(
                "robot/2/cam",
                "zenoh/bytes",
                SampleKind::Put,
                &[0xA5; 300_000],
            ),
            sample("robot/1/pose", "zenoh/bytes", SampleKind::Delete, b""),
            sample(
                "robot/1/pose",
                "application/json",
                SampleKind::Put,
                b"{\"x\":2}",
            ),
        ];
        samples[1].attachment = Some(b"meta".to_vec());
        for (i, s) in samples.iter_mut().enumerate() {
            s.time_ns = 1_700_000_000_000_000_000 + i as u64 * 1_000_000;
        }
        for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
            let mut recorder = Recorder::create(Cursor::new(Vec::new()), compression).unwrap();
            for s in &samples {
                recorder.write(s).unwrap();
            }
            assert_eq!(recorder.samples(), 5);
            let (written, file) = recorder.finish().unwrap();
            assert_eq!(written, 5);
            let read: Vec<Recorded> = Playback::new(Cursor::new(file.into_inner()))
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(read, samples, "{compression:?}");
        }
    }

    #[test]
    fn hlc_time_converts_to_nanoseconds() {
        assert_eq!(ntp64_to_ns(0), 0);
        assert_eq!(ntp64_to_ns(5 << 32), 5_000_000_000);
        assert_eq!(ntp64_to_ns((5 << 32) | (1 << 31)), 5_500_000_000);
    }
}
