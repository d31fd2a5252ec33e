//! User/password authentication during establishment, wire-compatible with Zenoh's
//! `usrpwd` method (the layout is in `weft_proto::transport::auth`).
//!
//! ```text
//!  Initiator (user, password)                 Acceptor (dictionary)
//!     |-- InitSyn  Auth[usrpwd: unit] -------->|  refused (Close GENERIC) without it
//!     |<- InitAck  Auth[usrpwd: z64 nonce] ----|  nonce: random, one per handshake
//!     |-- OpenSyn  Auth[usrpwd: user, hmac] -->|  hmac = HMAC-SHA3-256(nonce LE, password)
//!     |<- OpenAck  Auth[usrpwd: unit] ---------|  refused (Close GENERIC) unless the
//!                                                 user is known and the hmac matches
//! ```
//!
//! As in Zenoh, a node with user/password settings requires them of every node that
//! connects to it, and one with credentials requires its acceptor to ask for them.
//! The password itself never goes on the wire, and never into an error or a log.

use std::collections::HashMap;
use std::fmt;

use hmac::{Hmac, Mac};
use sha3::Sha3_256;
use thiserror::Error;
use weft_proto::ext::{ExtBody, Extension};
use weft_proto::printable::printable;
use weft_proto::transport::auth::{method, usrpwd_id, AuthChain, AuthEntry};
use weft_proto::DecodeError;

/// The length of the answer to a challenge (a SHA3-256 HMAC).
pub const HMAC_LEN: usize = 32;

/// The answer to the challenge `nonce`: HMAC-SHA3-256 of `password`, keyed with the nonce
/// as 8 little-endian bytes.
pub fn sign(nonce: u64, password: &[u8]) -> [u8; HMAC_LEN] {
    let mut mac = keyed(nonce);
    mac.update(password);
    mac.finalize().into_bytes().into()
}

fn keyed(nonce: u64) -> Hmac<Sha3_256> {
    // HMAC takes keys of any length: this cannot fail.
    <Hmac<Sha3_256> as Mac>::new_from_slice(&nonce.to_le_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts an 8-byte key"))
}

/// The users an acceptor accepts, with their passwords (Zenoh's `dictionary_file`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Dictionary(HashMap<Vec<u8>, Vec<u8>>);

impl Dictionary {
    /// Parses Zenoh's dictionary format: one `user:password` per line, split at the first
    /// `:`, both sides trimmed of white space and not empty; blank lines are skipped.
    pub fn parse(text: &str) -> Result<Self, DictionaryError> {
        let mut users = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line_no = n + 1;
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (user, password) = line
                .split_once(':')
                .ok_or(DictionaryError::NoSeparator { line: line_no })?;
            let (user, password) = (user.trim(), password.trim());
            if user.is_empty() {
                return Err(DictionaryError::EmptyUser { line: line_no });
            }
            if password.is_empty() {
                return Err(DictionaryError::EmptyPassword { line: line_no });
            }
            users.insert(user.as_bytes().to_vec(), password.as_bytes().to_vec());
        }
        Ok(Self(users))
    }

    /// Adds (or replaces) a user.
    pub fn insert(&mut self, user: &str, password: &str) {
        self.0
            .insert(user.as_bytes().to_vec(), password.as_bytes().to_vec());
    }

    /// How many users it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds no user (then every initiator is refused).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `user` is in it.
    pub fn contains(&self, user: &str) -> bool {
        self.0.contains_key(user.as_bytes())
    }
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Users only: passwords stay out of logs.
        let mut users: Vec<_> = self.0.keys().map(|u| String::from_utf8_lossy(u)).collect();
        users.sort();
        f.debug_tuple("Dictionary").field(&users).finish()
    }
}

