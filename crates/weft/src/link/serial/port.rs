//! A serial port opened for a link: the device in raw mode at the endpoint's baud rate
//! (8 data bits, no parity, one stop bit, no flow control, as Zenoh opens it),
//! non-blocking, its buffers emptied on the connecting side. Frames are written whole,
//! one writer at a time, so that two threads' frames never interleave on the line.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::termios::{self, ControlModes, OptionalActions, QueueSelector, SpecialCodeIndex};
use weft_proto::batch::serial::{self, Flags};

use super::SerialSettings;

/// An open serial port.
#[derive(Debug)]
pub(crate) struct Port {
    file: File,
    /// Its device path.
    path: String,
    /// Whether it was opened exclusively (released when its link ends).
    exclusive: bool,
    /// The frame being written; held while it is written.
    writing: Mutex<Vec<u8>>,
}

impl Port {
    /// Opens the device of `settings` and sets its line up; with `empty`, drops what the
    /// device received before.
    pub(crate) fn open(settings: &SerialSettings, empty: bool) -> io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK)
            .open(&settings.path)
            .map_err(|e| io::Error::new(e.kind(), format!("serial port {}: {e}", settings.path)))?;
        let setup = || -> io::Result<()> {
            let mut line = termios::tcgetattr(&file)?;
            line.make_raw();
            line.control_modes |= ControlModes::CLOCAL | ControlModes::CREAD;
            line.control_modes -=
                ControlModes::CRTSCTS | ControlModes::CSTOPB | ControlModes::PARENB;
            line.control_modes -= ControlModes::CSIZE;
            line.control_modes |= ControlModes::CS8;
            line.special_codes[SpecialCodeIndex::VMIN] = 1;
            line.special_codes[SpecialCodeIndex::VTIME] = 0;
            line.set_speed(settings.baudrate)?;
            termios::tcsetattr(&file, OptionalActions::Now, &line)?;
            if settings.exclusive {
                termios::ioctl_tiocexcl(&file)?;
            }
            if empty {
                termios::tcflush(&file, QueueSelector::IOFlush)?;
            }
            Ok(())
        };
        setup().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "serial port {} at {} baud: {e}",
                    settings.path, settings.baudrate
                ),
            )
        })?;
        Ok(Self {
            file,
            path: settings.path.clone(),
            exclusive: settings.exclusive,
            writing: Mutex::new(Vec::with_capacity(serial::MAX_WIRE_LEN)),
        })
    }

    /// The device path.
    pub(crate) fn path(&self) -> &str {
        &self.path
    }

    /// The port's descriptor.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// Lets the device be opened again while this descriptor lives (a connecting
    /// side's link ended: the next attempt opens the port anew).
    pub(crate) fn release(&self) {
        if self.exclusive {
            let _ = termios::ioctl_tiocnxcl(&self.file);
        }
    }

    /// Reads what the port holds now: `WouldBlock` when nothing is there; 0 when the
    /// line hung up.
    pub(crate) fn read_now(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match (&self.file).read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A pseudo-terminal whose other end closed.
                Err(e) if e.raw_os_error() == Some(nix::libc::EIO) => return Ok(0),
                other => return other,
            }
        }
    }

    /// Waits until the port has bytes to read, at most `timeout` (for ever with `None`):
    /// whether it has.
    pub(crate) fn wait_readable(&self, timeout: Option<Duration>) -> io::Result<bool> {
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let wait = match deadline {
                None => PollTimeout::NONE,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Ok(false);
                    }
                    PollTimeout::from(u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX))
                }
            };
            match poll(&mut [PollFd::new(self.fd(), PollFlags::POLLIN)], wait) {
                Ok(0) | Err(nix::errno::Errno::EINTR) => {}
                Ok(_) => return Ok(true),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes one frame carrying `flags` and `parts`, whole: a frame the line does not
    /// take at once is waited for (it cannot be left half written), at most
    /// [`crate::link::BLOCKED_WRITE_LIMIT`].
    pub(crate) fn send(&self, flags: Flags, parts: &[&[u8]]) -> io::Result<()> {
        let mut frame = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        frame.clear();
        serial::encode(flags, parts, &mut frame)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let deadline =
            crate::link::wait_deadline(Instant::now() + crate::link::BLOCKED_WRITE_LIMIT);
        let mut done = 0;
        while done < frame.len() {
            match (&self.file).write(&frame[done..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    crate::link::wait_room(self.fd(), deadline)?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
