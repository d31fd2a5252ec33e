//! Messages received from a node and not delivered, counted by reason: the inbound
//! counterpart of `drops` (which counts what a destination could not take).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a message received from a node was discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiscardReason {
    /// Over `transport.link.rx.max_message_size` once reassembled.
    TooLarge,
    /// Its reassembly would have held more than the memory budget shared by the
    /// transports.
    OverBudget,
    /// Its reassembly would have taken its transport's partial messages over the
    /// transport's share (`transport.link.rx.reassembly_share`).
    OverShare,
    /// It did not decode (a reassembled message, or a batch that closed the link).
    Malformed,
    /// Data on a key nothing here subscribes to, nor any face a router forwards to.
    NoRoute,
    /// A reply that came after its query was over: timed out, finished, or unknown.
    Expired,
    /// A reply on a key that does not intersect its query's, to a query that accepts
    /// only those that do.
    KeyMismatch,
    /// From a multicast group member: a key-expression id it never declared.
    UnknownKeyExpr,
    /// From a multicast group member: a message the group does not carry (a query, an
    /// interest, a declaration other than a key expression's).
    NotOnMulticast,
}

impl DiscardReason {
    /// Every reason, in the order the transports count them.
    pub const ALL: [Self; 9] = [
        Self::TooLarge,
        Self::OverBudget,
        Self::OverShare,
        Self::Malformed,
        Self::NoRoute,
        Self::Expired,
        Self::KeyMismatch,
        Self::UnknownKeyExpr,
        Self::NotOnMulticast,
    ];

    /// The reason's name, as metrics label it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TooLarge => "too_large",
            Self::OverBudget => "over_budget",
            Self::OverShare => "over_share",
            Self::Malformed => "malformed",
            Self::NoRoute => "no_route",
            Self::Expired => "expired",
            Self::KeyMismatch => "key_mismatch",
            Self::UnknownKeyExpr => "unknown_key_expr",
            Self::NotOnMulticast => "not_on_multicast",
        }
    }

    const fn index(self) -> usize {
        match self {
            Self::TooLarge => 0,
            Self::OverBudget => 1,
            Self::Malformed => 2,
            Self::NoRoute => 3,
            Self::Expired => 4,
            Self::KeyMismatch => 5,
            Self::OverShare => 6,
            Self::UnknownKeyExpr => 7,
            Self::NotOnMulticast => 8,
        }
    }
}

impl fmt::Display for DiscardReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Discards by reason, counted since the transport opened.
#[derive(Debug, Default)]
pub(crate) struct DiscardCounts([AtomicU64; 9]);

impl DiscardCounts {
    /// Discards for `reason` so far.
    pub(crate) fn get(&self, reason: DiscardReason) -> u64 {
        self.0[reason.index()].load(Ordering::Relaxed)
    }

    /// Counts `n` more discards for `reason`.
    pub(crate) fn add(&self, reason: DiscardReason, n: u64) {
        self.0[reason.index()].fetch_add(n, Ordering::Relaxed);
    }

    /// Sets the count of `reason` to `n` (a reader publishing the totals it keeps).
    pub(crate) fn set(&self, reason: DiscardReason, n: u64) {
        self.0[reason.index()].store(n, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_kept_per_reason() {
        let c = DiscardCounts::default();
        c.add(DiscardReason::NoRoute, 1);
        c.add(DiscardReason::NoRoute, 1);
        c.add(DiscardReason::Expired, 3);
        c.set(DiscardReason::TooLarge, 7);
        let all: Vec<(&str, u64)> = DiscardReason::ALL
            .iter()
            .map(|r| (r.as_str(), c.get(*r)))
            .collect();
        assert_eq!(
            all,
            [
                ("too_large", 7),
                ("over_budget", 0),
                ("over_share", 0),
                ("malformed", 0),
                ("no_route", 2),
                ("expired", 3),
                ("key_mismatch", 0),
                ("unknown_key_expr", 0),
                ("not_on_multicast", 0)
            ]
        );
    }
}
