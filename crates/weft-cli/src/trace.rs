//! Decoding captured connections: finds how each connection is framed (stream, datagram
//! or scouting), follows the session's state (compression and low-latency switch on after
//! the Open exchange), reassembles fragments, and turns every message into a JSON record.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};
use weft_proto::batch::defrag::{Defragmented, Defragmenter};
use weft_proto::batch::framing::{next_batch, PrefixWidth};
use weft_proto::batch::{BatchItem, BatchReader};
use weft_proto::core::Bits;
use weft_proto::network::NetworkMessage;
use weft_proto::scouting::ScoutingMessage;
use weft_proto::transport::TransportMessage;
use weft_proto::{DecodeError, DecodeErrorKind};

use crate::capture::{Capture, Connection, Dir, Segment};
use crate::json::{self, Style};

/// How a connection's bytes are cut into batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// A byte stream with a length before each batch (TCP, Unix sockets).
    Stream,
    /// One batch per datagram (UDP).
    Datagram,
    /// One scouting message per datagram.
    Scouting,
}

impl Framing {
    /// The framing's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Stream => "stream",
            Self::Datagram => "datagram",
            Self::Scouting => "scouting",
        }
    }
}

/// Decoding options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Force a framing instead of detecting it.
    pub framing: Option<Framing>,
    /// How much of payloads to show.
    pub style: Style,
}

/// One decoded message, ready to print.
#[derive(Debug, Clone)]
pub struct Record {
    /// The message as JSON (with `conn`, `dir`, `line` and `type` first).
    pub value: Value,
}

/// A batch whose re-encoding differs from its bytes.
#[derive(Debug, Clone)]
pub struct Mismatch {
    /// 1-based connection number.
    pub conn: usize,
    /// Direction.
    pub dir: Dir,
    /// Line where the batch starts.
    pub line: usize,
    /// The batch as captured (decompressed if it was compressed).
    pub original: Vec<u8>,
    /// What the encoder wrote for the decoded messages.
    pub reencoded: Vec<u8>,
}

/// Everything decoded from a capture.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Messages in capture order.
    pub records: Vec<Record>,
    /// Batches that did not re-encode to the same bytes.
    pub mismatches: Vec<Mismatch>,
    /// The framing used for each connection.
    pub framings: Vec<Framing>,
}

/// Input that does not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// 1-based connection number.
    pub conn: usize,
    /// Direction of the offending bytes.
    pub dir: Dir,
    /// 1-based input line holding the offending byte.
    pub line: usize,
    /// Offset of the offending byte within that line's bytes.
    pub offset: usize,
    /// What was wrong.
    pub reason: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, byte {} (connection {}, direction {}): {}",
            self.line,
            self.offset,
            self.conn,
            self.dir.symbol(),
            self.reason
        )
    }
}

impl std::error::Error for TraceError {}

/// Decodes every connection of a capture.
///
/// Decoding stops at the first error; the report then holds what was decoded before it.
pub fn decode_capture(capture: &Capture, opts: &Options) -> (Report, Option<TraceError>) {
    let mut report = Report::default();
    for (i, conn) in capture.connections.iter().enumerate() {
        let number = i + 1;
        let (framing, decoded, error) = decode_connection(number, conn, opts);
        report.framings.push(framing);
        report.records.extend(decoded.records);
        report.mismatches.extend(decoded.mismatches);
        if error.is_some() {
            return (report, error);
        }
    }
    (report, None)
}

fn decode_connection(
    number: usize,
    conn: &Connection,
    opts: &Options,
) -> (Framing, Report, Option<TraceError>) {
    let attempt = |f: Framing| ConnDecoder::new(number, f, opts.style).run(conn);
    if let Some(f) = opts.framing {
        let (r, e) = attempt(f);
        return (f, r, e);
    }
    let Some(first) = conn.segments.first() else {
        return (Framing::Stream, Report::default(), None);
    };
    let scouting_header = first.bytes.len() > 1
        && matches!(first.bytes[0] & 0x1F, 0x01 | 0x02)
        && first.bytes[1] == weft_proto::VERSION;
    if scouting_header && ScoutingMessage::decode(&first.bytes).is_ok() {
        if let (r, None) = attempt(Framing::Scouting) {
            return (Framing::Scouting, r, None);
        }
    }
    // A datagram link starts with a bare Init (header id 1, version 9); a stream with a
    // length. Try the likelier one first, then the other.
    let looks_like_datagram = first.bytes.len() > 1
        && first.bytes[0] & 0x1F == weft_proto::transport::mid::INIT
        && first.bytes[1] == weft_proto::VERSION;
    let order = if looks_like_datagram {
        [Framing::Datagram, Framing::Stream]
    } else {
        [Framing::Stream, Framing::Datagram]
    };
    match attempt(order[0]) {
        (r, None) => (order[0], r, None),
        (r, Some(e)) => match attempt(order[1]) {
            (r2, None) => (order[1], r2, None),
            _ => (order[0], r, Some(e)),
        },
    }
}

