//! Taking frames off the line: bytes come in chunks of any size, frames end at each
//! delimiter, and a frame that does not check is dropped and counted. A frame longer
//! than the line's limit is skipped up to its delimiter, so that a lost delimiter or a
//! burst of noise never holds more than [`MAX_WIRE_LEN`] bytes and the decoder finds the
//! next frame at the next delimiter.

use alloc::vec::Vec;

use super::cobs::{self, CobsError};
use super::{crc, Flags, Frame, DELIMITER, MAX_WIRE_LEN, OVERHEAD};

/// Why a frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Its stuffing is broken (a code past its end).
    #[error("serial frame: broken COBS stuffing ({0:?})")]
    Stuffing(CobsError),
    /// Too short for flags, length and check.
    #[error("serial frame: {0} byte(s), fewer than flags, length and check")]
    TooShort(usize),
    /// Its length field disagrees with its size.
    #[error("serial frame: length field says {announced} byte(s), the frame holds {held}")]
    Length {
        /// What the length field says.
        announced: usize,
        /// The payload bytes the frame holds.
        held: usize,
    },
    /// Its check value is not its payload's.
    #[error("serial frame: check {received:#010x}, payload's {computed:#010x}")]
    Check {
        /// The check value it carries.
        received: u32,
        /// Its payload's.
        computed: u32,
    },
    /// No delimiter within the line's limit: skipped up to the next one.
    #[error("serial frame: over {MAX_WIRE_LEN} bytes without a delimiter")]
    TooLong,
}

/// What a decoder has seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecoderStats {
    /// Frames that checked.
    pub frames: u64,
    /// Frames dropped (any [`FrameError`]).
    pub dropped: u64,
}

/// Frames from the line's bytes.
#[derive(Debug, Default)]
pub struct Decoder {
    /// The stuffed bytes of the frame under way.
    raw: Vec<u8>,
    /// The last frame unstuffed.
    frame: Vec<u8>,
    /// The frame under way is over the limit: skipped up to its delimiter.
    skipping: bool,
    stats: DecoderStats,
}

impl Decoder {
    /// A decoder waiting for the start of a frame.
    pub fn new() -> Self {
        Self::default()
    }

    /// What it has seen so far.
    pub const fn stats(&self) -> DecoderStats {
        self.stats
    }

    /// Whether it holds the start of a frame.
    pub fn is_mid_frame(&self) -> bool {
        !self.raw.is_empty() || self.skipping
    }

    /// Takes `input` up to and including its first delimiter (all of it if it has none):
    /// the bytes taken, and the frame that delimiter ended, if any, or why it was
    /// dropped. An empty frame (two delimiters in a row) is nothing. Call again with the
    /// rest of the input.
    pub fn push(&mut self, input: &[u8]) -> (usize, Option<Result<Frame<'_>, FrameError>>) {
        let (body, used, ended) = match input.iter().position(|b| *b == DELIMITER) {
            Some(i) => (&input[..i], i + 1, true),
            None => (input, input.len(), false),
        };
        if !self.skipping {
            if self.raw.len() + body.len() < MAX_WIRE_LEN {
                self.raw.extend_from_slice(body);
            } else {
                self.raw.clear();
                self.skipping = true;
            }
        }
        if !ended {
            return (used, None);
        }
        if core::mem::take(&mut self.skipping) {
            self.stats.dropped += 1;
            return (used, Some(Err(FrameError::TooLong)));
        }
        if self.raw.is_empty() {
            return (used, None);
        }
        let checked = self.unstuff();
        self.raw.clear();
        match checked {
            Ok(flags) => {
                self.stats.frames += 1;
                let payload = &self.frame[3..self.frame.len() - 4];
                (used, Some(Ok(Frame { flags, payload })))
            }
            Err(e) => {
                self.stats.dropped += 1;
                (used, Some(Err(e)))
            }
        }
    }

    /// Unstuffs the frame under way and checks it: its flags.
    fn unstuff(&mut self) -> Result<Flags, FrameError> {
        cobs::decode_into(&self.raw, &mut self.frame).map_err(FrameError::Stuffing)?;
        let f = &self.frame;
        if f.len() < OVERHEAD {
            return Err(FrameError::TooShort(f.len()));
        }
        let announced = usize::from(u16::from_le_bytes([f[1], f[2]]));
        let held = f.len() - OVERHEAD;
        if announced != held {
            return Err(FrameError::Length { announced, held });
        }
        let payload = &f[3..3 + held];
        let tail = &f[3 + held..];
        let received = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let computed = crc::checksum(&[payload]);
        if received != computed {
            return Err(FrameError::Check { received, computed });
        }
        Ok(Flags(f[0]))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{encode, MTU};
    use super::*;
    use alloc::vec;

    /// Every frame and error `input` gives, fed in chunks of `chunk` bytes.
    fn feed(
        d: &mut Decoder,
        input: &[u8],
        chunk: usize,
    ) -> Vec<Result<(Flags, Vec<u8>), FrameError>> {
        let mut got = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            let mut rest = piece;
            while !rest.is_empty() {
                let (used, frame) = d.push(rest);
                assert!(used > 0 && used <= rest.len());
                rest = &rest[used..];
                if let Some(f) = frame {
                    got.push(f.map(|f| (f.flags, f.payload.to_vec())));
                }
            }
        }
        got
    }

