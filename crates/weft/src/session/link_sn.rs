//! Sequence numbers of link-state lists (router mesh and gossip): which ones are news.
//!
//! A node's number grows by one with each change it announces, and a list is believed
//! when its number is above the one known, so a single lie with a huge number would stop
//! every later truth: a liar announcing a router under 2^64 − 1 leaves that router no
//! number above it (its next one wraps to 0), and its real lists are ignored for good.
//! So numbers compare within bounds, never across a wrap:
//!
//! - a number at [`CEILING`] (2^63) or above is refused outright: no honest node counts
//!   that far (weft starts from the time in milliseconds, about 2^41; Zenoh from 1), so a
//!   router's own number, kept below the ceiling plus a [`WINDOW`], never wraps;
//! - a relayed number more than [`WINDOW`] (2^32) above the one known is refused: a
//!   missed stretch of changes is far shorter, and a router restarting with the same id
//!   starts from the clock, less than 2^32 ms (49 days) ahead of its former self.
//!
//! What a node says of itself on its own session is authoritative whatever the number
//! (`mesh`), which the other rules cannot give: a liar cannot speak on another's session.

/// Numbers from here up are refused.
pub(crate) const CEILING: u64 = 1 << 63;

/// The largest jump above a known number believed from a relay.
pub(crate) const WINDOW: u64 = 1 << 32;

/// Whether `sn` can be a node's sequence number at all.
pub(crate) const fn plausible(sn: u64) -> bool {
    sn < CEILING
}

/// Whether `sn`, relayed about a node whose latest number known is `known` (`None`: never
/// heard of), is news: plausible, above the known number, within the window of it.
pub(crate) fn is_news(sn: u64, known: Option<u64>) -> bool {
    plausible(sn) && known.is_none_or(|k| sn > k && sn - k <= WINDOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_within_the_window_and_below_the_ceiling() {
        assert!(is_news(1, None));
        assert!(is_news(8, Some(7)));
        assert!(!is_news(7, Some(7)), "the same number is no news");
        assert!(!is_news(6, Some(7)), "an older one neither");
        assert!(is_news(7 + WINDOW, Some(7)));
        assert!(!is_news(8 + WINDOW, Some(7)), "a jump beyond the window");
        assert!(!is_news(u64::MAX, None), "the poison, even unheard of");
        assert!(!is_news(u64::MAX, Some(u64::MAX - 1)));
        assert!(!is_news(CEILING, Some(CEILING - 1)));
        assert!(is_news(CEILING - 1, Some(CEILING - 2)));
    }
}
