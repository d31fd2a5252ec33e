//! Samples: what a subscriber receives.

use weft_proto::core::{CongestionControl, Priority, Timestamp};

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
    pub key_expr: String,
    /// Put or delete.
    pub kind: SampleKind,
    /// The value (empty for a deletion).
    pub payload: Vec<u8>,
    /// The value's encoding, as text (`zenoh/bytes` by default).
    pub encoding: String,
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
}
