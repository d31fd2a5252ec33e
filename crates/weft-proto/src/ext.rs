//! Message extensions: the TLV chain that follows a message's fixed fields when its Z
//! flag is set.
//!
//! ```text
//!  7 6 5 4 3 2 1 0
//! +-+-+-+-+-+-+-+-+
//! |Z|ENC|M|  ID   |   Z: another extension follows; ENC: 0 unit, 1 z64, 2 zbuf
//! +-+-+-+-+-+-+-+-+   M: mandatory; ID: scoped by the enclosing message
//! %    value      %   z64: one zint; zbuf: zint length then bytes; unit: nothing
//! ```
//!
//! An extension is identified by its header without the Z bit (ENC, M and ID together).
//! Unknown extensions are kept (so they can be forwarded) unless mandatory, which is an
//! error.

use alloc::vec::Vec;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::reader::Reader;
use crate::writer::{zint_len, Writer};

/// The Z bit of a header: extensions follow (or, on an extension, another one follows).
pub const FLAG_Z: u8 = 0x80;
/// The M bit of an extension header: the extension is mandatory.
pub const FLAG_MANDATORY: u8 = 0x10;
/// ENC value of a unit extension.
pub const ENC_UNIT: u8 = 0x00;
/// ENC value of a z64 extension.
pub const ENC_Z64: u8 = 0x20;
/// ENC value of a zbuf extension.
pub const ENC_ZBUF: u8 = 0x40;
const ENC_MASK: u8 = 0x60;

/// The value of an extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtBody<'a> {
    /// No value.
    Unit,
    /// One integer.
    Z64(u64),
    /// A byte sequence.
    ZBuf(&'a [u8]),
}

impl ExtBody<'_> {
    /// The ENC bits matching this value.
    pub const fn enc(&self) -> u8 {
        match self {
            Self::Unit => ENC_UNIT,
            Self::Z64(_) => ENC_Z64,
            Self::ZBuf(_) => ENC_ZBUF,
        }
    }

    /// Encoded length of the value (without header).
    pub fn encoded_len(&self) -> usize {
        match self {
            Self::Unit => 0,
            Self::Z64(v) => zint_len(*v),
            Self::ZBuf(b) => zint_len(b.len() as u64) + b.len(),
        }
    }

    /// Reads a value of encoding `enc` (already validated not to be reserved).
    pub(crate) fn read<'a>(r: &mut Reader<'a>, enc: u8) -> Result<ExtBody<'a>, DecodeError> {
        Ok(match enc {
            ENC_UNIT => ExtBody::Unit,
            ENC_Z64 => ExtBody::Z64(r.zint()?),
            _ => ExtBody::ZBuf(r.zbytes(u64::from(u32::MAX), "extension length")?),
        })
    }

    /// Writes the value.
    pub(crate) fn write<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        match self {
            Self::Unit => Ok(()),
            Self::Z64(v) => w.zint(*v),
            Self::ZBuf(b) => w.zbytes(b),
        }
    }
}

/// An extension kept as read: its identity (header without Z) and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Extension<'a> {
    /// Header byte without the Z bit: ENC (bits 5-6), M (bit 4) and ID (bits 0-3).
    pub id: u8,
    /// The value.
    pub body: ExtBody<'a>,
}

impl Extension<'_> {
    /// Whether the receiver must understand it.
    pub const fn is_mandatory(&self) -> bool {
        self.id & FLAG_MANDATORY != 0
    }

    /// The 4-bit identifier.
    pub const fn number(&self) -> u8 {
        self.id & 0x0F
    }
}

/// Extensions a message did not recognise (non-mandatory), in the order they came.
pub type Unknown<'a> = Vec<Extension<'a>>;

/// Reads one extension; returns it and whether another one follows.
pub(crate) fn read<'a>(r: &mut Reader<'a>) -> Result<(Extension<'a>, usize, bool), DecodeError> {
    let at = r.position();
    let header = r.u8()?;
    let enc = header & ENC_MASK;
    if enc == ENC_MASK {
        return Err(r.error_at(at, DecodeErrorKind::ReservedExtensionEncoding { header }));
    }
    let body = ExtBody::read(r, enc)?;
    Ok((
        Extension {
            id: header & !FLAG_Z,
            body,
        },
        at,
        header & FLAG_Z != 0,
    ))
}

/// Records an extension `message` does not know: kept if optional, an error if mandatory.
pub(crate) fn keep_unknown<'a>(
    r: &Reader<'a>,
    message: &'static str,
    ext: Extension<'a>,
    at: usize,
    unknown: &mut Unknown<'a>,
) -> Result<(), DecodeError> {
    if ext.is_mandatory() {
        return Err(r.error_at(
            at,
            DecodeErrorKind::UnknownMandatoryExtension {
                message,
                header: ext.id,
            },
        ));
    }
    unknown.push(ext);
    Ok(())
}

