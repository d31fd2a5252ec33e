//! TLS 1.3 records after the handshake, sealed and opened by weft (RFC 8446 §5.2) with the
//! traffic keys rustls hands over once it has finished the handshake.
//!
//! ```text
//!  0        1        3        5                           5+len
//! +--------+--------+--------+----------------------------+
//! | 0x17   | 0x0303 | len    | AEAD(inner, aad=header)    |   len ≤ 2^14 + 256
//! +--------+--------+--------+----------------------------+
//!  inner = content ‖ content type (1 byte) ‖ zero padding; the AEAD adds a 16-byte tag
//!  nonce = iv XOR the record's sequence number (big-endian, right-aligned)
//! ```
//!
//! A [`Sealer`] appends records to a buffer the caller writes from: the plaintext is copied
//! once, into that buffer, and encrypted where it lies. An [`Opener`] decrypts a record
//! where it was read, moving its plaintext over the header (and the tags of the records
//! before it) in the same pass. Neither does I/O; both are tested against rustls's own
//! record layer, here and in the differential run (`differential`, a fuzz target).

use std::io::IoSlice;

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, NONCE_LEN};
use rustls::ConnectionTrafficSecrets;
use thiserror::Error;

/// Bytes of a record's header.
pub(crate) const HEADER: usize = 5;
/// Most plaintext in one record (2^14).
pub(crate) const MAX_PLAINTEXT: usize = 1 << 14;
/// Most bytes after a record's header (2^14 + 256).
pub(crate) const MAX_CIPHERTEXT: usize = MAX_PLAINTEXT + 256;
/// The largest record, header included.
pub(crate) const MAX_RECORD: usize = HEADER + MAX_CIPHERTEXT;
/// The AEAD tag of every suite TLS 1.3 defines.
const TAG: usize = 16;
/// What sealing adds to the plaintext of a record: header, content type, tag.
pub(crate) const OVERHEAD: usize = HEADER + 1 + TAG;

/// The outer content type of every protected record.
const APPLICATION_DATA: u8 = 23;
/// The legacy version every TLS 1.3 record carries.
const LEGACY_VERSION: [u8; 2] = [3, 3];

/// What a protected record holds (its inner content type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    /// Application data: weft's batches.
    Data,
    /// Handshake messages after the handshake (a key update, a session ticket).
    Handshake,
    /// An alert (close_notify...).
    Alert,
}

impl Content {
    const fn byte(self) -> u8 {
        match self {
            Self::Data => 23,
            Self::Handshake => 22,
            Self::Alert => 21,
        }
    }
}

/// A record that cannot be opened, or keys that cannot be used.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum RecordError {
    /// The outer content type is not application data.
    #[error("a record of type {0} after the handshake")]
    UnexpectedType(u8),
    /// The length in the header is beyond what TLS 1.3 allows.
    #[error("a record of {0} bytes (at most {MAX_CIPHERTEXT})")]
    Overflow(usize),
    /// A record decrypted to more than TLS 1.3 allows (content, type and padding).
    #[error("a record of {0} bytes of plaintext with its type and padding (at most 2^14 + 1)")]
    PlaintextOverflow(usize),
    /// The AEAD refused the record (altered, or sealed with other keys).
    #[error("a record that does not decrypt (bad_record_mac)")]
    BadMac,
    /// The inner content type is missing or unknown.
    #[error("a record whose inner content type is {0:?}")]
    BadInnerType(Option<u8>),
    /// The sequence numbers of these keys are spent.
    #[error("the record sequence numbers are exhausted")]
    Exhausted,
    /// Keys rustls gave that ring cannot use.
    #[error("unusable traffic keys")]
    Keys,
}

/// One direction's AEAD key, IV and next sequence number.
struct Keys {
    key: LessSafeKey,
    iv: [u8; NONCE_LEN],
    seq: u64,
}

