//! weft's TLS record layer opened to its benchmark (`examples/tls_records.rs`) and to the
//! differential fuzz target against rustls (`fuzz/fuzz_targets/tls_records.rs`), with the
//! feature `tls-internals`. Not part of weft's API: nothing here is stable.

use std::io::{self, IoSlice};

use rustls::ConnectionTrafficSecrets;

use super::record;

pub use super::differential::run as differential;

/// Seals records of application data, as a link's writer does.
pub struct Sealer(record::Sealer);

impl Sealer {
    /// Keys from rustls (its kernel API or `dangerous_extract_secrets`), `seq` records
    /// already sealed with them.
    pub fn new(secrets: &ConnectionTrafficSecrets, seq: u64) -> io::Result<Self> {
        Ok(Self(record::Sealer::new(secrets, seq, u64::MAX)?))
    }

    /// Appends to `out` the records holding all of `bufs` (at most 2^14 bytes to a
    /// record); returns how many plaintext bytes they hold.
    pub fn seal(&mut self, bufs: &[IoSlice<'_>], out: &mut Vec<u8>) -> io::Result<usize> {
        Ok(self.0.seal_data(bufs, usize::MAX, out)?)
    }
}

/// Opens records of application data, as a link's reader does.
pub struct Opener(record::Opener);

impl Opener {
    /// Keys from rustls, `seq` records already opened with them.
    pub fn new(secrets: &ConnectionTrafficSecrets, seq: u64) -> io::Result<Self> {
        Ok(Self(record::Opener::new(secrets, seq)?))
    }

    /// Opens the whole records at the start of `buf` where they lie, the plaintext of each
    /// decrypted to follow the last from the start of `buf` (what a link's read does with
    /// the records the socket put in the reader's buffer). Returns how long the plaintext
    /// is and how many bytes of records were opened. A record that is not application
    /// data is an error.
    pub fn open(&mut self, buf: &mut [u8]) -> io::Result<(usize, usize)> {
        let (mut n, mut at) = (0, 0);
        while let Some(len) = record::Opener::record_len(&buf[at..])? {
            if at + len > buf.len() {
                break;
            }
            let opened = self.0.open_into(&mut buf[n..at + len], at - n)?;
            if opened.content != record::Content::Data {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a record of {:?}", opened.content),
                ));
            }
            n += opened.plaintext_len;
            at += len;
        }
        Ok((n, at))
    }
}