/// Reads an extension chain in which no extension is known to `message`.
pub(crate) fn read_unknown<'a>(
    r: &mut Reader<'a>,
    header: u8,
    message: &'static str,
) -> Result<Unknown<'a>, DecodeError> {
    let mut unknown = Unknown::new();
    let mut more = header & FLAG_Z != 0;
    while more {
        let (e, at, next) = read(r)?;
        more = next;
        keep_unknown(r, message, e, at, &mut unknown)?;
    }
    Ok(unknown)
}

/// Error for a known extension whose value has the wrong shape.
pub(crate) fn malformed(
    r: &Reader<'_>,
    at: usize,
    name: &'static str,
    reason: &'static str,
) -> DecodeError {
    r.error_at(at, DecodeErrorKind::MalformedExtension { name, reason })
}

/// Value of a z64 extension (the caller matched its id, so the encoding is z64).
pub(crate) fn z64(ext: &Extension<'_>) -> u64 {
    match ext.body {
        ExtBody::Z64(v) => v,
        _ => 0,
    }
}

/// Value of a zbuf extension (the caller matched its id, so the encoding is zbuf).
pub(crate) fn zbuf<'a>(ext: &Extension<'a>) -> &'a [u8] {
    match ext.body {
        ExtBody::ZBuf(b) => b,
        _ => &[],
    }
}

/// A reader over the value of a zbuf extension, with offsets of the enclosing input.
pub(crate) fn zbuf_reader<'a>(r: &Reader<'a>, ext: &Extension<'a>) -> Reader<'a> {
    let body = zbuf(ext);
    // The body ends right where the outer reader stands.
    Reader::with_base(body, r.offset() - body.len())
}

/// Writes extensions in order, setting the Z bit on all but the last.
pub(crate) struct ExtWriter {
    left: usize,
}

impl ExtWriter {
    /// A writer for `count` extensions.
    pub(crate) const fn new(count: usize) -> Self {
        Self { left: count }
    }

    fn header<W: Writer>(&mut self, w: &mut W, id: u8) -> Result<(), EncodeError> {
        self.left = self.left.saturating_sub(1);
        w.u8(if self.left > 0 { id | FLAG_Z } else { id })
    }

    /// Writes a unit extension.
    pub(crate) fn unit<W: Writer>(&mut self, w: &mut W, id: u8) -> Result<(), EncodeError> {
        self.header(w, id)
    }

    /// Writes a z64 extension.
    pub(crate) fn z64<W: Writer>(&mut self, w: &mut W, id: u8, v: u64) -> Result<(), EncodeError> {
        self.header(w, id)?;
        w.zint(v)
    }

    /// Writes a zbuf extension from raw bytes.
    pub(crate) fn zbuf<W: Writer>(
        &mut self,
        w: &mut W,
        id: u8,
        bytes: &[u8],
    ) -> Result<(), EncodeError> {
        self.header(w, id)?;
        w.zbytes(bytes)
    }

    /// Writes a zbuf extension of `len` bytes produced by `body`.
    pub(crate) fn zbuf_with<W: Writer>(
        &mut self,
        w: &mut W,
        id: u8,
        len: usize,
        body: impl FnOnce(&mut W) -> Result<(), EncodeError>,
    ) -> Result<(), EncodeError> {
        self.header(w, id)?;
        w.zint(len as u64)?;
        body(w)
    }

    /// Writes extensions kept as read.
    pub(crate) fn unknown<W: Writer>(
        &mut self,
        w: &mut W,
        exts: &[Extension<'_>],
    ) -> Result<(), EncodeError> {
        for ext in exts {
            if ext.id & ENC_MASK != ext.body.enc() {
                return Err(EncodeError::Invalid {
                    field: "extension encoding bits",
                });
            }
            self.header(w, ext.id)?;
            ext.body.write(w)?;
        }
        Ok(())
    }
}

/// Identities (header without Z) of the extensions this crate knows, by message family.
pub mod id {
    use super::{ENC_UNIT, ENC_Z64, ENC_ZBUF, FLAG_MANDATORY};

    /// Init/Open: QoS supported (unit).
    pub const QOS: u8 = ENC_UNIT | 0x1;
    /// Init: QoS restricted to a priority range / reliability (z64).
    pub const QOS_LINK: u8 = ENC_Z64 | 0x1;
    /// Init/Open: shared-memory challenge (zbuf).
    pub const SHM: u8 = ENC_ZBUF | 0x2;
    /// Init/Open: authentication (zbuf).
    pub const AUTH: u8 = ENC_ZBUF | 0x3;
    /// Init/OpenSyn: multi-link (zbuf).
    pub const MULTILINK: u8 = ENC_ZBUF | 0x4;
    /// OpenAck: multi-link accepted (unit).
    pub const MULTILINK_ACK: u8 = ENC_UNIT | 0x4;
    /// Init/Open: low-latency transport (unit).
    pub const LOW_LATENCY: u8 = ENC_UNIT | 0x5;
    /// Init/Open: batch compression (unit).
    pub const COMPRESSION: u8 = ENC_UNIT | 0x6;
    /// Init/Join: protocol patch level (z64).
    pub const PATCH: u8 = ENC_Z64 | 0x7;
    /// Open: remote bound, regions (z64).
    pub const REMOTE_BOUND: u8 = ENC_Z64 | 0x7;
    /// Init: region name (zbuf).
    pub const REGION_NAME: u8 = ENC_ZBUF | 0x8;

