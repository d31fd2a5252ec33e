//! Repeated events told in the logs without flooding them, per source: the first event
//! from a source after a quiet spell is told at once; the next ones from that source,
//! within [`LogLimit::period`] of the last line, are only counted, and the next line
//! about that source says how many were left untold and since when ("… and N more from
//! <source> since …"). Sources are many (every address of the Internet may knock): at
//! most [`LogLimit::sources`] are followed one by one, the others share one count.
//!
//! Time is passed in: the rule is tested without clocks. Not synchronised: its owner
//! holds it in a mutex, or on the one thread that counts.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// The period of [`LogLimit::new`]'s callers that have no reason to choose another.
pub const DEFAULT_PERIOD: Duration = Duration::from_secs(10);

/// Sources followed one by one by default.
pub const DEFAULT_SOURCES: usize = 1024;

/// What to say about an event being counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tell {
    /// Events of the same source left untold before this one.
    pub untold: u64,
    /// When the first of them came.
    pub since: Option<Instant>,
    /// Whether the source is one of those beyond the ones followed one by one (the count
    /// is then that of all of them).
    pub pooled: bool,
}

impl Tell {
    /// The end of the log line, after the event itself: nothing when nothing was left
    /// untold, else ` (and N more from <source> in the last S s)`.
    pub fn and_more<'a>(&'a self, source: &'a dyn fmt::Display) -> AndMore<'a> {
        AndMore { tell: self, source }
    }
}

/// See [`Tell::and_more`].
pub struct AndMore<'a> {
    tell: &'a Tell,
    source: &'a dyn fmt::Display,
}

impl fmt::Display for AndMore<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tell.untold == 0 {
            return Ok(());
        }
        let secs = self
            .tell
            .since
            .map_or(0, |s| Instant::now().saturating_duration_since(s).as_secs());
        if self.tell.pooled {
            write!(
                f,
                " (and {} more from this and other sources since {secs} s ago)",
                self.tell.untold
            )
        } else {
            write!(
                f,
                " (and {} more from {} since {secs} s ago)",
                self.tell.untold, self.source
            )
        }
    }
}

/// One source's spell.
#[derive(Debug, Clone, Copy)]
struct Spell {
    told_at: Instant,
    untold: u64,
    since: Option<Instant>,
}

impl Spell {
    fn count(&mut self, now: Instant, period: Duration, pooled: bool) -> Option<Tell> {
        if now.saturating_duration_since(self.told_at) < period {
            self.untold += 1;
            self.since.get_or_insert(now);
            return None;
        }
        let tell = Tell {
            untold: self.untold,
            since: self.since,
            pooled,
        };
        *self = Self::told(now);
        Some(tell)
    }

    const fn told(now: Instant) -> Self {
        Self {
            told_at: now,
            untold: 0,
            since: None,
        }
    }
}

/// The rate limit of log lines about one kind of event, per source `K`.
#[derive(Debug)]
pub struct LogLimit<K> {
    period: Duration,
    sources: usize,
    spells: HashMap<K, Spell>,
    /// The sources beyond those followed one by one.
    others: Option<Spell>,
}

impl<K: Hash + Eq + Clone> Default for LogLimit<K> {
    fn default() -> Self {
        Self::new(DEFAULT_PERIOD, DEFAULT_SOURCES)
    }
}

impl<K: Hash + Eq + Clone> LogLimit<K> {
    /// At most one line per `period` per source, `sources` followed one by one.
    pub fn new(period: Duration, sources: usize) -> Self {
        Self {
            period,
            sources: sources.max(1),
            spells: HashMap::new(),
            others: None,
        }
    }

    /// The shortest time between two lines about one source.
    pub const fn period(&self) -> Duration {
        self.period
    }

    /// The sources followed one by one, at most.
    pub const fn sources(&self) -> usize {
        self.sources
    }

    /// Counts one event of `source` at `now`: what to tell, or `None` to log nothing.
    pub fn count(&mut self, source: &K, now: Instant) -> Option<Tell> {
        if let Some(spell) = self.spells.get_mut(source) {
            return spell.count(now, self.period, false);
        }
        if self.spells.len() >= self.sources {
            // Sources quiet for a period have nothing left to tell: forgotten.
            let period = self.period;
            self.spells
                .retain(|_, s| s.untold > 0 || now.saturating_duration_since(s.told_at) < period);
        }
        if self.spells.len() >= self.sources {
            return match &mut self.others {
                Some(spell) => spell.count(now, self.period, true),
                None => {
                    self.others = Some(Spell::told(now));
                    Some(Tell {
                        untold: 0,
                        since: None,
                        pooled: true,
                    })
                }
            };
        }
        self.spells.insert(source.clone(), Spell::told(now));
        Some(Tell {
            untold: 0,
            since: None,
            pooled: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_period_per_source_with_what_was_left_untold() {
        let t0 = Instant::now();
        let s = |secs: u64| t0 + Duration::from_secs(secs);
        let mut log = LogLimit::new(Duration::from_secs(10), 8);
        let first = log.count(&"a", s(0)).expect("the first is told");
        assert_eq!(first.untold, 0);
        assert_eq!(first.and_more(&"a").to_string(), "");
        for i in 1..=9 {
            assert_eq!(log.count(&"a", s(i)), None, "within the period: counted");
        }
        // Another source is told at once.
        assert!(log.count(&"b", s(5)).is_some());
        let again = log.count(&"a", s(10)).expect("a period later");
        assert_eq!(again.untold, 9);
        assert_eq!(again.since, Some(s(1)));
        assert!(again
            .and_more(&"a")
            .to_string()
            .contains("and 9 more from a"));
        // Long after a quiet spell: nothing left untold.
        assert_eq!(log.count(&"a", s(100)).map(|t| t.untold), Some(0));
    }

    #[test]
    fn sources_beyond_the_bound_share_one_count() {
        let t0 = Instant::now();
        let mut log = LogLimit::new(Duration::from_secs(10), 2);
        assert!(log.count(&1, t0).is_some());
        assert!(log.count(&2, t0).is_some());
        let pooled = log.count(&3, t0).expect("the first of the others");
        assert!(pooled.pooled);
        for source in 4..1000 {
            assert_eq!(log.count(&source, t0), None);
        }
        let later = log.count(&5000, t0 + Duration::from_secs(10));
        // The two followed are quiet by then: forgotten, the new one followed.
        assert_eq!(later.map(|t| t.pooled), Some(false));
        assert!(log.spells.len() <= 2);
    }
}
