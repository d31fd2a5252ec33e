//! Writes a storage discards (older than the value it holds), told in the logs without
//! flooding them: the first discard after a quiet spell is logged at once with its key,
//! later ones in one line per [`LOG_PERIOD`] at most, with their number and the last key
//! (paced by `weft::log_limit`, the storage being the source; time passed in: the rule
//! is tested without clocks). Keys are escaped before they are logged
//! (`weft::printable`): a key may hold control characters, which must not reach the log
//! raw.

use std::time::{Duration, Instant};

use weft::log_limit::LogLimit;

/// The shortest time between two log lines about one storage's discarded writes.
pub(crate) const LOG_PERIOD: Duration = Duration::from_secs(10);

/// What to log about a discarded write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tell {
    /// The first discard after a quiet spell.
    First,
    /// This many discards since the last line (this one included).
    Summary(u64),
}

/// The rate limit of one storage's log lines about discarded writes.
#[derive(Debug)]
pub(crate) struct DiscardLog(LogLimit<()>);

impl Default for DiscardLog {
    fn default() -> Self {
        Self(LogLimit::new(LOG_PERIOD, 1))
    }
}

impl DiscardLog {
    /// Counts one discarded write at `now`; says what to log, if anything.
    pub(crate) fn count(&mut self, now: Instant) -> Option<Tell> {
        let tell = self.0.count(&(), now)?;
        Some(match tell.untold {
            0 => Tell::First,
            n => Tell::Summary(n + 1),
        })
    }
}

/// The log line about discarded writes of the storage `storage`, `key` the last one.
pub(crate) fn line(storage: &str, key: &str, tell: Tell) -> String {
    let key = weft::printable(key);
    match tell {
        Tell::First => format!(
            "storage `{storage}`: discarded a write of `{key}`: older than the value it holds"
        ),
        Tell::Summary(n) => format!(
            "storage `{storage}`: discarded {n} writes older than the values held \
             in {}s, the last of `{key}`",
            LOG_PERIOD.as_secs()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_discard_is_told_at_once_then_one_line_per_period() {
        let t0 = Instant::now();
        let s = |secs: u64| t0 + Duration::from_secs(secs);
        let mut log = DiscardLog::default();
        assert_eq!(log.count(s(0)), Some(Tell::First));
        for i in 1..=9 {
            assert_eq!(log.count(s(i)), None, "within the period: nothing");
        }
        assert_eq!(log.count(s(10)), Some(Tell::Summary(10)));
        // A discard long after a quiet spell is a first one again.
        assert_eq!(log.count(s(100)), Some(Tell::First));
    }

    #[test]
    fn control_characters_do_not_reach_the_log_raw() {
        let text = line("s", "a/\u{1b}[31mred\n/b", Tell::First);
        assert!(!text.chars().any(char::is_control), "{text:?}");
        assert!(text.contains(r"a/\u{1b}[31mred\n/b"), "{text}");
        let text = line("s", "a/\r\u{7}", Tell::Summary(3));
        assert!(!text.chars().any(char::is_control), "{text:?}");
        assert!(text.contains("discarded 3 writes"), "{text}");
    }
}
