//! Waiting for a socket, for the threads that may (never a thread serving links: the
//! transport decides who writes, and a thread serving links only writes what a socket
//! takes at once): at most [`BLOCKED_WRITE_LIMIT`] for room.

use std::io;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

/// Longest time a thread writing a batch waits for a non-blocking socket to take it.
pub(crate) const BLOCKED_WRITE_LIMIT: Duration = Duration::from_secs(5);

/// Waits until `fd` can take more bytes, or `deadline` (`TimedOut`).
pub(crate) fn wait_room(fd: BorrowedFd<'_>, deadline: Instant) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer took nothing while a batch waited to be written",
            ));
        }
        let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
        match poll(
            &mut [PollFd::new(fd, PollFlags::POLLOUT)],
            PollTimeout::from(ms),
        ) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Waits until `fd` is readable (or, with `write`, writable), or `deadline`: `TimedOut`
/// past it. For a thread that runs a handshake to its end (the handshakes run by the
/// session's links loop never wait).
pub(crate) fn wait_ready(fd: BorrowedFd<'_>, write: bool, deadline: Instant) -> io::Result<()> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let flags = if write {
        PollFlags::POLLOUT
    } else {
        PollFlags::POLLIN
    };
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"));
        }
        let ms = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
        match poll(&mut [PollFd::new(fd, flags)], PollTimeout::from(ms)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => {}
            Ok(_) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Whether a socket error only says that a read timed out (no data yet).
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
