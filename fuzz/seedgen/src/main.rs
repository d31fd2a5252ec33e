//! Turns the captured vectors (`*.hex`) into seed corpora for the weft-proto fuzz targets.
//!
//! Usage: `weft-fuzz-seedgen VECTORS_DIR CORPUS_DIR`
//!
//! A `.hex` file holds one payload per line, `> HEX` from the initiator and `< HEX` from
//! the listener, with `# conn ...` lines starting each connection. For every connection
//! and direction the lines are concatenated into the byte stream of that direction and
//! split into batches by their length prefix: 2 bytes, or 4 once a low-latency session is
//! open (after the batch holding that direction's Open); once a compression session is
//! open, each batch starts with the compression header byte. The modes are read from the
//! InitSyn/InitAck extensions. Vectors whose lines do not split as a stream are datagrams
//! (UDP): each line is a whole batch, or a scouting message.
//!
//! Seeds written, one file each, under `CORPUS_DIR/<target>/`:
//! - `transport_batch`: every batch (decompressed, without prefix);
//! - `network_message`: every network message, as its bytes in the batch, and every
//!   message reassembled from fragments;
//! - `scouting`: every datagram that is a scouting message;
//! - `stream_framing`: every direction's stream, after the configuration byte the target
//!   reads (bit 0 low latency, bit 1 compression, bits 2-3 SN resolution, bit 4 First/Drop
//!   markers);
//! - `handshake`: every TCP direction's stream after the byte choosing the side it is
//!   fed to (the initiator's to the acceptor, the listener's to the initiator) and
//!   whether user/password authentication is on;
//! - `serial_framing`: every batch within the serial MTU, framed for a serial line after
//!   an Init frame, after the byte setting the size of the chunks the target feeds.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use weft_proto::batch::compression::unwrap_batch;
use weft_proto::batch::defrag::{Defragmented, Defragmenter};
use weft_proto::batch::framing::{next_batch, PrefixWidth};
use weft_proto::batch::serial;
use weft_proto::batch::{BatchItem, BatchReader};
use weft_proto::core::{Bits, Resolution};
use weft_proto::scouting::ScoutingMessage;
use weft_proto::transport::TransportMessage;

/// One connection of a vector: its payload lines, in capture order.
#[derive(Default)]
struct Conn {
    lines: Vec<(bool, Vec<u8>)>,
}

impl Conn {
    /// The concatenated stream of one direction (`initiator` = the `>` lines).
    fn stream(&self, initiator: bool) -> Vec<u8> {
        self.lines
            .iter()
            .filter(|(i, _)| *i == initiator)
            .flat_map(|(_, b)| b.iter().copied())
            .collect()
    }
}

fn parse_hex(text: &str) -> Result<Vec<Conn>, String> {
    let mut conns: Vec<Conn> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("# conn") {
            conns.push(Conn::default());
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (initiator, hex) = match line.split_at(1) {
            (">", rest) => (true, rest.trim()),
            ("<", rest) => (false, rest.trim()),
            _ => return Err(format!("line {}: neither '>' nor '<'", n + 1)),
        };
        if hex.len() % 2 != 0 {
            return Err(format!("line {}: odd number of hex digits", n + 1));
        }
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|e| format!("line {}: {e}", n + 1))?;
        if conns.is_empty() {
            conns.push(Conn::default());
        }
        conns.last_mut().unwrap().lines.push((initiator, bytes));
    }
    Ok(conns)
}

/// What the Init exchange of a connection negotiated.
#[derive(Clone, Copy, Default)]
struct Modes {
    low_latency: bool,
    compression: bool,
    resolution: Option<Resolution>,
    markers: bool,
}

impl Modes {
    fn config_byte(self) -> u8 {
        let sn = match self.resolution.unwrap_or_default().frame_sn() {
            Bits::U8 => 0,
            Bits::U16 => 1,
            Bits::U32 => 2,
            Bits::U64 => 3,
        };
        u8::from(self.low_latency)
            | (u8::from(self.compression) << 1)
            | (sn << 2)
            | (u8::from(self.markers) << 4)
    }
}

