//! Wire expressions: a key-expression id (scope) plus a suffix.

use crate::error::{DecodeError, EncodeError};
use crate::reader::Reader;
use crate::writer::Writer;

/// Whose id table a wire expression's scope refers to (the M flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Mapping {
    /// M = 0: an id the receiver of the message declared.
    Receiver,
    /// M = 1: an id the sender of the message declared.
    #[default]
    Sender,
}

impl Mapping {
    /// From the M flag.
    pub const fn from_flag(m: bool) -> Self {
        if m {
            Self::Sender
        } else {
            Self::Receiver
        }
    }

    /// The M flag.
    pub const fn is_sender(self) -> bool {
        matches!(self, Self::Sender)
    }
}

/// A key expression as carried on the wire: `prefix(scope) + suffix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct WireExpr<'a> {
    /// Key-expression id declared with DeclareKeyExpr; 0 means no prefix.
    pub scope: u16,
    /// Text appended to the prefix (the whole key expression when `scope` is 0).
    pub suffix: &'a str,
    /// Whose id table `scope` refers to.
    pub mapping: Mapping,
}

impl<'a> WireExpr<'a> {
    /// A full key expression string (scope 0, sender mapping).
    pub const fn key(suffix: &'a str) -> Self {
        Self {
            scope: 0,
            suffix,
            mapping: Mapping::Sender,
        }
    }

    /// Whether the N flag (suffix present) must be set.
    pub const fn has_suffix(&self) -> bool {
        !self.suffix.is_empty()
    }

    /// Reads `%scope:z16%` then, if `has_suffix`, `<utf8;z16>`.
    pub(crate) fn read(
        r: &mut Reader<'a>,
        has_suffix: bool,
        mapping: Mapping,
    ) -> Result<Self, DecodeError> {
        let scope = r.z16("key scope")?;
        let suffix = if has_suffix {
            r.zstr(u64::from(u16::MAX), "key suffix")?
        } else {
            ""
        };
        Ok(Self {
            scope,
            suffix,
            mapping,
        })
    }

    /// Writes the scope and, if non-empty, the suffix (the N flag is the caller's).
    #[inline(always)]
    pub(crate) fn write<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        w.zint(u64::from(self.scope))?;
        if self.has_suffix() {
            return self.write_suffix(w);
        }
        Ok(())
    }

    #[inline]
    fn write_suffix<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        if self.suffix.len() > usize::from(u16::MAX) {
            return Err(EncodeError::OutOfBounds {
                field: "key suffix length",
                value: self.suffix.len() as u64,
                bound: u64::from(u16::MAX),
            });
        }
        w.zbytes(self.suffix.as_bytes())
    }
}
