//! How long a thread may wait for a socket: an I/O thread never does; any other thread
//! waits for room at most [`BLOCKED_WRITE_LIMIT`], or less inside [`waiting_ends_by`].

use std::cell::Cell;
use std::io;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

/// Longest time a thread writing a batch waits for a non-blocking socket to take it.
pub(crate) const BLOCKED_WRITE_LIMIT: Duration = Duration::from_secs(5);

thread_local! {
    /// This thread must never wait for a socket (an I/O thread serving many links).
    static NEVER_WAIT: Cell<bool> = const { Cell::new(false) };
    /// A time past which this thread waits for no socket (see [`waiting_ends_by`]).
    static WAIT_ENDS_BY: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f`, in which this thread waits for no socket past `deadline`, however many
/// writes it makes: closing every transport of a session, one peer that takes nothing
/// cannot make the others wait their turn (each would else wait its own
/// [`BLOCKED_WRITE_LIMIT`]).
pub(crate) fn waiting_ends_by<R>(deadline: Instant, f: impl FnOnce() -> R) -> R {
    /// Puts back the deadline before, even if `f` panics.
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            WAIT_ENDS_BY.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(WAIT_ENDS_BY.with(|d| d.replace(Some(deadline))));
    f()
}

/// The earlier of `deadline` and the time set by [`waiting_ends_by`], if any.
pub(crate) fn wait_deadline(deadline: Instant) -> Instant {
    WAIT_ENDS_BY
        .with(Cell::get)
        .map_or(deadline, |by| by.min(deadline))
}

/// Marks this thread as one that must never wait for a socket to take a write (`true`:
/// a write the socket does not take at once fails with `WouldBlock` instead), or as one
/// that may again (`false`).
pub(crate) fn never_wait_on_this_thread(never: bool) {
    NEVER_WAIT.with(|n| n.set(never));
}

/// Waits until `fd` can take more bytes, or `deadline`; `WouldBlock` on a thread that
/// never waits, `TimedOut` past the deadline.
pub(crate) fn wait_writable(fd: BorrowedFd<'_>, deadline: Instant) -> io::Result<()> {
    if NEVER_WAIT.with(Cell::get) {
        return Err(io::ErrorKind::WouldBlock.into());
    }
    wait_room(fd, deadline)
}

/// Waits until `fd` can take more bytes, or `deadline` (`TimedOut`), on any thread: for
/// a write that cannot be left half done (a serial frame).
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
