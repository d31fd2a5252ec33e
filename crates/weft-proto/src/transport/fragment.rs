//! Fragment: one slice of a network message too large for one batch.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|M|R| FRAGMENT|   R: reliable channel; M: more fragments follow
//! +-+-+-+---------+
//! %    seq num    %
//! ~   [FragExts]  ~   if Z: QoS 0x31 (mandatory), First 0x02, Drop 0x03
//! ~   fragment    ~   raw bytes up to the end of the batch (no length)
//! ```

use super::frame::{read_priority, FLAG_R};
use super::mid;
use crate::core::{Priority, Reliability};
use crate::error::{DecodeError, EncodeError};
use crate::ext::{self, id, ExtWriter, Unknown, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

const FLAG_M: u8 = 0x40;

/// The fixed part of a Fragment (everything but the payload).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FragmentHeader<'a> {
    /// The channel.
    pub reliability: Reliability,
    /// More fragments of the same message follow.
    pub more: bool,
    /// Sequence number in the (reliability, priority) space.
    pub sn: u32,
    /// Priority (only meaningful when QoS was negotiated).
    pub priority: Priority,
    /// This is the first fragment of a message.
    pub first: bool,
    /// The sender abandoned the message: discard what was buffered.
    pub drop: bool,
    /// Extensions not understood.
    pub unknown: Unknown<'a>,
}

impl<'a> FragmentHeader<'a> {
    /// A header for `sn` on a channel, with no markers.
    pub fn new(reliability: Reliability, priority: Priority, sn: u32, more: bool) -> Self {
        Self {
            reliability,
            more,
            sn,
            priority,
            first: false,
            drop: false,
            unknown: Unknown::new(),
        }
    }

    pub(crate) fn read(r: &mut Reader<'a>, header: u8) -> Result<Self, DecodeError> {
        let sn = r.z32("fragment SN")?;
        let mut fh = Self::new(
            Reliability::from_flag(header & FLAG_R != 0),
            Priority::Data,
            sn,
            header & FLAG_M != 0,
        );
        let mut more = header & FLAG_Z != 0;
        while more {
            let (e, at, next) = ext::read(r)?;
            more = next;
            match e.id {
                id::FRAME_QOS => fh.priority = read_priority(r, &e, at)?,
                id::FRAGMENT_FIRST => fh.first = true,
                id::FRAGMENT_DROP => fh.drop = true,
                _ => ext::keep_unknown(r, "Fragment", e, at, &mut fh.unknown)?,
            }
        }
        Ok(fh)
    }

    /// Encodes the header (the payload is written after it).
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let with_qos = self.priority != Priority::Data;
        let n = usize::from(with_qos)
            + usize::from(self.first)
            + usize::from(self.drop)
            + self.unknown.len();
        let mut header = mid::FRAGMENT;
        if self.reliability.is_reliable() {
            header |= FLAG_R;
        }
        if self.more {
            header |= FLAG_M;
        }
        if n > 0 {
            header |= FLAG_Z;
        }
        w.u8(header)?;
        w.zint(u64::from(self.sn))?;
        let mut ew = ExtWriter::new(n);
        if with_qos {
            ew.z64(w, id::FRAME_QOS, u64::from(self.priority.to_u8()))?;
        }
        if self.first {
            ew.unit(w, id::FRAGMENT_FIRST)?;
        }
        if self.drop {
            ew.unit(w, id::FRAGMENT_DROP)?;
        }
        ew.unknown(w, &self.unknown)
    }
}

/// A Fragment: header and the slice of the serialized network message it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragment<'a> {
    /// The fixed part.
    pub header: FragmentHeader<'a>,
    /// The slice (it runs to the end of the batch).
    pub payload: &'a [u8],
}

impl Fragment<'_> {
    /// Encodes the header and the payload.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        self.header.encode(w)?;
        w.put(self.payload)
    }
}