/// Maps offsets of a direction's concatenated stream back to input lines.
#[derive(Debug, Default)]
struct LineMap {
    /// (stream offset of the line's first byte, line number), in order.
    starts: Vec<(usize, usize)>,
}

impl LineMap {
    fn locate(&self, offset: usize) -> (usize, usize) {
        let idx = self.starts.partition_point(|(start, _)| *start <= offset);
        match idx.checked_sub(1).and_then(|i| self.starts.get(i)) {
            Some(&(start, line)) => (line, offset - start),
            None => (0, offset),
        }
    }
}

/// Per-direction decoding state.
#[derive(Debug, Default)]
struct DirState {
    stream: Vec<u8>,
    consumed: usize,
    lines: LineMap,
    prefix: PrefixWidth,
    opened: bool,
    defrag: HashMap<(bool, u8), (Defragmenter, usize)>,
}

/// What the handshake negotiated.
#[derive(Debug, Default, Clone, Copy)]
struct Negotiated {
    syn: Option<(bool, bool, bool)>,
    ack: Option<(bool, bool, bool)>,
    sn_bits: Option<Bits>,
}

impl Negotiated {
    fn both(&self, pick: impl Fn((bool, bool, bool)) -> bool) -> bool {
        matches!((self.syn, self.ack), (Some(s), Some(a)) if pick(s) && pick(a))
    }

    fn compression(&self) -> bool {
        self.both(|f| f.0)
    }

    fn low_latency(&self) -> bool {
        self.both(|f| f.1)
    }

    fn markers(&self) -> bool {
        self.both(|f| f.2)
    }
}

/// Reassembly bound of the decoder (the reference's default `max_message_size`).
const MAX_MESSAGE: usize = 1 << 30;

struct ConnDecoder {
    number: usize,
    framing: Framing,
    style: Style,
    negotiated: Negotiated,
    out: DirState,
    inb: DirState,
    report: Report,
}

impl ConnDecoder {
    fn new(number: usize, framing: Framing, style: Style) -> Self {
        Self {
            number,
            framing,
            style,
            negotiated: Negotiated::default(),
            out: DirState::default(),
            inb: DirState::default(),
            report: Report::default(),
        }
    }

    fn state(&mut self, dir: Dir) -> &mut DirState {
        match dir {
            Dir::Out => &mut self.out,
            Dir::In => &mut self.inb,
        }
    }

    fn run(mut self, conn: &Connection) -> (Report, Option<TraceError>) {
        let error = self.run_segments(conn).err();
        (self.report, error)
    }

    fn run_segments(&mut self, conn: &Connection) -> Result<(), TraceError> {
        for seg in &conn.segments {
            match self.framing {
                Framing::Scouting => self.scouting(seg)?,
                Framing::Datagram => {
                    let mut lines = LineMap::default();
                    lines.starts.push((0, seg.line));
                    self.batch(seg.dir, &seg.bytes, 0, seg.line, &lines)?;
                }
                Framing::Stream => self.stream(seg)?,
            }
        }
        if self.framing == Framing::Stream {
            for dir in [Dir::Out, Dir::In] {
                let st = self.state(dir);
                if st.consumed < st.stream.len() {
                    let (line, offset) = st.lines.locate(st.consumed);
                    let missing = match st.prefix.read(&st.stream[st.consumed..]) {
                        Some(len) => st.consumed + st.prefix.len() + len - st.stream.len(),
                        None => st.prefix.len() - (st.stream.len() - st.consumed),
                    };
                    return Err(self.error(
                        dir,
                        line,
                        offset,
                        format!("the stream ends inside a batch ({missing} byte(s) missing)"),
                    ));
                }
            }
        }
        Ok(())
    }

    fn error(&self, dir: Dir, line: usize, offset: usize, reason: String) -> TraceError {
        TraceError {
            conn: self.number,
            dir,
            line,
            offset,
            reason,
        }
    }

