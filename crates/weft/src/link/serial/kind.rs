//! Serial as a kind of link: one batch per frame, a listener that reads the port and
//! hands each session its frames while its handshake runs, and a connecting side that
//! waits for the line's answer.

use std::io;
use std::os::fd::{BorrowedFd, RawFd};
use std::time::{Duration, Instant};

use super::{SerialConnecting, SerialLink, SerialListener, MTU};
use crate::link::kind::{Dialing, LinkKind, ListenerKind};
use crate::link::Link;

impl LinkKind for SerialLink {
    fn protocol_name(&self) -> &'static str {
        "serial"
    }

    fn describe(&self) -> String {
        format!("serial/{}", self.path())
    }

    fn local_describe(&self) -> String {
        format!("serial/{}", self.path())
    }

    fn fd(&self) -> BorrowedFd<'_> {
        Self::fd(self)
    }

    fn is_datagram(&self) -> bool {
        true
    }

    fn mtu(&self) -> u16 {
        MTU
    }

    fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(self.next_batch(buf)?.unwrap_or(0))
    }

    fn send_batch(&self, parts: &[&[u8]]) -> io::Result<()> {
        self.write_parts(parts)
    }

    fn send_batch_now(&self, batch: &[u8]) -> io::Result<bool> {
        self.write_now(batch)
    }

    fn receive_batch(&self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        self.next_batch(buf)
    }

    /// Reads return at once when no frame is there; a write is still a whole frame. The
    /// I/O threads serve the link from now on: an accepted link reads its listener's port
    /// itself.
    fn set_nonblocking(&self) -> io::Result<()> {
        self.serve_from_io_thread();
        Ok(())
    }

    fn set_handshake_nonblocking(&mut self, nonblocking: bool) -> io::Result<()> {
        Self::set_nonblocking(self, nonblocking);
        Ok(())
    }

    fn set_read_timeout(&mut self, t: Option<Duration>) -> io::Result<()> {
        Self::set_read_timeout(self, t);
        Ok(())
    }

    fn try_clone(&self) -> io::Result<Link> {
        Ok(Link::new(self.clone()))
    }

    /// The link ends for its reader and its listener (the port stays open).
    fn shutdown(&self) {
        Self::shutdown(self);
    }

    fn stop_reading(&self) {
        Self::stop_reading(self);
    }

    fn fed_by_listener(&self) -> bool {
        self.reads_from_listener()
    }

    fn reads_from_listener(&self) -> bool {
        Self::reads_from_listener(self)
    }
}

impl ListenerKind for SerialListener {
    fn set_nonblocking(&self) -> io::Result<()> {
        Self::set_nonblocking(self);
        Ok(())
    }

    fn hands_datagrams_over(&self) -> bool {
        true
    }

    fn raw_fd(&self) -> RawFd {
        Self::raw_fd(self)
    }

    fn local_endpoint(&self) -> io::Result<String> {
        Ok(format!("serial/{}", self.path()))
    }

    fn accept(&self) -> io::Result<Link> {
        Self::accept(self).map(Link::new)
    }
}

impl Dialing for SerialConnecting {
    fn fd(&self) -> Option<BorrowedFd<'_>> {
        Some(Self::fd(self))
    }

    /// It waits for the line's answer.
    fn wants_write(&self) -> bool {
        false
    }

    fn due(&self) -> Option<Instant> {
        Self::due(self)
    }

    fn poll(&mut self) -> io::Result<Option<Link>> {
        Ok(Self::poll(self)?.map(Link::new))
    }
}
