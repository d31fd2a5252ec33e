//! A serial port opened for a link: the device in raw mode at the endpoint's baud rate
//! (8 data bits, no parity, one stop bit, no flow control, as Zenoh opens it),
//! non-blocking, its buffers emptied on the connecting side. Frames are written whole,
//! one after the other, so that two threads' frames never interleave on the line: a data
//! frame the line does not take at once stays in flight ([`Port::send_now`] never waits,
//! and is asked again for the same batch once the line has room), and the next frame
//! goes out only after it.

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
    /// The frame being written, and how far; held while it is written.
    writing: Mutex<Writing>,
}

/// The frame on its way to the line.
#[derive(Debug)]
struct Writing {
    frame: Vec<u8>,
    /// Bytes of `frame` the line took.
    done: usize,
    /// The batch the frame carries, while it is in flight for [`Port::send_now`].
    batch: Option<BatchId>,
    /// A batch whose frame [`Port::send`] finished before sending its own: the line took
    /// it, which [`Port::send_now`] says when asked for it again.
    finished: Option<BatchId>,
}

impl Writing {
    fn in_flight(&self) -> bool {
        self.done < self.frame.len()
    }
}

/// Which batch a frame in flight carries: the same batch asked again (the same bytes at
/// the same place) continues it rather than starting another frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct BatchId {
    at: usize,
    len: usize,
    head: u64,
    tail: u64,
}

impl BatchId {
    fn of(batch: &[u8]) -> Self {
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        let ends = batch.len().min(8);
        Self {
            at: batch.as_ptr() as usize,
            len: batch.len(),
            head: word(&batch[..ends]),
            tail: word(&batch[batch.len() - ends..]),
        }
    }
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
            writing: Mutex::new(Writing {
                frame: Vec::with_capacity(serial::MAX_WIRE_LEN),
                done: 0,
                batch: None,
                finished: None,
            }),
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

    /// Writes what the line takes of the frame in flight, without waiting.
    fn write_out(&self, w: &mut Writing) -> io::Result<()> {
        while w.in_flight() {
            match (&self.file).write(&w.frame[w.done..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => w.done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Starts the frame carrying `flags` and `parts` (the frame before it is out).
    fn start_frame(w: &mut Writing, flags: Flags, parts: &[&[u8]]) -> io::Result<()> {
        w.frame.clear();
        w.done = 0;
        w.batch = None;
        serial::encode(flags, parts, &mut w.frame)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))
    }

    /// Writes one frame carrying `flags` and `parts`, whole, after the frame in flight:
    /// what the line does not take at once is waited for (a frame cannot be left half
    /// written), at most [`crate::link::BLOCKED_WRITE_LIMIT`]. For the line's own
    /// exchange and for writers that may wait; the transport's writers use
    /// [`Port::send_now`].
    pub(crate) fn send(&self, flags: Flags, parts: &[&[u8]]) -> io::Result<()> {
        let mut w = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let deadline = Instant::now() + crate::link::BLOCKED_WRITE_LIMIT;
        let finish = |w: &mut Writing| -> io::Result<()> {
            loop {
                self.write_out(w)?;
                if !w.in_flight() {
                    return Ok(());
                }
                crate::link::wait_room(self.fd(), deadline)?;
            }
        };
        // The frame in flight goes out first (its batch is then written).
        finish(&mut w)?;
        if let Some(id) = w.batch.take() {
            w.finished = Some(id);
        }
        Self::start_frame(&mut w, flags, parts)?;
        finish(&mut w)
    }

    /// Writes a data frame carrying `batch` without ever waiting: `Ok(true)` once the
    /// line took all of it, `Ok(false)` while it is in flight or waits for the frame
    /// before it (ask again with the same batch when the port is writable: the frame
    /// goes on where it stopped).
    pub(crate) fn send_now(&self, batch: &[u8]) -> io::Result<bool> {
        let mut w = self.writing.lock().unwrap_or_else(|e| e.into_inner());
        let id = BatchId::of(batch);
        if w.in_flight() {
            self.write_out(&mut w)?;
            if w.in_flight() {
                return Ok(false);
            }
            match w.batch.take() {
                Some(b) if b == id => return Ok(true),
                other => w.finished = other,
            }
        } else if w.finished.take() == Some(id) {
            return Ok(true);
        }
        Self::start_frame(&mut w, Flags::DATA, &[batch])?;
        self.write_out(&mut w)?;
        if w.in_flight() {
            w.batch = Some(id);
            return Ok(false);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::OwnedFd;

    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    use weft_proto::batch::serial::Decoder;

    use super::*;

    /// A pseudo-terminal: its controlling side (the far end of the line, which the test
    /// reads or leaves unread) and the port opened on its device.
    fn line() -> (OwnedFd, Port) {
        let far = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
        grantpt(&far).unwrap();
        unlockpt(&far).unwrap();
        let path = ptsname(&far, Vec::new()).unwrap();
        let settings = SerialSettings {
            path: path.to_string_lossy().into_owned(),
            baudrate: 115_200,
            exclusive: false,
            reset_wait: Duration::from_millis(50),
        };
        (far, Port::open(&settings, true).unwrap())
    }

    /// Everything the far end holds now.
    fn drain(far: &OwnedFd, into: &mut Vec<u8>) {
        rustix::io::ioctl_fionbio(far, true).unwrap();
        let mut buf = [0u8; 4096];
        while let Ok(n) = rustix::io::read(far, &mut buf) {
            if n == 0 {
                break;
            }
            into.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn a_frame_the_line_cannot_take_waits_in_flight_and_goes_out_once_whole() {
        let (far, port) = line();
        let batches: Vec<Vec<u8>> = (0..200u8).map(|i| vec![i.max(1); 1000]).collect();
        let mut line_bytes = Vec::new();
        let mut refused = 0;
        for batch in &batches {
            // Nobody reads the line until it is full: the frame stays in flight, and
            // asking again with the same batch goes on with it, never waiting.
            let mut asked = 0;
            while !port.send_now(batch).unwrap() {
                refused += 1;
                asked += 1;
                assert!(asked < 1000, "the frame never went out");
                drain(&far, &mut line_bytes);
            }
        }
        drain(&far, &mut line_bytes);
        assert!(refused > 0, "the line was never full: nothing was tested");
        let mut decoder = Decoder::new();
        let mut got = Vec::new();
        let mut rest = &line_bytes[..];
        while !rest.is_empty() {
            let (used, frame) = decoder.push(rest);
            if let Some(frame) = frame {
                got.push(frame.unwrap().payload.to_vec());
            }
            rest = &rest[used..];
        }
        assert_eq!(got.len(), batches.len(), "each batch once");
        assert!(got == batches, "in order, intact");
    }
}
