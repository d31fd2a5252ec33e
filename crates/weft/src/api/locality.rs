//! Where a publication or a query may go, and where a subscriber's samples or a
//! queryable's queries may come from: this session only, other nodes only, or both.

/// This session, the other nodes, or both (Zenoh's `Locality`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Locality {
    /// This session only: a subscriber or queryable with this origin is not declared to
    /// other nodes; a put or get with this destination is not sent to them.
    SessionLocal,
    /// Other nodes only.
    Remote,
    /// Both (the default).
    #[default]
    Any,
}

impl Locality {
    /// Whether this session's own entities are included.
    pub const fn includes_session(self) -> bool {
        !matches!(self, Self::Remote)
    }

    /// Whether other nodes are included.
    pub const fn includes_remote(self) -> bool {
        !matches!(self, Self::SessionLocal)
    }
}
