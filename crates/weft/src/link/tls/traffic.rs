//! A TLS link's two directions after the handshake: [`Rx`] reads records from the socket
//! into one buffer, opens them there and hands out their plaintext; [`Tx`] seals
//! plaintext into records in its own buffer and writes them out. Each has its own lock in
//! the link, so that the thread reading a link and the threads writing it never wait for
//! each other; they meet only on a key update ([`Shared`]).
//!
//! Copies, per byte: received, none of its own when the reader's buffer has room for a
//! whole record (the socket is read into it, and each record's plaintext is decrypted
//! to follow the last: only the start of a record a read ends in is carried over to the
//! next), else one; sent, one (into the buffer it is encrypted in). Both buffers are
//! freed when the link has nothing in flight, so an idle link keeps none.

use std::io::{self, IoSlice, Read, Write};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::handshake::Kernel;
use super::record::{Content, Opener, RecordError, Sealer, MAX_PLAINTEXT, MAX_RECORD, OVERHEAD};

/// The most ciphertext read from the socket at once (rustls alone would read a few KiB
/// per system call).
pub(crate) const READ_SIZE: usize = 64 * 1024;

/// Most sealed bytes a link keeps that the socket has not taken yet: a gathered write
/// of full batches with its records' overhead, so that it leaves in one system call.
pub(crate) const OUTPUT_LIMIT: usize = 4 * 64 * 1024 + 16 * OVERHEAD;

/// Most plaintext sealed before what is sealed is written (two records), where the I/O
/// thread writes a gathered transmit: the socket's reader starts opening the first
/// records while the next are sealed, rather than after a whole gathered write (256 KiB)
/// was sealed. Peer to peer 64 KiB samples over TLS: 64 KiB steps gained half the loss
/// of sealing whole writes, 32 KiB all of it, 16 KiB lost again to the system calls
/// (bench/RESULTS.md, "Over TLS, and sealing in steps"). A sender sealing its own
/// message seals it whole (`write_whole_now`).
pub(crate) const SEAL_STEP: usize = 32 * 1024;

/// The longest handshake message body accepted after the handshake (a session ticket is
/// a few hundred bytes; rustls's limit).
const MAX_HANDSHAKE_MESSAGE: usize = 0xffff;

/// Handshake message types that may come after the handshake.
const NEW_SESSION_TICKET: u8 = 4;
const KEY_UPDATE: u8 = 24;

/// Alert levels and descriptions.
const WARNING: u8 = 1;
const FATAL: u8 = 2;
const CLOSE_NOTIFY: u8 = 0;
const USER_CANCELED: u8 = 90;

/// user_canceled warnings tolerated on a link, key updates between two records of data,
/// empty records in a row (rustls's limits; BoringSSL's for the first two).
const WARNING_ALERTS: u8 = 4;
const KEY_UPDATES: u8 = 32;
const EMPTY_RECORDS: u8 = 32;

/// What the two directions share: rustls's key schedule, and the peer's request that
/// weft update its sending keys.
pub(crate) struct Shared {
    kernel: Mutex<Kernel>,
    update_asked: AtomicBool,
}

impl Shared {
    /// Around the key schedule of a finished handshake.
    pub(crate) fn new(kernel: Kernel) -> Self {
        Self {
            kernel: Mutex::new(kernel),
            update_asked: AtomicBool::new(false),
        }
    }

    /// Makes the next [`Tx::seal`] update the sending keys first (what a peer's request
    /// does), for the differential fuzz target.
    #[cfg(any(test, feature = "tls-internals"))]
    pub(crate) fn ask_update(&self) {
        self.update_asked.store(true, Ordering::Release);
    }

    /// Whether the peer is the server (the one side that sends session tickets).
    fn peer_is_server(&self) -> bool {
        matches!(*self.kernel(), Kernel::Client(_))
    }