    fn frame(flags: Flags, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode(flags, &[payload], &mut out).unwrap();
        out
    }

    #[test]
    fn frames_come_whole_whatever_the_chunks() {
        let payloads: Vec<Vec<u8>> = vec![
            vec![],
            vec![0],
            vec![7; 300],
            (0..=255).collect(),
            vec![0; MTU],
        ];
        let mut line = frame(Flags::INIT, &[]);
        for p in &payloads {
            line.extend(frame(Flags::DATA, p));
        }
        for chunk in [1, 2, 7, 254, 255, 1514, 10_000] {
            let mut d = Decoder::new();
            let got = feed(&mut d, &line, chunk);
            assert_eq!(got.len(), payloads.len() + 1, "chunk {chunk}");
            assert_eq!(got[0], Ok((Flags::INIT, vec![])));
            for (g, p) in got[1..].iter().zip(&payloads) {
                assert_eq!(g, &Ok((Flags::DATA, p.clone())));
            }
            assert_eq!(
                d.stats(),
                DecoderStats {
                    frames: 6,
                    dropped: 0
                }
            );
            assert!(!d.is_mid_frame());
        }
    }

    #[test]
    fn a_damaged_frame_is_dropped_with_its_reason_and_the_next_one_comes() {
        let good = frame(Flags::DATA, &[1, 2, 3]);
        let mut flipped = good.clone();
        flipped[4] ^= 0x40;
        let mut long = frame(Flags::DATA, &[1, 2, 3]);
        // Length field 4 (stuffed: flags 0, then 04 00 ...).
        long[2] = 0x04;
        let cases: [(&[u8], FrameError); 4] = [
            (
                &flipped,
                FrameError::Check {
                    received: 0,
                    computed: 0,
                },
            ),
            (&[0x03, 0x01, 0x02, 0x00], FrameError::TooShort(2)),
            (
                &[0x09, 0x01, 0x00],
                FrameError::Stuffing(CobsError::Truncated),
            ),
            (
                &long,
                FrameError::Length {
                    announced: 4,
                    held: 3,
                },
            ),
        ];
        for (bad, want) in cases {
            let mut d = Decoder::new();
            let mut line = bad.to_vec();
            line.extend(&good);
            let got = feed(&mut d, &line, 3);
            assert_eq!(got.len(), 2, "{bad:02x?}");
            match (&got[0], want) {
                (Err(FrameError::Check { .. }), FrameError::Check { .. }) => {}
                (g, w) => assert_eq!(g, &Err(w)),
            }
            assert_eq!(got[1], Ok((Flags::DATA, vec![1, 2, 3])));
            assert_eq!(
                d.stats(),
                DecoderStats {
                    frames: 1,
                    dropped: 1
                }
            );
        }
    }

    #[test]
    fn noise_costs_at_most_the_frame_it_runs_into() {
        let good = frame(Flags::DATA, b"after");
        // Noise ending in a delimiter costs nothing; noise without one spoils the next
        // frame only.
        let mut line = vec![0x00, 0x00, 0x37, 0x00, 0xFF, 0xFF, 0x12, 0x00];
        line.extend(&good);
        line.extend([0x55, 0x66]);
        line.extend(&good);
        line.extend(&good);
        let mut d = Decoder::new();
        let got = feed(&mut d, &line, 5);
        let ok: Vec<_> = got.iter().filter(|g| g.is_ok()).collect();
        assert_eq!(ok.len(), 2, "{got:?}");
        assert_eq!(d.stats().frames, 2);
        assert_eq!(d.stats().dropped, 3);
    }

    #[test]
    fn a_run_without_delimiter_is_skipped_to_the_next_delimiter() {
        let mut line = vec![0x42; 5 * MAX_WIRE_LEN];
        line.push(0x00);
        line.extend(frame(Flags::RESET, &[]));
        for chunk in [1, 100, 100_000] {
            let mut d = Decoder::new();
            let got = feed(&mut d, &line, chunk);
            assert_eq!(
                got,
                vec![Err(FrameError::TooLong), Ok((Flags::RESET, vec![]))]
            );
            assert!(d.raw.capacity() <= 2 * MAX_WIRE_LEN);
        }
    }
}
