//! Samples: what a subscriber receives.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use weft_proto::core::{CongestionControl, Priority, Timestamp};
use weft_proto::zenoh::SourceInfo;

use super::Payload;

/// Whether a sample carries a value or the deletion of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SampleKind {
    /// A value was put.
    Put,
    /// The key was deleted.
    Delete,
}

impl SampleKind {
    /// `"put"` or `"delete"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Put => "put",
            Self::Delete => "delete",
        }
    }
}

/// A value (or deletion) published on a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// The key.
    pub key_expr: SharedKey,
    /// Put or delete.
    pub kind: SampleKind,
    /// The value (empty for a deletion).
    pub payload: Payload,
    /// The value's encoding, as text (`zenoh/bytes` by default; borrowed, not allocated,
    /// for the predefined encodings).
    pub encoding: Cow<'static, str>,
    /// When it was produced, if timestamped.
    pub timestamp: Option<Timestamp>,
    /// User bytes attached to it.
    pub attachment: Option<Vec<u8>>,
    /// Its priority.
    pub priority: Priority,
    /// Its congestion control.
    pub congestion_control: CongestionControl,
    /// Whether it was sent express.
    pub express: bool,
    /// The entity that published it and its sequence number there, when the publisher
    /// said so.
    pub source_info: Option<SourceInfo>,
}

/// A sample's key: text shared with the session's route cache, so that delivering a
/// sample does not copy its key. Reads as a `&str` (`Deref`), compares with text.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedKey(Arc<str>);

impl SharedKey {
    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for SharedKey {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for SharedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for SharedKey {
    fn from(s: &str) -> Self {
        Self(s.into())
    }
}

impl From<String> for SharedKey {
    fn from(s: String) -> Self {
        Self(s.into())
    }
}

impl From<Arc<str>> for SharedKey {
    fn from(s: Arc<str>) -> Self {
        Self(s)
    }
}

impl From<SharedKey> for String {
    fn from(k: SharedKey) -> Self {
        k.0.as_ref().to_owned()
    }
}

impl PartialEq<str> for SharedKey {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for SharedKey {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for SharedKey {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}
