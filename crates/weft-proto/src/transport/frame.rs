//! Frame: a sequence-numbered container of network messages.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|X|R|  FRAME  |   R: reliable channel (else best effort)
//! +-+-+-+---------+
//! %    seq num    %
//! ~  [FrameExts]  ~   if Z: QoS 0x31 (mandatory): priority, omitted when Data (5)
//! ~ [NetworkMsg]* ~   until a byte that is not a network header, or the end of the batch
//! ```

use alloc::vec::Vec;

use super::mid;
use crate::core::{Priority, Reliability};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::network::NetworkMessage;
use crate::reader::{zint_at, Reader};
use crate::writer::Writer;

pub(crate) const FLAG_R: u8 = 0x20;

/// Reads the priority carried by a Frame/Fragment/OAM QoS extension (0x31).
pub(crate) fn read_priority(
    r: &Reader<'_>,
    e: &ext::Extension<'_>,
    at: usize,
) -> Result<Priority, DecodeError> {
    let v = ext::z64(e);
    if v > 7 {
        return Err(ext::malformed(
            r,
            at,
            "QoS",
            "priority outside 0..=7 (reserved bits set)",
        ));
    }
    Ok(Priority::from_u8(v as u8).unwrap_or_default())
}

/// The fixed part of a Frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FrameHeader<'a> {
    /// The channel.
    pub reliability: Reliability,
    /// Sequence number in the (reliability, priority) space.
    pub sn: u32,
    /// Priority (only meaningful when QoS was negotiated).
    pub priority: Priority,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> FrameHeader<'a> {
    /// A header for `sn` on a channel.
    #[inline]
    pub fn new(reliability: Reliability, priority: Priority, sn: u32) -> Self {
        Self {
            reliability,
            sn,
            priority,
            unknown: Unknown::new(),
        }
    }

    /// Reads a Frame header (header byte included) without extension, as sent on the Data
    /// priority; `None`, with `r` untouched, for anything else or any error, which the
    /// general decoder then handles.
    #[inline]
    pub(crate) fn read_plain(r: &mut Reader<'a>) -> Option<Self> {
        let buf = r.rest();
        let header = *buf.first()?;
        if header & (0x1F | FLAG_Z) != mid::FRAME {
            return None;
        }
        let mut at = 1;
        let sn = u32::try_from(zint_at(buf, &mut at)?).ok()?;
        r.advance(at);
        Some(Self::new(
            Reliability::from_flag(header & FLAG_R != 0),
            Priority::Data,
            sn,
        ))
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let sn = r.z32("frame SN")?;
        let mut fh = Self::new(
            Reliability::from_flag(header & FLAG_R != 0),
            Priority::Data,
            sn,
        );
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            if e.id == id::FRAME_QOS {
                fh.priority = read_priority(r, &e, at)?;
            } else {
                ext::keep_unknown(r, "Frame", e, at, &mut fh.unknown)?;
            }
        }
        Ok(fh)
    }

    /// Encodes the header (the network messages are written after it).
    #[inline]
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let mut header = mid::FRAME;
        if self.reliability.is_reliable() {
            header |= FLAG_R;
        }
        if self.priority == Priority::Data && self.unknown.is_empty() {
            // No extension: the header and the sequence number, in one write when the
            // sequence number takes one or two bytes.
            return match self.sn {
                sn @ 0..=0x7F => w.put(&[header, sn as u8]),
                sn @ 0x80..=0x3FFF => w.put(&[header, sn as u8 | 0x80, (sn >> 7) as u8]),
                sn => {
                    w.u8(header)?;
                    w.zint(u64::from(sn))
                }
            };
        }
        self.encode_with_exts(w)
    }

    #[inline(never)]
    fn encode_with_exts<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let with_qos = self.priority != Priority::Data;
        let n = usize::from(with_qos) + self.unknown.len();
        let mut header = mid::FRAME;
        if self.reliability.is_reliable() {
            header |= FLAG_R;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.zint(u64::from(self.sn))?;
        if n > 0 {
            let mut ew = ExtWriter::new(n);
            if with_qos {
                ew.z64(w, id::FRAME_QOS, u64::from(self.priority.to_u8()))?;
            }
            ew.unknown(w, &self.unknown)?;
        }
        Ok(())
    }
}

/// A Frame with its network messages decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The fixed part.
    pub header: FrameHeader<'a>,
    /// The network messages, in order.
    pub messages: Vec<NetworkMessage<'a>>,
}

impl Frame<'_> {
    /// Encodes the header and every message.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        self.header.encode(w)?;
        for m in &self.messages {
            m.encode(w)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use super::*;

    #[test]
    fn the_plain_header_path_writes_what_the_general_one_writes() {
        for sn in [0, 1, 127, 128, 12_345, 16_383, 16_384, 1 << 21, u32::MAX] {
            for reliability in [Reliability::Reliable, Reliability::BestEffort] {
                let fh = FrameHeader::new(reliability, Priority::Data, sn);
                let (mut fast, mut general) = (Vec::new(), Vec::new());
                fh.encode(&mut fast).unwrap();
                fh.encode_with_exts(&mut general).unwrap();
                assert_eq!(fast, general, "sn {sn}");
                let mut r = Reader::new(&fast);
                assert_eq!(FrameHeader::read_plain(&mut r), Some(fh));
                assert!(r.is_empty());
            }
        }
    }
}