    fn scouting(&mut self, seg: &Segment) -> Result<(), TraceError> {
        let msg = ScoutingMessage::decode(&seg.bytes)
            .map_err(|e| self.error(seg.dir, seg.line, e.offset, e.kind.to_string()))?;
        let mut reencoded = Vec::new();
        msg.encode(&mut reencoded)
            .map_err(|e| self.error(seg.dir, seg.line, 0, format!("re-encoding: {e}")))?;
        self.check(seg.dir, seg.line, &seg.bytes, reencoded);
        let value = json::scouting(&msg);
        self.emit(seg.dir, seg.line, value);
        Ok(())
    }

    fn stream(&mut self, seg: &Segment) -> Result<(), TraceError> {
        {
            let st = self.state(seg.dir);
            let start = st.stream.len();
            st.lines.starts.push((start, seg.line));
            st.stream.extend_from_slice(&seg.bytes);
        }
        loop {
            let st = self.state(seg.dir);
            let (pos, prefix) = (st.consumed, st.prefix);
            // A low-latency link announces 4-byte lengths, yet the link layer still sends
            // its final Close with the ordinary 2-byte prefix: a length over the largest
            // batch (65535) can only be such a 2-byte-framed message.
            let prefix = match prefix.read(&st.stream[pos..]) {
                Some(len) if prefix == PrefixWidth::U32 && len > usize::from(u16::MAX) => {
                    PrefixWidth::U16
                }
                _ => prefix,
            };
            let batch = match next_batch(&st.stream, pos, prefix) {
                Ok(Some((start, batch))) => (start, batch.to_vec()),
                // Incomplete: wait for the next segment of this direction.
                Ok(None) | Err(_) => return Ok(()),
            };
            let (start, bytes) = batch;
            let st = self.state(seg.dir);
            st.consumed = start + bytes.len();
            let (line, _) = st.lines.locate(pos);
            let lines = std::mem::take(&mut st.lines);
            let result = self.batch(seg.dir, &bytes, start, line, &lines);
            self.state(seg.dir).lines = lines;
            result?;
        }
    }

    fn emit(&mut self, dir: Dir, line: usize, value: Value) {
        let mut m = Map::new();
        m.insert("dir".into(), Value::from(dir.symbol()));
        let mut fields = match value {
            Value::Object(fields) => fields,
            _ => Map::new(),
        };
        if let Some(kind) = fields.shift_remove("type") {
            m.insert("type".into(), kind);
        }
        m.insert("conn".into(), Value::from(self.number));
        m.insert("line".into(), Value::from(line));
        m.extend(fields);
        self.report.records.push(Record {
            value: Value::Object(m),
        });
    }

    fn check(&mut self, dir: Dir, line: usize, original: &[u8], reencoded: Vec<u8>) {
        if reencoded != original {
            self.report.mismatches.push(Mismatch {
                conn: self.number,
                dir,
                line,
                original: original.to_vec(),
                reencoded,
            });
        }
    }

    /// Decodes one batch that starts at `base` of the direction's stream.
    fn batch(
        &mut self,
        dir: Dir,
        raw: &[u8],
        base: usize,
        line: usize,
        lines: &LineMap,
    ) -> Result<(), TraceError> {
        let compressed = self.negotiated.compression() && self.state(dir).opened;
        let low_latency = self.negotiated.low_latency() && self.state(dir).opened;
        let mut scratch = Vec::new();
        let (plain, plain_base): (&[u8], Option<usize>) = if compressed {
            let compressed_payload = raw.first().is_some_and(|h| h & 1 == 1);
            let plain = weft_proto::batch::compression::unwrap_batch(
                raw,
                &mut scratch,
                usize::from(u16::MAX),
            )
            .map_err(|e| {
                let (l, o) = lines.locate(base + e.offset);
                self.error(dir, l, o, e.kind.to_string())
            })?;
            (plain, (!compressed_payload).then_some(base + 1))
        } else {
            (raw, Some(base))
        };
        let locate = |e: DecodeError| match plain_base {
            Some(b) => lines.locate(b + e.offset),
            // Inside a decompressed batch, point at the batch itself.
            None => lines.locate(base),
        };
        let mut items = Vec::new();
        for item in BatchReader::new(plain).low_latency(low_latency) {
            match item {
                Ok(it) => items.push(it),
                Err(e) => {
                    let (l, o) = locate(e);
                    return Err(self.error(dir, l, o, e.kind.to_string()));
                }
            }
        }
        let mut reencoded = Vec::with_capacity(plain.len());
        for it in &items {
            it.encode(&mut reencoded)
                .map_err(|e| self.error(dir, line, 0, format!("re-encoding: {e}")))?;
        }
        let original = plain.to_vec();
        self.check(dir, line, &original, reencoded);
        self.records(dir, line, &items)
    }