    fn kernel(&self) -> std::sync::MutexGuard<'_, Kernel> {
        self.kernel.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many records one key may seal before it is updated: the suite's limit, less
    /// what one turn of [`Tx::seal`] may seal past it.
    pub(crate) fn seal_limit(&self) -> u64 {
        let per_turn = (OUTPUT_LIMIT / MAX_PLAINTEXT + 2) as u64;
        self.kernel()
            .confidentiality_limit()
            .saturating_sub(per_turn)
    }
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

impl From<RecordError> for io::Error {
    fn from(e: RecordError) -> Self {
        invalid(e)
    }
}

/// The receiving direction.
pub(crate) struct Rx {
    opener: Opener,
    /// Empty when idle; else read ciphertext (`start..end` is not opened yet) and, before
    /// it, the plaintext of the last record opened (`plain` is not read yet).
    buf: Vec<u8>,
    plain: Range<usize>,
    start: usize,
    end: usize,
    /// A handshake message begun in a record and continued in the next.
    handshake: Vec<u8>,
    /// The peer's close_notify or the end of its stream.
    ended: bool,
    /// user_canceled warnings received.
    warnings: u8,
    /// Key updates since the last record of data.
    key_updates: u8,
    /// Empty records in a row.
    empty_records: u8,
}

impl Rx {
    /// After the handshake: `ciphertext` is what the handshake read beyond its own
    /// records.
    pub(crate) fn new(opener: Opener, ciphertext: Vec<u8>) -> Self {
        let end = ciphertext.len();
        Self {
            opener,
            buf: ciphertext,
            plain: 0..0,
            start: 0,
            end,
            handshake: Vec::new(),
            ended: false,
            warnings: 0,
            key_updates: 0,
            empty_records: 0,
        }
    }

    /// Whether part of a record is read and waits for the rest.
    #[cfg(any(test, feature = "tls-internals"))]
    pub(crate) fn holds_partial_record(&self) -> bool {
        self.start < self.end
    }

    /// Reads plaintext into `out` from what is buffered and then from `socket`. Fills
    /// `out` unless the socket has nothing more (`nonblocking`: until it would block;
    /// else until one read gave something). `Ok(0)` at the end of the stream: the peer's
    /// close_notify or its TCP end (which Zenoh's links send without a close_notify).
    pub(crate) fn read(
        &mut self,
        socket: &mut impl Read,
        out: &mut [u8],
        nonblocking: bool,
        shared: &Shared,
    ) -> io::Result<usize> {
        let mut n = 0;
        while n < out.len() {
            if !self.plain.is_empty() {
                let k = self.plain.len().min(out.len() - n);
                out[n..n + k].copy_from_slice(&self.buf[self.plain.start..self.plain.start + k]);
                self.plain.start += k;
                n += k;
                continue;
            }
            // Nothing the peer sent after its close_notify is read.
            let opened = if self.ended {
                None
            } else {
                self.opener.open(&mut self.buf[self.start..self.end])?
            };
            if let Some(opened) = opened {
                let at = self.start;
                self.start += opened.len;
                let plaintext = at..at + opened.plaintext_len;
                self.admit(opened.content, opened.plaintext_len)?;
                match opened.content {
                    Content::Data => self.plain = plaintext,
                    Content::Handshake => {
                        let message = self.buf[plaintext].to_vec();
                        self.on_handshake(&message, shared)?;
                    }
                    Content::Alert => {
                        let alert = self.buf[plaintext].to_vec();
                        self.on_alert(&alert)?;
                    }
                }
                continue;
            }
            if self.ended || (n > 0 && !nonblocking) {
                break;
            }
            // With room for a whole record, the socket is read straight into `out`, after
            // the start of a record left from the last read.
            let pending = self.end - self.start;
            let direct = out.len() - n >= pending + MAX_RECORD;
            let read = if direct {
                socket.read(&mut out[n + pending..])
            } else {
                self.make_room()?;
                socket.read(&mut self.buf[self.end..])
            };
            match read {
                Ok(0) if self.start < self.end => {
                    return Err(invalid("the peer's stream ended inside a TLS record"))
                }
                Ok(0) => self.ended = true,
                Ok(k) if direct => {
                    out[n..n + pending].copy_from_slice(&self.buf[self.start..self.end]);
                    (self.start, self.end) = (0, 0);
                    n = self.open_in(out, n, n + pending + k, shared)?;
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    if crate::link::is_timeout(&e) {
                        self.release_if_idle();
                        if n > 0 {
                            break;
                        }
                    }
                    return Err(e);
                }
            }
        }
        Ok(n)
    }

