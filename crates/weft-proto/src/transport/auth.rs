//! The value of the Auth extension of Init and Open (0x43), and the user/password
//! method's messages inside it.
//!
//! The Auth value is itself an extension chain, one extension per authentication
//! method, with the same header as message extensions (the Z bit says another one
//! follows). An empty value, or no Auth extension at all, is an empty chain. The ID
//! nibble names the method: 1 public key, 2 user/password.
//!
//! ```text
//!  Auth value (zbuf)
//! +-+-+-+-+-+-+-+-+
//! |Z|ENC|M|  ID   |   a method's extension for this step of the handshake
//! %    value      %
//! +---------------+
//! ~      ...      ~   more methods while Z is set
//! ```
//!
//! User/password (ID 2), one extension per handshake message:
//!
//! ```text
//!  InitSyn  0x02 unit   "I bring credentials"
//!  InitAck  0x22 z64    the acceptor's challenge: a random 64-bit nonce
//!  OpenSyn  0x42 zbuf   <u8;z32> user, <u8;z32> HMAC-SHA3-256(key = nonce as 8
//!                       little-endian bytes, message = password)
//!  OpenAck  0x02 unit   accepted
//! ```

use alloc::vec::Vec;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::ext::{self, Extension, ENC_UNIT, ENC_Z64, ENC_ZBUF, FLAG_Z};
use crate::reader::Reader;
use crate::writer::Writer;

/// The ID nibble of each authentication method.
pub mod method {
    /// Public-key authentication.
    pub const PUBKEY: u8 = 0x1;
    /// User/password authentication.
    pub const USRPWD: u8 = 0x2;
}

/// Headers (without the Z bit) of the user/password method's extensions.
pub mod usrpwd_id {
    use super::{method::USRPWD, ENC_UNIT, ENC_Z64, ENC_ZBUF};

    /// InitSyn: the initiator has credentials (unit).
    pub const INIT_SYN: u8 = ENC_UNIT | USRPWD;
    /// InitAck: the challenge nonce (z64).
    pub const INIT_ACK: u8 = ENC_Z64 | USRPWD;
    /// OpenSyn: user and HMAC (zbuf).
    pub const OPEN_SYN: u8 = ENC_ZBUF | USRPWD;
    /// OpenAck: accepted (unit).
    pub const OPEN_ACK: u8 = ENC_UNIT | USRPWD;
}

/// Longest user name accepted in an OpenSyn, in bytes.
pub const MAX_USER_LEN: u64 = 4096;
/// Longest HMAC accepted in an OpenSyn, in bytes (SHA3-256 gives 32).
pub const MAX_HMAC_LEN: u64 = 256;

/// One method's extension in an Auth value, with the offset of its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthEntry<'a> {
    /// Offset of the extension's header in the decoded input.
    pub at: usize,
    /// The extension (its ID nibble is the method).
    pub ext: Extension<'a>,
}

/// The methods' extensions of an Auth value, in the order they came.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthChain<'a> {
    /// The extensions.
    pub entries: Vec<AuthEntry<'a>>,
}

impl<'a> AuthChain<'a> {
    /// Decodes an Auth value whose first byte is at offset `base` of the enclosing input
    /// (offsets in errors count from there). Methods are kept whatever their M bit: a
    /// receiver looks for the ones it knows and ignores the others.
    pub fn decode(value: &'a [u8], base: usize) -> Result<Self, DecodeError> {
        let mut r = Reader::with_base(value, base);
        let mut entries = Vec::new();
        let mut more = !r.is_empty();
        while more {
            let (ext, at, next) = ext::read(&mut r)?;
            entries.push(AuthEntry { at: base + at, ext });
            more = next;
        }
        if !r.is_empty() {
            return Err(r.error(DecodeErrorKind::TrailingBytes {
                message: "Auth extension",
                count: r.remaining(),
            }));
        }
        Ok(Self { entries })
    }

    /// The first extension of `method` (an ID nibble from [`method`]).
    pub fn method(&self, method: u8) -> Option<AuthEntry<'a>> {
        self.entries
            .iter()
            .find(|e| e.ext.number() == method)
            .copied()
    }
}

/// Encodes `exts` as an Auth value (a chain, Z set on all but the last).
pub fn encode_chain<W: Writer>(exts: &[Extension<'_>], w: &mut W) -> Result<(), EncodeError> {
    for (i, e) in exts.iter().enumerate() {
        let more = if i + 1 < exts.len() { FLAG_Z } else { 0 };
        w.u8(e.id | more)?;
        e.body.write(w)?;
    }
    Ok(())
}

/// The error for a method's extension of the wrong encoding.
pub fn wrong_encoding(entry: &AuthEntry<'_>, reason: &'static str) -> DecodeError {
    DecodeError::new(
        DecodeErrorKind::MalformedExtension {
            name: "user/password",
            reason,
        },
        entry.at,
    )
}

/// The user/password method's OpenSyn value: who the initiator is, and its answer to
/// the challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsrPwdResponse<'a> {
    /// The user name, as configured (UTF-8 in practice, not checked).
    pub user: &'a [u8],
    /// HMAC-SHA3-256 of the password, keyed with the challenge nonce.
    pub hmac: &'a [u8],
}