    fn records(
        &mut self,
        dir: Dir,
        line: usize,
        items: &[BatchItem<'_>],
    ) -> Result<(), TraceError> {
        let mut frame: Option<(Map<String, Value>, Vec<Value>)> = None;
        for it in items {
            match it {
                BatchItem::Network(n) => {
                    let v = json::network(n, self.style);
                    match frame.as_mut() {
                        Some((_, msgs)) => msgs.push(v),
                        None => self.emit(dir, line, v),
                    }
                }
                BatchItem::Frame(h) => {
                    self.flush_frame(dir, line, frame.take());
                    frame = Some((json::frame_header(h), Vec::new()));
                }
                BatchItem::Transport(t) => {
                    self.flush_frame(dir, line, frame.take());
                    self.transport(dir, line, t)?;
                }
            }
        }
        self.flush_frame(dir, line, frame);
        Ok(())
    }

    fn flush_frame(
        &mut self,
        dir: Dir,
        line: usize,
        frame: Option<(Map<String, Value>, Vec<Value>)>,
    ) {
        if let Some((mut m, msgs)) = frame {
            m.insert("messages".into(), Value::from(msgs));
            self.emit(dir, line, Value::Object(m));
        }
    }

    fn transport(
        &mut self,
        dir: Dir,
        line: usize,
        t: &TransportMessage<'_>,
    ) -> Result<(), TraceError> {
        self.emit(dir, line, json::transport(t, self.style));
        match t {
            TransportMessage::Init(init) => {
                let flags = (
                    init.compression,
                    init.low_latency,
                    init.patch.unwrap_or(0) >= 1,
                );
                if init.is_ack() {
                    self.negotiated.ack = Some(flags);
                    self.negotiated.sn_bits = Some(init.resolution.frame_sn());
                } else {
                    self.negotiated.syn = Some(flags);
                }
            }
            TransportMessage::Open(_) => {
                let ll = self.negotiated.low_latency();
                let st = self.state(dir);
                st.opened = true;
                if ll {
                    st.prefix = PrefixWidth::U32;
                }
            }
            TransportMessage::Close(_) => {
                // The low-latency link writes its Close with a 4-byte prefix, then the
                // link layer may send another Close with the normal 2-byte prefix.
                self.state(dir).prefix = PrefixWidth::U16;
            }
            TransportMessage::Fragment(f) => self.fragment(dir, line, f)?,
            _ => {}
        }
        Ok(())
    }

    fn fragment(
        &mut self,
        dir: Dir,
        line: usize,
        f: &weft_proto::transport::Fragment<'_>,
    ) -> Result<(), TraceError> {
        let markers = self.negotiated.markers();
        let bits = self.negotiated.sn_bits.unwrap_or(Bits::U32);
        let key = (
            f.header.reliability.is_reliable(),
            f.header.priority.to_u8(),
        );
        let style = self.style;
        let number = self.number;
        let st = self.state(dir);
        let (defrag, count) = st
            .defrag
            .entry(key)
            .or_insert_with(|| (Defragmenter::new(MAX_MESSAGE, bits, markers), 0));
        let value = match defrag.push(&f.header, f.payload) {
            Ok(Defragmented::Pending) => {
                *count += 1;
                None
            }
            Ok(Defragmented::Dropped) => {
                *count = 0;
                None
            }
            Ok(Defragmented::Complete(bytes)) => {
                let fragments = *count + 1;
                *count = 0;
                let msg = NetworkMessage::decode_exact(bytes)
                    .map_err(|e| reassembled_error(number, dir, line, e))?;
                let mut v = json::network(&msg, style);
                if let Value::Object(m) = &mut v {
                    m.insert(
                        "reassembled".into(),
                        serde_json::json!({ "fragments": fragments, "bytes": bytes.len() }),
                    );
                }
                Some(v)
            }
            Err(e) => {
                *count = 0;
                return Err(self.error(dir, line, 0, format!("fragment: {e}")));
            }
        };
        if let Some(v) = value {
            self.emit(dir, line, v);
        }
        Ok(())
    }
}

fn reassembled_error(conn: usize, dir: Dir, line: usize, e: DecodeError) -> TraceError {
    let reason = match e.kind {
        DecodeErrorKind::Truncated { .. } => format!("reassembled message: {e}"),
        _ => format!("reassembled message, byte {}: {}", e.offset, e.kind),
    };
    TraceError {
        conn,
        dir,
        line,
        offset: 0,
        reason,
    }
}
