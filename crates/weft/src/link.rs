//! Links: the only socket code. Blocking TCP and Unix stream sockets, framed with the
//! 2-byte little-endian batch length.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

use crate::endpoint::{Endpoint, Protocol};

/// Largest batch a stream link carries (length prefix included).
pub const STREAM_BATCH_SIZE: u16 = u16::MAX;

/// An open stream link.
#[derive(Debug)]
pub enum Link {
    /// TCP.
    Tcp(TcpStream),
    /// Unix stream socket.
    Unix(UnixStream),
}

impl Link {
    /// Connects to `endpoint`, giving up after `timeout`.
    pub fn connect(endpoint: &Endpoint, timeout: Duration) -> io::Result<Self> {
        match endpoint.protocol {
            Protocol::Tcp => {
                let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
                for addr in endpoint.address.to_socket_addrs()? {
                    match TcpStream::connect_timeout(&addr, timeout) {
                        Ok(s) => {
                            s.set_nodelay(true)?;
                            return Ok(Self::Tcp(s));
                        }
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
            Protocol::UnixStream => Ok(Self::Unix(UnixStream::connect(&endpoint.address)?)),
            Protocol::Udp => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "UDP links are not supported yet",
            )),
        }
    }

    /// A second handle on the same socket (one reads, the other writes).
    pub fn try_clone(&self) -> io::Result<Self> {
        Ok(match self {
            Self::Tcp(s) => Self::Tcp(s.try_clone()?),
            Self::Unix(s) => Self::Unix(s.try_clone()?),
        })
    }

    /// Sets how long a read may block.
    pub fn set_read_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.set_read_timeout(t),
            Self::Unix(s) => s.set_read_timeout(t),
        }
    }

    /// Sets how long a write may block.
    pub fn set_write_timeout(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Self::Tcp(s) => s.set_write_timeout(t),
            Self::Unix(s) => s.set_write_timeout(t),
        }
    }

    /// Closes both directions.
    pub fn shutdown(&self) {
        let _ = match self {
            Self::Tcp(s) => s.shutdown(Shutdown::Both),
            Self::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }

    /// A description for logs: `tcp/peer-address`.
    pub fn describe(&self) -> String {
        match self {
            Self::Tcp(s) => match s.peer_addr() {
                Ok(a) => format!("tcp/{a}"),
                Err(_) => "tcp/?".into(),
            },
            Self::Unix(_) => "unixsock-stream".into(),
        }
    }

    /// Writes one batch with its length prefix.
    pub fn write_batch(&mut self, batch: &[u8]) -> io::Result<()> {
        let len = u16::try_from(batch.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "batch over 65535 bytes"))?;
        // One write for prefix and batch when it is small; two otherwise (no copy).
        if batch.len() <= 1024 {
            let mut framed = [0u8; 1026];
            framed[..2].copy_from_slice(&len.to_le_bytes());
            framed[2..2 + batch.len()].copy_from_slice(batch);
            self.write_all(&framed[..2 + batch.len()])
        } else {
            self.write_all(&len.to_le_bytes())?;
            self.write_all(batch)
        }
    }
}

impl Read for Link {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.read(buf),
            Self::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Link {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Tcp(s) => s.write(buf),
            Self::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads length-prefixed batches from a stream link, with large reads split in memory.
#[derive(Debug)]
pub struct BatchReader {
    link: Link,
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl BatchReader {
    /// A reader over `link`.
    pub fn new(link: Link) -> Self {
        Self {
            link,
            buf: vec![0; 2 * (usize::from(STREAM_BATCH_SIZE) + 2)],
            start: 0,
            end: 0,
        }
    }

    /// The link read from.
    pub const fn link(&self) -> &Link {
        &self.link
    }

    /// Reads the next batch. `Ok(None)` on a clean end of stream between batches; a read
    /// timeout surfaces as an error of kind `WouldBlock` or `TimedOut`, and a later call
    /// resumes where it stopped.
    pub fn next_batch(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            let available = self.end - self.start;
            if available >= 2 {
                let len = usize::from(u16::from_le_bytes([
                    self.buf[self.start],
                    self.buf[self.start + 1],
                ]));
                if available >= 2 + len {
                    let b = self.start + 2;
                    self.start = b + len;
                    return Ok(Some(&self.buf[b..b + len]));
                }
            }
            if self.start > 0 && self.buf.len() - self.end < usize::from(STREAM_BATCH_SIZE) + 2 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let n = self.link.read(&mut self.buf[self.end..])?;
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

/// A listening socket.
#[derive(Debug)]
pub enum Listener {
    /// TCP.
    Tcp(TcpListener),
    /// Unix stream socket (the path is removed on drop).
    Unix(UnixListener, String),
}

impl Listener {
    /// Listens on `endpoint`.
    pub fn bind(endpoint: &Endpoint) -> io::Result<Self> {
        match endpoint.protocol {
            Protocol::Tcp => {
                let addr = endpoint
                    .address
                    .to_socket_addrs()?
                    .next()
                    .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))?;
                Ok(Self::Tcp(TcpListener::bind(addr)?))
            }
            Protocol::UnixStream => Ok(Self::Unix(
                UnixListener::bind(&endpoint.address)?,
                endpoint.address.clone(),
            )),
            Protocol::Udp => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "UDP listeners are not supported yet",
            )),
        }
    }

    /// The endpoint actually bound (with the real port when 0 was asked for).
    pub fn local_endpoint(&self) -> io::Result<String> {
        match self {
            Self::Tcp(l) => Ok(format!("tcp/{}", l.local_addr()?)),
            Self::Unix(_, path) => Ok(format!("unixsock-stream/{path}")),
        }
    }

    /// Waits for the next connection.
    pub fn accept(&self) -> io::Result<Link> {
        match self {
            Self::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nodelay(true)?;
                Ok(Link::Tcp(s))
            }
            Self::Unix(l, _) => Ok(Link::Unix(l.accept()?.0)),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Self::Unix(_, path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}