    /// Frame/Fragment/transport OAM: priority (z64, mandatory).
    pub const FRAME_QOS: u8 = ENC_Z64 | FLAG_MANDATORY | 0x1;
    /// Fragment: first fragment of a message (unit).
    pub const FRAGMENT_FIRST: u8 = ENC_UNIT | 0x2;
    /// Fragment: message abandoned (unit).
    pub const FRAGMENT_DROP: u8 = ENC_UNIT | 0x3;
    /// Join: per-priority next SNs (zbuf, mandatory).
    pub const JOIN_QOS: u8 = ENC_ZBUF | FLAG_MANDATORY | 0x1;
    /// Join: shared memory (zbuf, mandatory).
    pub const JOIN_SHM: u8 = ENC_ZBUF | FLAG_MANDATORY | 0x2;

    /// Network messages: QoS (z64).
    pub const NET_QOS: u8 = ENC_Z64 | 0x1;
    /// Network messages: timestamp (zbuf).
    pub const NET_TIMESTAMP: u8 = ENC_ZBUF | 0x2;
    /// Network messages: node id (z64, mandatory).
    pub const NET_NODE_ID: u8 = ENC_Z64 | FLAG_MANDATORY | 0x3;
    /// Network messages: timestamp stack (zbuf).
    pub const NET_TS_STACK: u8 = ENC_ZBUF | 0x7;
    /// Request: target (z64, mandatory).
    pub const REQUEST_TARGET: u8 = ENC_Z64 | FLAG_MANDATORY | 0x4;
    /// Request: budget (z64).
    pub const REQUEST_BUDGET: u8 = ENC_Z64 | 0x5;
    /// Request: timeout in milliseconds (z64).
    pub const REQUEST_TIMEOUT: u8 = ENC_Z64 | 0x6;
    /// Response: responder id (zbuf).
    pub const RESPONDER_ID: u8 = ENC_ZBUF | 0x3;
    /// DeclareQueryable: queryable info (z64).
    pub const QUERYABLE_INFO: u8 = ENC_Z64 | 0x1;
    /// Undeclarations: wire expression (zbuf, mandatory).
    pub const WIRE_EXPR: u8 = ENC_ZBUF | FLAG_MANDATORY | 0xF;

    /// Put/Del/Query/Err: source info (zbuf).
    pub const SOURCE_INFO: u8 = ENC_ZBUF | 0x1;
    /// Put/Err: shared-memory payload (unit, mandatory).
    pub const DATA_SHM: u8 = ENC_UNIT | FLAG_MANDATORY | 0x2;
    /// Put: attachment (zbuf).
    pub const PUT_ATTACHMENT: u8 = ENC_ZBUF | 0x3;
    /// Del: attachment (zbuf).
    pub const DEL_ATTACHMENT: u8 = ENC_ZBUF | 0x2;
    /// Query: body (zbuf).
    pub const QUERY_BODY: u8 = ENC_ZBUF | 0x3;
    /// Query: attachment (zbuf).
    pub const QUERY_ATTACHMENT: u8 = ENC_ZBUF | 0x5;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_optional_extensions_are_kept_and_mandatory_ones_rejected() {
        // z64 ext id 9 (optional), then zbuf ext id 9 mandatory.
        let bytes = [0xa9, 0x05, 0x59, 0x01, 0xaa];
        let mut r = Reader::new(&bytes);
        let mut unknown = Unknown::new();
        let (ext, at, more) = read(&mut r).unwrap();
        assert!(more);
        keep_unknown(&r, "Test", ext, at, &mut unknown).unwrap();
        assert_eq!(unknown[0].body, ExtBody::Z64(5));
        let (ext, at, more) = read(&mut r).unwrap();
        assert!(!more);
        let err = keep_unknown(&r, "Test", ext, at, &mut unknown).unwrap_err();
        assert_eq!(err.offset, 2);
        assert!(matches!(
            err.kind,
            DecodeErrorKind::UnknownMandatoryExtension { header: 0x59, .. }
        ));
    }

    #[test]
    fn reserved_encoding_is_an_error() {
        let mut r = Reader::new(&[0x61]);
        assert!(matches!(
            read(&mut r).unwrap_err().kind,
            DecodeErrorKind::ReservedExtensionEncoding { header: 0x61 }
        ));
    }
}
