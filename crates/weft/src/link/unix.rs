//! Unix stream socket links (`unixsock-stream/<path>`): a listener removes its path when
//! it is dropped.

use std::io::{self, IoSlice, Read, Write};
use std::net::Shutdown;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::time::Duration;

use super::kind::{Dialing, LinkKind, ListenerKind, Ready};
use super::Link;
use crate::endpoint::Endpoint;

/// A Unix stream socket link.
#[derive(Debug)]
pub(crate) struct UnixLink(pub(crate) UnixStream);

impl LinkKind for UnixLink {
    fn protocol_name(&self) -> &'static str {
        "unixsock-stream"
    }

    fn describe(&self) -> String {
        "unixsock-stream".into()
    }

    fn local_describe(&self) -> String {
        "unixsock-stream".into()
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        (&self.0).read(buf)
    }

    fn write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        (&self.0).write_vectored(bufs)
    }

    fn set_nonblocking(&self) -> io::Result<()> {
        self.0.set_nonblocking(true)
    }

    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        self.0.set_read_timeout(t)
    }

    fn try_clone(&self) -> io::Result<Link> {
        Ok(Link::new(Self(self.0.try_clone()?)))
    }

    fn shutdown(&self) {
        let _ = self.0.shutdown(Shutdown::Both);
    }

    fn shutdown_write(&self) {
        let _ = self.0.shutdown(Shutdown::Write);
    }

    fn has_own_stream_socket(&self) -> bool {
        true
    }
}

/// A Unix stream listening socket; its path is removed when it is dropped.
#[derive(Debug)]
pub(crate) struct UnixListen {
    listener: UnixListener,
    path: String,
}

impl UnixListen {
    /// Listens on `endpoint`'s path.
    pub(crate) fn bind(endpoint: &Endpoint) -> io::Result<Self> {
        Ok(Self {
            listener: UnixListener::bind(&endpoint.address)?,
            path: endpoint.address.clone(),
        })
    }
}

impl ListenerKind for UnixListen {
    fn set_nonblocking(&self) -> io::Result<()> {
        self.listener.set_nonblocking(true)
    }

    fn raw_fd(&self) -> RawFd {
        self.listener.as_raw_fd()
    }

    fn local_endpoint(&self) -> io::Result<String> {
        Ok(format!("unixsock-stream/{}", self.path))
    }

    fn accept(&self) -> io::Result<Link> {
        let s = self.listener.accept()?.0;
        s.set_nonblocking(false)?;
        Ok(Link::new(UnixLink(s)))
    }
}

impl Drop for UnixListen {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Connects to `endpoint`'s path (at once: a Unix socket does not wait for its peer).
pub(crate) fn dial(endpoint: &Endpoint) -> io::Result<Box<dyn Dialing>> {
    let s = UnixStream::connect(&endpoint.address)?;
    Ok(Box::new(Ready(Some(Link::new(UnixLink(s))))))
}