/// Reads the Init of a direction's first batch, if there is one.
fn init_of(stream: &[u8], f: &mut impl FnMut(&weft_proto::transport::Init<'_>)) {
    if let Ok(Some((_, batch))) = next_batch(stream, 0, PrefixWidth::U16) {
        for item in BatchReader::new(batch).flatten() {
            if let BatchItem::Transport(TransportMessage::Init(init)) = item {
                f(&init);
            }
        }
    }
}

fn negotiated(conn: &Conn) -> Modes {
    let (a, b) = (conn.stream(true), conn.stream(false));
    let mut seen = Vec::new();
    for s in [&a, &b] {
        init_of(s, &mut |init| {
            seen.push((
                init.low_latency,
                init.compression,
                init.resolution,
                init.patch.unwrap_or(0),
            ))
        });
    }
    if seen.len() != 2 {
        return Modes::default();
    }
    Modes {
        low_latency: seen.iter().all(|s| s.0),
        compression: seen.iter().all(|s| s.1),
        resolution: Some(seen[1].2),
        markers: seen.iter().all(|s| s.3 >= 1),
    }
}

/// A batch of a stream: its plain bytes and whether it was read in low-latency mode.
struct Batch {
    plain: Vec<u8>,
    low_latency: bool,
}

/// Splits one direction's stream into batches, switching modes after its Open.
fn split_stream(stream: &[u8], modes: Modes) -> Option<Vec<Batch>> {
    let mut out = Vec::new();
    let mut open = false;
    let mut pos = 0;
    let mut scratch = Vec::new();
    loop {
        let low_latency = open && modes.low_latency;
        let width = if low_latency {
            PrefixWidth::U32
        } else {
            PrefixWidth::U16
        };
        let (start, raw) = match next_batch(stream, pos, width) {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(_) => return None,
        };
        pos = start + raw.len();
        let plain = if open && modes.compression {
            unwrap_batch(raw, &mut scratch, usize::from(u16::MAX))
                .ok()?
                .to_vec()
        } else {
            raw.to_vec()
        };
        let saw_open = BatchReader::new(&plain)
            .low_latency(low_latency)
            .flatten()
            .any(|i| matches!(i, BatchItem::Transport(TransportMessage::Open(_))));
        out.push(Batch { plain, low_latency });
        open |= saw_open;
    }
    (!out.is_empty()).then_some(out)
}

/// Writes seed files, counting them.
struct Corpus {
    root: PathBuf,
    written: usize,
}

impl Corpus {
    fn put(&mut self, target: &str, name: &str, bytes: &[u8]) -> std::io::Result<()> {
        let dir = self.root.join(target);
        fs::create_dir_all(&dir)?;
        fs::write(dir.join(name), bytes)?;
        self.written += 1;
        Ok(())
    }

    /// Seeds from one plain batch: the batch, and each network message's bytes.
    fn batch(&mut self, name: &str, b: &Batch, defrag: &mut Defragmenter) -> std::io::Result<()> {
        self.put("transport_batch", name, &b.plain)?;
        if b.plain.len() <= serial::MTU {
            // Fed in chunks of 16 bytes: the exchange's first frame, then the batch's.
            let mut line = vec![15];
            let framed = serial::encode(serial::Flags::INIT, &[], &mut line)
                .and_then(|()| serial::encode(serial::Flags::DATA, &[&b.plain], &mut line));
            if framed.is_ok() {
                self.put("serial_framing", name, &line)?;
            }
        }
        let mut reader = BatchReader::new(&b.plain).low_latency(b.low_latency);
        let mut k = 0;
        loop {
            let before = reader.offset();
            let Some(Ok(item)) = reader.next() else {
                break;
            };
            match item {
                BatchItem::Network(_) => {
                    let bytes = &b.plain[before..reader.offset()];
                    self.put("network_message", &format!("{name}-{k:02}"), bytes)?;
                    k += 1;
                }
                BatchItem::Transport(TransportMessage::Fragment(f)) => {
                    if let Ok(Defragmented::Complete(msg)) = defrag.push(&f.header, f.payload) {
                        let msg = msg.to_vec();
                        self.put("network_message", &format!("{name}-reassembled"), &msg)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn vector(path: &Path, corpus: &mut Corpus) -> Result<(), String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("vector")
        .to_owned();
    let conns = parse_hex(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let io = |e: std::io::Error| e.to_string();
    for (c, conn) in conns.iter().enumerate() {
        let modes = negotiated(conn);
        let dirs = [(true, "i"), (false, "l")];
        let split: Vec<_> = dirs
            .iter()
            .map(|&(initiator, _)| split_stream(&conn.stream(initiator), modes))
            .collect();
        let is_stream = split.iter().all(Option::is_some);
        for (&(initiator, d), batches) in dirs.iter().zip(&split) {
            let mut defrag = Defragmenter::new(
                1 << 24,
                modes.resolution.unwrap_or_default().frame_sn(),
                modes.markers,
            );
            if let (true, Some(batches)) = (is_stream, batches) {
                let mut seed = vec![modes.config_byte()];
                seed.extend(conn.stream(initiator));
                corpus
                    .put("stream_framing", &format!("{stem}-c{c}-{d}"), &seed)
                    .map_err(io)?;
                // The other side's stream, to the acceptor (what the initiator sent) or
                // to the initiator (what the listener sent), without and with
                // user/password authentication.
                let roles: [u8; 2] = if initiator { [1, 3] } else { [0, 2] };
                for role in roles {
                    let mut seed = vec![role];
                    seed.extend(conn.stream(initiator));
                    corpus
                        .put("handshake", &format!("{stem}-c{c}-{d}-{role}"), &seed)
                        .map_err(io)?;
                }
                for (k, b) in batches.iter().enumerate() {
                    corpus
                        .batch(&format!("{stem}-c{c}-{d}-{k:03}"), b, &mut defrag)
                        .map_err(io)?;
                }
                continue;
            }
            // Datagrams: each line is a whole batch or a scouting message.
            let mut framed = vec![modes.config_byte()];
            for (k, (_, line)) in conn
                .lines
                .iter()
                .filter(|(i, _)| *i == initiator)
                .enumerate()
            {
                let name = format!("{stem}-c{c}-{d}-{k:03}");
                if ScoutingMessage::decode(line).is_ok() {
                    corpus.put("scouting", &name, line).map_err(io)?;
                    continue;
                }
                if let Ok(len) = u16::try_from(line.len()) {
                    framed.extend_from_slice(&len.to_le_bytes());
                    framed.extend_from_slice(line);
                }
                let b = Batch {
                    plain: line.clone(),
                    low_latency: false,
                };
                corpus.batch(&name, &b, &mut defrag).map_err(io)?;
            }
            if framed.len() > 1 {
                corpus
                    .put("stream_framing", &format!("{stem}-c{c}-{d}"), &framed)
                    .map_err(io)?;
            }
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, vectors, root] = &args[..] else {
        eprintln!("usage: weft-fuzz-seedgen VECTORS_DIR CORPUS_DIR");
        return ExitCode::from(2);
    };
    let mut paths: Vec<PathBuf> = match fs::read_dir(vectors) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "hex"))
            .collect(),
        Err(e) => {
            eprintln!("{vectors}: {e}");
            return ExitCode::FAILURE;
        }
    };
    paths.sort();
    let mut corpus = Corpus {
        root: PathBuf::from(root),
        written: 0,
    };
    for p in &paths {
        if let Err(e) = vector(p, &mut corpus) {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    }
    if corpus.written == 0 {
        eprintln!("no seed written from {vectors}");
        return ExitCode::FAILURE;
    }
    println!(
        "{} seed files from {} vectors in {}",
        corpus.written,
        paths.len(),
        corpus.root.display()
    );
    ExitCode::SUCCESS
}
