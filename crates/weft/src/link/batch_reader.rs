//! Reading whole batches from a link on a thread that waits for them (a test, or a
//! handshake run to its end): a stream link's bytes are cut with weft-proto's stream
//! framing; a datagram link gives its batches whole.

use std::io::{self, Read};
use std::time::Instant;

use super::{is_timeout, Link, STREAM_BATCH_SIZE, STREAM_PREFIX};

/// Reads length-prefixed batches from a stream link, with large reads split in memory.
#[derive(Debug)]
pub(crate) struct BatchReader {
    link: Link,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl BatchReader {
    /// A reader over `link`.
    pub(crate) fn new(link: Link) -> Self {
        Self {
            link,
            buf: vec![0; 2 * (usize::from(STREAM_BATCH_SIZE) + 2)],
            start: 0,
            end: 0,
        }
    }

    /// The link read from.
    pub(crate) const fn link(&self) -> &Link {
        &self.link
    }

    /// The link read from, to change its settings.
    pub(crate) fn link_mut(&mut self) -> &mut Link {
        &mut self.link
    }

    /// The link, and the bytes read from it but not returned yet (the start of the
    /// batches that came after the last one read).
    pub(crate) fn into_parts(self) -> (Link, Vec<u8>) {
        let rest = self.buf[self.start..self.end].to_vec();
        (self.link, rest)
    }

    /// Reads the next batch. `Ok(None)` on a clean end of stream between batches; a read
    /// timeout surfaces as an error of kind `WouldBlock` or `TimedOut`, and a later call
    /// resumes where it stopped.
    pub(crate) fn next_batch(&mut self) -> io::Result<Option<&[u8]>> {
        self.next_batch_until(None)
    }

    #[cfg(test)]
    /// As [`BatchReader::next_batch`], but the whole batch must arrive before `deadline`
    /// (an error of kind `TimedOut` otherwise), however slowly its bytes trickle in: each
    /// read waits at most for what is left. The read timeout stays changed afterwards.
    pub(crate) fn next_batch_before(&mut self, deadline: Instant) -> io::Result<Option<&[u8]>> {
        self.next_batch_until(Some(deadline))
    }

    /// Sets the read timeout to what is left before `deadline`; `TimedOut` if nothing is.
    fn arm(&mut self, deadline: Option<Instant>) -> io::Result<()> {
        let Some(d) = deadline else {
            return Ok(());
        };
        let left = d.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        self.link.set_read_timeout(Some(left))
    }

    fn next_batch_until(&mut self, deadline: Option<Instant>) -> io::Result<Option<&[u8]>> {
        if self.link.is_datagram() {
            self.arm(deadline)?;
            let n = self.link.receive_batch(&mut self.buf)?;
            return Ok(n.map(|n| &self.buf[..n]));
        }
        loop {
            if let Some((_, taken)) = STREAM_PREFIX.whole_batch(&self.buf[self.start..self.end]) {
                let b = self.start + STREAM_PREFIX.len();
                self.start += taken;
                return Ok(Some(&self.buf[b..self.start]));
            }
            if self.start > 0 && self.buf.len() - self.end < usize::from(STREAM_BATCH_SIZE) + 2 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            self.arm(deadline)?;
            let n = match self.link.read(&mut self.buf[self.end..]) {
                Err(e) if deadline.is_some() && is_timeout(&e) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "deadline passed waiting for a batch",
                    ));
                }
                result => result?,
            };
            if n == 0 {
                return if self.end == self.start {
                    Ok(None)
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the link closed inside a batch",
                    ))
                };
            }
            self.end += n;
        }
    }
}