impl<'a> UsrPwdResponse<'a> {
    /// Decodes the value of an OpenSyn usrpwd extension whose first byte is at offset
    /// `base` of the enclosing input.
    pub fn decode(value: &'a [u8], base: usize) -> Result<Self, DecodeError> {
        let mut r = Reader::with_base(value, base);
        let user = r.zbytes(MAX_USER_LEN, "user name length")?;
        let hmac = r.zbytes(MAX_HMAC_LEN, "HMAC length")?;
        if !r.is_empty() {
            return Err(r.error(DecodeErrorKind::TrailingBytes {
                message: "user/password OpenSyn",
                count: r.remaining(),
            }));
        }
        Ok(Self { user, hmac })
    }

    /// Encodes the value.
    pub fn encode<W: Writer>(&self, w: &mut W) -> Result<(), EncodeError> {
        w.zbytes(self.user)?;
        w.zbytes(self.hmac)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ext::ExtBody;
    use alloc::vec;

    #[test]
    fn an_empty_value_is_an_empty_chain() {
        assert!(AuthChain::decode(&[], 0).unwrap().entries.is_empty());
    }

    #[test]
    fn chain_round_trip_and_lookup_by_method() {
        // pubkey zbuf [9], then usrpwd z64 300.
        let exts = [
            Extension {
                id: ENC_ZBUF | method::PUBKEY,
                body: ExtBody::ZBuf(&[9]),
            },
            Extension {
                id: usrpwd_id::INIT_ACK,
                body: ExtBody::Z64(300),
            },
        ];
        let mut bytes = Vec::new();
        encode_chain(&exts, &mut bytes).unwrap();
        assert_eq!(bytes, [0xc1, 0x01, 0x09, 0x22, 0xac, 0x02]);
        let chain = AuthChain::decode(&bytes, 10).unwrap();
        let usrpwd = chain.method(method::USRPWD).unwrap();
        assert_eq!(usrpwd.at, 13);
        assert_eq!(usrpwd.ext.body, ExtBody::Z64(300));
        assert!(AuthChain::decode(&[0x02], 0)
            .unwrap()
            .method(method::PUBKEY)
            .is_none());
    }

    #[test]
    fn malformed_chains_are_errors_with_offsets() {
        // A truncated z64, a reserved encoding, bytes after the last extension.
        let e = AuthChain::decode(&[0x22], 5).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }));
        assert_eq!(e.offset, 6);
        let e = AuthChain::decode(&[0x82, 0x62], 0).unwrap_err();
        assert!(matches!(
            e.kind,
            DecodeErrorKind::ReservedExtensionEncoding { header: 0x62 }
        ));
        assert_eq!(e.offset, 1);
        let e = AuthChain::decode(&[0x02, 0x00], 0).unwrap_err();
        assert!(matches!(
            e.kind,
            DecodeErrorKind::TrailingBytes { count: 1, .. }
        ));
    }

    #[test]
    fn response_round_trip_and_bounds() {
        let r = UsrPwdResponse {
            user: b"alice",
            hmac: &[7; 32],
        };
        let mut value = Vec::new();
        r.encode(&mut value).unwrap();
        assert_eq!(&value[..7], b"\x05alice\x20");
        assert_eq!(value.len(), 6 + 1 + 32);
        assert_eq!(UsrPwdResponse::decode(&value, 0).unwrap(), r);
        // A user name longer than the input, an oversized HMAC, a trailing byte.
        let e = UsrPwdResponse::decode(&[0x09, b'a'], 3).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }));
        assert_eq!(e.offset, 4);
        let e = UsrPwdResponse::decode(&[0x00, 0x81, 0x02], 0).unwrap_err();
        assert!(matches!(
            e.kind,
            DecodeErrorKind::OutOfBounds {
                field: "HMAC length",
                ..
            }
        ));
        let mut long = vec![0x01, b'a', 0x00, 0xff];
        let e = UsrPwdResponse::decode(&long, 0).unwrap_err();
        assert!(matches!(
            e.kind,
            DecodeErrorKind::TrailingBytes { count: 1, .. }
        ));
        long.pop();
        assert_eq!(UsrPwdResponse::decode(&long, 0).unwrap().user, b"a");
    }
}