impl Keys {
    fn new(secrets: &ConnectionTrafficSecrets, seq: u64) -> Result<Self, RecordError> {
        let (algorithm, key, iv) = match secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (&ring::aead::AES_128_GCM, key, iv),
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (&ring::aead::AES_256_GCM, key, iv),
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                (&ring::aead::CHACHA20_POLY1305, key, iv)
            }
            _ => return Err(RecordError::Keys),
        };
        let key = UnboundKey::new(algorithm, key.as_ref()).map_err(|_| RecordError::Keys)?;
        let iv: [u8; NONCE_LEN] = iv.as_ref().try_into().map_err(|_| RecordError::Keys)?;
        Ok(Self {
            key: LessSafeKey::new(key),
            iv,
            seq,
        })
    }

    /// The nonce of the next record, and the sequence number moved on.
    fn next_nonce(&mut self) -> Result<Nonce, RecordError> {
        let mut nonce = self.iv;
        for (n, s) in nonce[NONCE_LEN - 8..]
            .iter_mut()
            .zip(self.seq.to_be_bytes())
        {
            *n ^= s;
        }
        self.seq = self.seq.checked_add(1).ok_or(RecordError::Exhausted)?;
        Ok(Nonce::assume_unique_for_key(nonce))
    }
}

/// Seals records for one direction of a link.
pub(crate) struct Sealer {
    keys: Keys,
    /// Records these keys may seal before they are replaced (the suite's confidentiality
    /// limit, less a margin for the key update itself).
    limit: u64,
}

impl Sealer {
    /// Keys from rustls, `seq` records already sealed with them, `limit` the most records
    /// they may seal.
    pub(crate) fn new(
        secrets: &ConnectionTrafficSecrets,
        seq: u64,
        limit: u64,
    ) -> Result<Self, RecordError> {
        Ok(Self {
            keys: Keys::new(secrets, seq)?,
            limit,
        })
    }

    /// Whether these keys must be replaced before the next record of data (a key update,
    /// sealed with them, goes first).
    pub(crate) fn spent(&self) -> bool {
        self.keys.seq >= self.limit
    }

    /// Makes the keys spent after `limit` records (to test key updates).
    #[cfg(test)]
    pub(crate) fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Replaces the keys (after a key update was sealed with the old ones).
    pub(crate) fn rekey(&mut self, secrets: &ConnectionTrafficSecrets) -> Result<(), RecordError> {
        self.keys = Keys::new(secrets, 0)?;
        Ok(())
    }

    /// Appends to `out` records holding up to `most` bytes of the plaintext in `bufs`
    /// (taken in order, at most [`MAX_PLAINTEXT`] to a record); returns how many bytes
    /// were taken.
    pub(crate) fn seal_data(
        &mut self,
        bufs: &[IoSlice<'_>],
        most: usize,
        out: &mut Vec<u8>,
    ) -> Result<usize, RecordError> {
        let mut taken = 0;
        let mut slices = bufs.iter().map(|b| &b[..]).filter(|b| !b.is_empty());
        let mut current: &[u8] = slices.next().unwrap_or_default();
        while taken < most && !current.is_empty() {
            let record_most = MAX_PLAINTEXT.min(most - taken);
            let start = self.begin(out);
            let mut in_record = 0;
            while in_record < record_most && !current.is_empty() {
                let n = current.len().min(record_most - in_record);
                out.extend_from_slice(&current[..n]);
                current = &current[n..];
                in_record += n;
                if current.is_empty() {
                    current = slices.next().unwrap_or_default();
                }
            }
            self.finish(out, start, Content::Data)?;
            taken += in_record;
        }
        Ok(taken)
    }

    /// Appends one record of `content` holding `body`.
    pub(crate) fn seal(
        &mut self,
        content: Content,
        body: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), RecordError> {
        let start = self.begin(out);
        out.extend_from_slice(body);
        self.finish(out, start, content)
    }

    /// Reserves the header of a record at the end of `out`; returns where it starts.
    fn begin(&self, out: &mut Vec<u8>) -> usize {
        let start = out.len();
        out.reserve(MAX_PLAINTEXT + OVERHEAD);
        out.extend_from_slice(&[0; HEADER]);
        start
    }

    /// Seals the plaintext after the header at `start` as a record of `content`.
    fn finish(
        &mut self,
        out: &mut Vec<u8>,
        start: usize,
        content: Content,
    ) -> Result<(), RecordError> {
        out.push(content.byte());
        let sealed_len = out.len() - start - HEADER + TAG;
        let header = [
            APPLICATION_DATA,
            LEGACY_VERSION[0],
            LEGACY_VERSION[1],
            (sealed_len >> 8) as u8,
            sealed_len as u8,
        ];
        out[start..start + HEADER].copy_from_slice(&header);
        let nonce = match self.keys.next_nonce() {
            Ok(n) => n,
            Err(e) => {
                out.truncate(start);
                return Err(e);
            }
        };
        let tag = self
            .keys
            .key
            .seal_in_place_separate_tag(nonce, Aad::from(header), &mut out[start + HEADER..])
            .map_err(|_| RecordError::Keys)?;
        out.extend_from_slice(tag.as_ref());
        Ok(())
    }
}

/// A record opened where it lies.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Opened {
    /// What it holds.
    pub(crate) content: Content,
    /// How long its plaintext is (at the start of the buffer it was opened in).
    pub(crate) plaintext_len: usize,
    /// The record's whole length (header included): where the next one starts.
    pub(crate) len: usize,
}

