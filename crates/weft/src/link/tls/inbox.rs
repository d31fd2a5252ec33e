//! Ciphertext read from a TLS link's socket in large reads and handed to rustls from
//! memory. rustls reads a socket at most a few KiB at a time (its own buffering), which
//! at gigabytes a second means a system call for every few KiB; reading [`READ_SIZE`] at
//! once and feeding rustls from the buffer costs a copy in memory instead.
//!
//! The buffer is kept while ciphertext comes (one allocation per burst, not per read)
//! and freed once the socket has nothing more and rustls has taken everything: an idle
//! link keeps nothing.

use std::io::{self, Read};

/// The most ciphertext read from the socket at once.
pub(crate) const READ_SIZE: usize = 64 * 1024;

/// Ciphertext read and not yet taken by rustls.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    /// Empty, or [`READ_SIZE`] bytes of which `start..end` wait for rustls.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// What filling the inbox from the socket gave.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Filled {
    /// This many bytes.
    Bytes(usize),
    /// The end of the stream.
    End,
}

impl Inbox {
    /// Whether rustls has taken everything read.
    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Reads what the socket has, up to [`READ_SIZE`], once the inbox is empty (it is a
    /// no-op otherwise: `Bytes(0)`). A socket with nothing more (an error, `WouldBlock`
    /// included, or its end) frees the buffer.
    pub(crate) fn fill(&mut self, socket: &mut impl Read) -> io::Result<Filled> {
        if !self.is_empty() {
            return Ok(Filled::Bytes(0));
        }
        if self.buf.is_empty() {
            self.buf = vec![0; READ_SIZE];
        }
        (self.start, self.end) = (0, 0);
        match socket.read(&mut self.buf) {
            Ok(0) => {
                self.buf = Vec::new();
                Ok(Filled::End)
            }
            Ok(n) => {
                self.end = n;
                Ok(Filled::Bytes(n))
            }
            Err(e) => {
                self.buf = Vec::new();
                Err(e)
            }
        }
    }

    /// Hands rustls what it takes of the ciphertext waiting (`feed` reads from the reader
    /// it is given, as `rustls::Connection::read_tls` does); returns how much it took.
    pub(crate) fn feed(
        &mut self,
        feed: impl FnOnce(&mut &[u8]) -> io::Result<usize>,
    ) -> io::Result<usize> {
        let mut waiting = &self.buf[self.start..self.end];
        let taken = feed(&mut waiting)?;
        self.start += taken;
        Ok(taken)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A socket that gives `chunks` one per read, then would block.
    struct Chunks(Vec<Vec<u8>>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let chunk = self.0.remove(0);
            buf[..chunk.len()].copy_from_slice(&chunk);
            Ok(chunk.len())
        }
    }

    #[test]
    fn ciphertext_is_read_once_and_fed_in_pieces_until_taken() {
        let mut socket = Chunks(vec![vec![7; 10_000], vec![]]);
        let mut inbox = Inbox::default();
        assert!(inbox.is_empty());
        assert_eq!(inbox.fill(&mut socket).unwrap(), Filled::Bytes(10_000));
        // A reader taking 4 KiB at a time, as rustls does.
        let mut fed = Vec::new();
        while !inbox.is_empty() {
            // Filling again before everything is taken reads nothing.
            assert_eq!(inbox.fill(&mut socket).unwrap(), Filled::Bytes(0));
            inbox
                .feed(|r| {
                    let mut piece = vec![0; 4096.min(r.len())];
                    let n = r.read(&mut piece)?;
                    fed.extend_from_slice(&piece[..n]);
                    Ok(n)
                })
                .unwrap();
        }
        assert_eq!(fed, vec![7; 10_000]);
        assert_eq!(inbox.fill(&mut socket).unwrap(), Filled::End);
        assert_eq!(inbox.buf.capacity(), 0, "nothing is kept at the end");
        let mut socket = Chunks(vec![vec![1; 3]]);
        assert_eq!(inbox.fill(&mut socket).unwrap(), Filled::Bytes(3));
        inbox.feed(|r| r.read(&mut [0; 3])).unwrap();
        assert!(matches!(inbox.fill(&mut socket), Err(e) if e.kind() == io::ErrorKind::WouldBlock));
        assert_eq!(
            inbox.buf.capacity(),
            0,
            "nothing is kept once the socket is drained"
        );
    }
}
