//! Payload encodings (media types).

use crate::error::{DecodeError, EncodeError};
use crate::reader::Reader;
use crate::writer::{zint_len, Writer};

/// Names of the encodings predefined by Zenoh, indexed by id.
const NAMES: [&str; 53] = [
    "zenoh/bytes",
    "zenoh/string",
    "zenoh/serialized",
    "application/octet-stream",
    "text/plain",
    "application/json",
    "text/json",
    "application/cdr",
    "application/cbor",
    "application/yaml",
    "text/yaml",
    "text/json5",
    "application/python-serialized-object",
    "application/protobuf",
    "application/java-serialized-object",
    "application/openmetrics-text",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/bmp",
    "image/webp",
    "application/xml",
    "application/x-www-form-urlencoded",
    "text/html",
    "text/xml",
    "text/css",
    "text/javascript",
    "text/markdown",
    "text/csv",
    "application/sql",
    "application/coap-payload",
    "application/json-patch+json",
    "application/json-seq",
    "application/jsonpath",
    "application/jwt",
    "application/mp4",
    "application/soap+xml",
    "application/yang",
    "audio/aac",
    "audio/flac",
    "audio/mp4",
    "audio/ogg",
    "audio/vorbis",
    "video/h261",
    "video/h263",
    "video/h264",
    "video/h265",
    "video/h266",
    "video/mp4",
    "video/ogg",
    "video/raw",
    "video/vp8",
    "video/vp9",
];

/// The name of predefined encoding `id`, if it is one.
pub fn encoding_name(id: u16) -> Option<&'static str> {
    NAMES.get(usize::from(id)).copied()
}

/// A payload's encoding: a numeric id and an optional schema.
///
/// Id 0 (`zenoh/bytes`) without schema is the default and is omitted by messages that
/// have an E flag. A media type that is not predefined travels as id `0xFFFF` with the
/// whole string as schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Encoding<'a> {
    /// The numeric id (0..=1023 reserved by Zenoh).
    pub id: u16,
    /// Optional schema bytes (at most 255).
    pub schema: Option<&'a [u8]>,
}

impl<'a> Encoding<'a> {
    /// Id used for media types that are not predefined.
    pub const CUSTOM_ID: u16 = 0xFFFF;

    /// Whether this is the default (id 0, no schema), which messages omit.
    pub const fn is_default(&self) -> bool {
        self.id == 0 && self.schema.is_none()
    }

    /// Reads `%(id << 1) | S%` and, if S, the schema `<u8;z8>`.
    pub(crate) fn read(r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        let v = r.zint_max((u64::from(u16::MAX) << 1) | 1, "encoding id")?;
        let schema = if v & 1 == 1 {
            Some(r.zbytes(u64::from(u8::MAX), "encoding schema length")?)
        } else {
            None
        };
        Ok(Self {
            id: (v >> 1) as u16,
            schema,
        })
    }

    /// Writes the encoding.
    pub(crate) fn write<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        let flag = u64::from(self.schema.is_some());
        w.zint((u64::from(self.id) << 1) | flag)?;
        if let Some(schema) = self.schema {
            if schema.len() > usize::from(u8::MAX) {
                return Err(EncodeError::OutOfBounds {
                    field: "encoding schema length",
                    value: schema.len() as u64,
                    bound: u64::from(u8::MAX),
                });
            }
            w.zbytes(schema)?;
        }
        Ok(())
    }

    /// The text form (as [`Display`](core::fmt::Display) writes it), without going
    /// through the formatter for a predefined encoding with no schema, the common case.
    pub fn text(&self) -> alloc::borrow::Cow<'static, str> {
        match (self.schema, encoding_name(self.id)) {
            (None, Some(name)) => alloc::borrow::Cow::Borrowed(name),
            _ => alloc::borrow::Cow::Owned(alloc::string::ToString::to_string(self)),
        }
    }

    /// Length of the encoded form.
    pub(crate) fn encoded_len(&self) -> usize {
        let flag = u64::from(self.schema.is_some());
        zint_len((u64::from(self.id) << 1) | flag)
            + self
                .schema
                .map_or(0, |s| zint_len(s.len() as u64) + s.len())
    }
}

impl core::fmt::Display for Encoding<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let schema = self
            .schema
            .map(|s| core::str::from_utf8(s).unwrap_or("<binary>"));
        match (encoding_name(self.id), schema) {
            (Some(name), None) => f.write_str(name),
            (Some(name), Some(s)) => write!(f, "{name};{s}"),
            (None, Some(s)) if self.id == Self::CUSTOM_ID => f.write_str(s),
            (None, Some(s)) => write!(f, "{};{s}", self.id),
            (None, None) => write!(f, "{}", self.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn text_is_what_display_writes() {
        let cases = [
            Encoding {
                id: 0,
                schema: None,
            },
            Encoding {
                id: 4,
                schema: Some(b"utf-8"),
            },
            Encoding {
                id: Encoding::CUSTOM_ID,
                schema: Some(b"my/type"),
            },
            Encoding {
                id: 900,
                schema: None,
            },
            Encoding {
                id: 900,
                schema: Some(b"x"),
            },
        ];
        for e in cases {
            assert_eq!(e.text(), e.to_string());
        }
        assert_eq!(
            Encoding {
                id: 4,
                schema: None
            }
            .text(),
            "text/plain"
        );
    }
}