/// Opens records for one direction of a link.
pub(crate) struct Opener {
    keys: Keys,
}

impl Opener {
    /// Keys from rustls, `seq` records already opened with them.
    pub(crate) fn new(secrets: &ConnectionTrafficSecrets, seq: u64) -> Result<Self, RecordError> {
        Ok(Self {
            keys: Keys::new(secrets, seq)?,
        })
    }

    /// Replaces the keys (after the peer's key update).
    pub(crate) fn rekey(&mut self, secrets: &ConnectionTrafficSecrets) -> Result<(), RecordError> {
        self.keys = Keys::new(secrets, 0)?;
        Ok(())
    }

    /// The length of the record at the start of `buf`, once its header is there.
    pub(crate) fn record_len(buf: &[u8]) -> Result<Option<usize>, RecordError> {
        let Some(header) = buf.get(..HEADER) else {
            return Ok(None);
        };
        if header[0] != APPLICATION_DATA {
            return Err(RecordError::UnexpectedType(header[0]));
        }
        let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
        if len > MAX_CIPHERTEXT {
            return Err(RecordError::Overflow(len));
        }
        Ok(Some(HEADER + len))
    }

    /// Opens the record at the start of `buf`, its plaintext moved to the start of `buf`
    /// (over the header); `None` while the record is not all there.
    pub(crate) fn open(&mut self, buf: &mut [u8]) -> Result<Option<Opened>, RecordError> {
        let Some(len) = Self::record_len(buf)? else {
            return Ok(None);
        };
        if buf.len() < len {
            return Ok(None);
        }
        self.open_into(&mut buf[..len], 0).map(Some)
    }

    /// Opens the record that is the end of `buf` from `at` on, decrypting its plaintext
    /// to the start of `buf` in the same pass (the bytes before `at` are overwritten):
    /// records read one after another are turned into contiguous plaintext without a
    /// copy of their own. `buf` must end where the record ends ([`Opener::record_len`]).
    pub(crate) fn open_into(&mut self, buf: &mut [u8], at: usize) -> Result<Opened, RecordError> {
        let mut header = [0; HEADER];
        header.copy_from_slice(&buf[at..at + HEADER]);
        let len = buf.len() - at;
        let nonce = self.keys.next_nonce()?;
        let plaintext = self
            .keys
            .key
            .open_within(nonce, Aad::from(header), buf, at + HEADER..)
            .map_err(|_| RecordError::BadMac)?;
        // The content, its type and its padding (RFC 8446 §5.4).
        if plaintext.len() > MAX_PLAINTEXT + 1 {
            return Err(RecordError::PlaintextOverflow(plaintext.len()));
        }
        // The content type is the last byte that is not padding.
        let Some(last) = plaintext.iter().rposition(|&b| b != 0) else {
            return Err(RecordError::BadInnerType(None));
        };
        let content = match plaintext[last] {
            23 => Content::Data,
            22 => Content::Handshake,
            21 => Content::Alert,
            other => return Err(RecordError::BadInnerType(Some(other))),
        };
        Ok(Opened {
            content,
            plaintext_len: last,
            len,
        })
    }
}

#[cfg(test)]
mod tests;