    /// Opens the whole records in `out[n..filled]`, the data of each decrypted to follow
    /// the data before it from `n` on; keeps the start of a record the read ended in.
    /// Returns where the data ends.
    fn open_in(
        &mut self,
        out: &mut [u8],
        mut n: usize,
        filled: usize,
        shared: &Shared,
    ) -> io::Result<usize> {
        let mut at = n;
        while !self.ended {
            let Some(len) = Opener::record_len(&out[at..filled])? else {
                break;
            };
            if at + len > filled {
                break;
            }
            let opened = self.opener.open_into(&mut out[n..at + len], at - n)?;
            let plaintext = n..n + opened.plaintext_len;
            at += len;
            self.admit(opened.content, opened.plaintext_len)?;
            match opened.content {
                Content::Data => n = plaintext.end,
                Content::Handshake => self.on_handshake(&out[plaintext], shared)?,
                Content::Alert => self.on_alert(&out[plaintext])?,
            }
        }
        // Nothing the peer sent after its close_notify is read.
        let rest = if self.ended { 0 } else { filled - at };
        if rest > 0 {
            if self.buf.len() < rest {
                self.buf.resize(MAX_RECORD, 0);
            }
            self.buf[..rest].copy_from_slice(&out[at..filled]);
            (self.start, self.end) = (0, rest);
        }
        Ok(n)
    }

    /// Makes room after `end` for a read: the buffer is allocated if freed, and the
    /// unopened bytes move to its start when the record they begin would not fit.
    fn make_room(&mut self) -> io::Result<()> {
        if self.start == self.end {
            (self.start, self.end) = (0, 0);
        }
        let size = READ_SIZE + MAX_RECORD;
        if self.buf.len() < size {
            self.buf.resize(size, 0);
        }
        let needed = Opener::record_len(&self.buf[self.start..self.end])?.unwrap_or(MAX_RECORD);
        if self.start > 0 && (self.start + needed > self.buf.len() || self.end == self.buf.len()) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        Ok(())
    }

    /// Frees the buffer once everything read is handed out.
    fn release_if_idle(&mut self) {
        if self.start == self.end && self.plain.is_empty() {
            self.buf = Vec::new();
            (self.start, self.end) = (0, 0);
        }
    }

    /// Refuses a record that is not a handshake record while a handshake message is
    /// begun ("handshake messages MUST NOT be interleaved with other record types", RFC
    /// 8446 §5.1), and more than [`EMPTY_RECORDS`] empty records in a row; a record of
    /// data allows [`KEY_UPDATES`] key updates again (rustls's limits).
    fn admit(&mut self, content: Content, len: usize) -> io::Result<()> {
        if content != Content::Handshake && !self.handshake.is_empty() {
            return Err(invalid(format!(
                "a record of {content:?} inside a handshake message"
            )));
        }
        if len > 0 {
            self.empty_records = 0;
        } else if self.empty_records == EMPTY_RECORDS {
            return Err(invalid("too many empty TLS records in a row"));
        } else {
            self.empty_records += 1;
        }
        if content == Content::Data {
            self.key_updates = 0;
        }
        Ok(())
    }

    /// Handles the handshake messages of a record: a server's session tickets are ignored
    /// (weft does not resume sessions); a key update replaces the peer's keys, and asks
    /// for weft's own update when the peer requests it; anything else is refused.
    fn on_handshake(&mut self, plaintext: &[u8], shared: &Shared) -> io::Result<()> {
        self.handshake.extend_from_slice(plaintext);
        loop {
            let Some(&[kind, a, b, c]) = self.handshake.get(..4) else {
                return Ok(());
            };
            let len = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
            if len > MAX_HANDSHAKE_MESSAGE {
                return Err(invalid(format!(
                    "a handshake message of {len} bytes after the handshake"
                )));
            }
            if self.handshake.len() < 4 + len {
                return Ok(());
            }
            match kind {
                // Only a server sends tickets.
                NEW_SESSION_TICKET if shared.peer_is_server() => {}
                KEY_UPDATE => {
                    if self.key_updates == KEY_UPDATES {
                        return Err(invalid("too many key updates without data"));
                    }
                    self.key_updates += 1;
                    // One byte of body, the last of the record.
                    let (&[request @ (0 | 1)], 1) = (&self.handshake[4..], len) else {
                        return Err(invalid(
                            "a malformed key update, or one not at the end of its record",
                        ));
                    };
                    let secrets = shared.kernel().update_rx().map_err(invalid)?;
                    self.opener.rekey(&secrets)?;
                    if request == 1 {
                        shared.update_asked.store(true, Ordering::Release);
                    }
                }
                other => {
                    return Err(invalid(format!(
                        "a handshake message of type {other} after the handshake"
                    )))
                }
            }
            self.handshake.drain(..4 + len);
        }
    }