/// A dictionary that does not parse, with the line at fault (from 1).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DictionaryError {
    /// A line without `:`.
    #[error("line {line}: expected `user:password`")]
    NoSeparator {
        /// The line.
        line: usize,
    },
    /// A line whose user is empty.
    #[error("line {line}: empty user")]
    EmptyUser {
        /// The line.
        line: usize,
    },
    /// A line whose password is empty.
    #[error("line {line}: empty password")]
    EmptyPassword {
        /// The line.
        line: usize,
    },
}

/// A node's user/password settings: the credentials it presents when it opens a link,
/// and the dictionary it checks when it accepts one.
///
/// Enabled (see [`UsrPwd::is_enabled`]) once either is set: then, as in Zenoh, the node
/// accepts only initiators that authenticate against its dictionary (none without one).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct UsrPwd {
    credentials: Option<(String, Vec<u8>)>,
    dictionary: Option<Dictionary>,
}

impl UsrPwd {
    /// No credentials, no dictionary: authentication off.
    pub fn new() -> Self {
        Self::default()
    }

    /// Presents `user` and `password` when opening links.
    #[must_use]
    pub fn with_credentials(mut self, user: &str, password: &str) -> Self {
        self.credentials = Some((user.to_string(), password.as_bytes().to_vec()));
        self
    }

    /// Accepts the users of `dictionary` (and only them) on accepted links.
    #[must_use]
    pub fn with_dictionary(mut self, dictionary: Dictionary) -> Self {
        self.dictionary = Some(dictionary);
        self
    }

    /// The user presented when opening links, if any.
    pub fn user(&self) -> Option<&str> {
        self.credentials.as_ref().map(|(u, _)| u.as_str())
    }

    /// The dictionary checked when accepting links, if any.
    pub const fn dictionary(&self) -> Option<&Dictionary> {
        self.dictionary.as_ref()
    }

    /// Whether accepted links must authenticate: credentials or a dictionary are set.
    pub const fn is_enabled(&self) -> bool {
        self.credentials.is_some() || self.dictionary.is_some()
    }

    /// The OpenSyn answer to the challenge `nonce`: the user and its HMAC.
    pub(super) fn respond(&self, nonce: u64) -> Option<(&[u8], [u8; HMAC_LEN])> {
        let (user, password) = self.credentials.as_ref()?;
        Some((user.as_bytes(), sign(nonce, password)))
    }

    /// Checks an initiator's answer to the challenge `nonce`.
    pub(super) fn check(&self, nonce: u64, user: &[u8], hmac: &[u8]) -> Result<(), AuthError> {
        let name = || String::from_utf8_lossy(user).into_owned();
        let password = self
            .dictionary
            .as_ref()
            .and_then(|d| d.0.get(user))
            .ok_or_else(|| AuthError::UnknownUser(name()))?;
        let mut mac = keyed(nonce);
        mac.update(password);
        // Constant-time comparison.
        mac.verify_slice(hmac)
            .map_err(|_| AuthError::WrongPassword(name()))
    }
}

impl fmt::Debug for UsrPwd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UsrPwd")
            .field("user", &self.user())
            .field("password", &self.credentials.as_ref().map(|_| "***"))
            .field("dictionary", &self.dictionary)
            .finish()
    }
}

/// Why user/password authentication failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuthError {
    /// The peer's message has no user/password extension where one is required.
    #[error("the peer's {0} has no user/password authentication")]
    Missing(&'static str),
    /// The Auth extension, or the user/password one in it, does not decode.
    #[error("malformed authentication extension: {0}")]
    Malformed(DecodeError),
    /// The user is not in this node's dictionary. The name is the peer's: it is escaped
    /// where it is displayed (a newline in it cannot forge a log line).
    #[error("unknown user `{}`", printable(.0))]
    UnknownUser(String),
    /// The user is known, its answer to the challenge is not right.
    #[error("wrong password for user `{}`", printable(.0))]
    WrongPassword(String),
}

/// Offset of `inner`, a sub-slice of `outer`, in `outer` (for error offsets).
pub(super) fn offset_in(outer: &[u8], inner: &[u8]) -> usize {
    (inner.as_ptr() as usize)
        .saturating_sub(outer.as_ptr() as usize)
        .min(outer.len())
}