    /// Handles an alert: close_notify ends the stream, a few user_canceled warnings are
    /// ignored, any other alert closes the link naming it (RFC 8446 §6; an unknown level
    /// is an error, as are more than [`WARNING_ALERTS`] warnings, as rustls has it).
    fn on_alert(&mut self, plaintext: &[u8]) -> io::Result<()> {
        match *plaintext {
            [WARNING | FATAL, CLOSE_NOTIFY] => {
                self.ended = true;
                Ok(())
            }
            [WARNING, USER_CANCELED] if self.warnings < WARNING_ALERTS => {
                self.warnings += 1;
                Ok(())
            }
            [level @ (WARNING | FATAL), description] => Err(invalid(format!(
                "received {} alert: {:?}",
                if level == WARNING { "warning" } else { "fatal" },
                rustls::AlertDescription::from(description)
            ))),
            [level, _] => Err(invalid(format!("an alert of unknown level {level}"))),
            _ => Err(invalid("a malformed TLS alert")),
        }
    }
}

/// The sending direction.
pub(crate) struct Tx {
    sealer: Sealer,
    /// Sealed records; `out[sent..]` is not in the socket yet. Empty when idle.
    out: Vec<u8>,
    sent: usize,
}

impl Tx {
    /// After the handshake.
    pub(crate) fn new(sealer: Sealer) -> Self {
        Self {
            sealer,
            out: Vec::new(),
            sent: 0,
        }
    }

    /// Seals what fits under [`OUTPUT_LIMIT`] of `bufs`, at most `step` bytes of
    /// plaintext ([`SEAL_STEP`] where what is sealed is written in steps); returns how
    /// many plaintext bytes it took. A key update goes first when the peer asked for one
    /// or these keys are spent.
    pub(crate) fn seal(
        &mut self,
        bufs: &[IoSlice<'_>],
        shared: &Shared,
        step: usize,
    ) -> io::Result<usize> {
        if shared.update_asked.swap(false, Ordering::AcqRel) || self.sealer.spent() {
            self.update_keys(shared)?;
        }
        let pending = self.out.len() - self.sent;
        let room = OUTPUT_LIMIT.saturating_sub(pending);
        if room <= OVERHEAD {
            return Ok(0);
        }
        if self.out.capacity() == 0 {
            self.out.reserve(OUTPUT_LIMIT + MAX_RECORD);
        }
        // At most as much plaintext as leaves room for its records' overhead, and at most
        // a step.
        let most = (room - room.div_ceil(MAX_PLAINTEXT) * OVERHEAD).min(step);
        Ok(self.sealer.seal_data(bufs, most, &mut self.out)?)
    }

    /// Seals a key update with the current keys (not asking the peer for its own) and
    /// moves to the next.
    fn update_keys(&mut self, shared: &Shared) -> io::Result<()> {
        self.sealer
            .seal(Content::Handshake, &[KEY_UPDATE, 0, 0, 1, 0], &mut self.out)?;
        let secrets = shared.kernel().update_tx().map_err(invalid)?;
        self.sealer.rekey(&secrets)?;
        Ok(())
    }

    /// Seals a close_notify alert.
    pub(crate) fn close_notify(&mut self) -> io::Result<()> {
        Ok(self
            .sealer
            .seal(Content::Alert, &[1, CLOSE_NOTIFY], &mut self.out)?)
    }

    /// Writes what is sealed, as far as `socket` takes it; `Ok(true)` when some is left
    /// because it would block. Once all is written the buffer is freed.
    pub(crate) fn flush(&mut self, socket: &mut impl Write) -> io::Result<bool> {
        while self.sent < self.out.len() {
            match socket.write(&self.out[self.sent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(k) => self.sent += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                Err(e) => return Err(e),
            }
        }
        self.out = Vec::new();
        self.sent = 0;
        Ok(false)
    }
}

#[cfg(test)]
mod tests;