/// The user/password extension of a message's Auth value (a sub-slice of `batch`),
/// required: `Missing(message)` without it; `Malformed` unless its header is `id`.
pub(super) fn required<'a>(
    batch: &'a [u8],
    auth: Option<&'a [u8]>,
    id: u8,
    message: &'static str,
) -> Result<AuthEntry<'a>, AuthError> {
    let value = auth.unwrap_or_default();
    let chain = AuthChain::decode(value, offset_in(batch, value)).map_err(AuthError::Malformed)?;
    let entry = chain
        .method(method::USRPWD)
        .ok_or(AuthError::Missing(message))?;
    if entry.ext.id != id {
        let reason = match id {
            usrpwd_id::INIT_ACK => "expected a 64-bit challenge",
            usrpwd_id::OPEN_SYN => "expected a user and an HMAC",
            _ => "expected no value",
        };
        return Err(AuthError::Malformed(
            weft_proto::transport::auth::wrong_encoding(&entry, reason),
        ));
    }
    Ok(entry)
}

/// An Auth value holding the single user/password extension `ext`, encoded into `out`.
pub(super) fn single<'o>(ext: Extension<'_>, out: &'o mut Vec<u8>) -> &'o [u8] {
    out.clear();
    // Encoding into a Vec cannot fail.
    let _ = weft_proto::transport::auth::encode_chain(&[ext], out);
    out
}

/// The value-less user/password extension with header `id`.
pub(super) const fn unit(id: u8) -> Extension<'static> {
    Extension {
        id,
        body: ExtBody::Unit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dictionary_format_is_zenohs() {
        let d = Dictionary::parse("alice:secret\n\n  bob : pa:ss  \r\n").unwrap();
        assert_eq!(d.len(), 2);
        assert!(d.contains("alice") && d.contains("bob"));
        assert_eq!(d.0[&b"bob"[..]], b"pa:ss");
        assert_eq!(
            Dictionary::parse("alice:x\nbob\n"),
            Err(DictionaryError::NoSeparator { line: 2 })
        );
        assert_eq!(
            Dictionary::parse(" :x"),
            Err(DictionaryError::EmptyUser { line: 1 })
        );
        assert_eq!(
            Dictionary::parse("u: "),
            Err(DictionaryError::EmptyPassword { line: 1 })
        );
        assert!(Dictionary::parse("").unwrap().is_empty());
    }

    #[test]
    fn debug_output_never_shows_passwords() {
        let mut d = Dictionary::default();
        d.insert("alice", "hunter2");
        let u = UsrPwd::new()
            .with_credentials("bob", "swordfish")
            .with_dictionary(d);
        let shown = format!("{u:?}");
        assert!(shown.contains("alice") && shown.contains("bob"), "{shown}");
        assert!(!shown.contains("hunter2") && !shown.contains("swordfish"));
    }

    #[test]
    fn the_hmac_is_sha3_256_keyed_with_the_little_endian_nonce() {
        // Computed independently (Python's hmac with hashlib.sha3_256, key 01..08).
        let mac = sign(0x0807_0605_0403_0201, b"password");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "0eb5d3775397649456ffcf4ed20bff368cc0d2b0d4be41a8b58d178a0cdc05b4"
        );
        let mut d = Dictionary::default();
        d.insert("u", "password");
        let u = UsrPwd::new().with_dictionary(d);
        assert_eq!(u.check(0x0807_0605_0403_0201, b"u", &mac), Ok(()));
        assert_eq!(
            u.check(0x0807_0605_0403_0202, b"u", &mac),
            Err(AuthError::WrongPassword("u".into()))
        );
        assert_eq!(
            u.check(1, b"v", &mac),
            Err(AuthError::UnknownUser("v".into()))
        );
        assert_eq!(
            u.check(0x0807_0605_0403_0201, b"u", &mac[..31]),
            Err(AuthError::WrongPassword("u".into()))
        );
    }
}
