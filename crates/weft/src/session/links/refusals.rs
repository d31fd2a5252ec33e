//! The handshakes of accepted links that fail, as a session keeps them: failed
//! authentications counted by reason (the metrics show them); every failure logged at most
//! once per period per source address, with how many were left untold
//! ([`crate::log_limit`]); and, with `transport.auth.throttle.*` set, the addresses whose
//! authentications keep failing refused for a while ([`super::throttle`]).

use std::fmt;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use weft_transport::establish::{AuthError, EstablishError};

use super::throttle::Throttle;
use crate::config::AuthThrottle;
use crate::log_limit::LogLimit;
use crate::transport::OpenError;

/// Why a connection was refused, as counted (the metrics' `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Reason {
    UnknownUser,
    WrongPassword,
    /// No or a malformed user/password extension where one is required.
    NoCredentials,
    /// Refused unanswered: the address is throttled.
    Throttled,
}

impl Reason {
    const ALL: [Self; 4] = [
        Self::UnknownUser,
        Self::WrongPassword,
        Self::NoCredentials,
        Self::Throttled,
    ];

    const fn name(self) -> &'static str {
        match self {
            Self::UnknownUser => "auth_unknown_user",
            Self::WrongPassword => "auth_wrong_password",
            Self::NoCredentials => "auth_no_credentials",
            Self::Throttled => "auth_throttled",
        }
    }

    fn of(e: &OpenError) -> Option<Self> {
        match e {
            OpenError::Handshake(EstablishError::Auth(a)) => Some(match a {
                AuthError::UnknownUser(_) => Self::UnknownUser,
                AuthError::WrongPassword(_) => Self::WrongPassword,
                AuthError::Missing(_) | AuthError::Malformed(_) => Self::NoCredentials,
            }),
            _ => None,
        }
    }
}

/// Where a connection came from, as its log lines are limited: its IP address (not its
/// port: a new connection has a new one), or a link that has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Source(pub(crate) Option<IpAddr>);

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(ip) => write!(f, "{ip}"),
            None => f.write_str("local links"),
        }
    }
}

/// What a session keeps of its refused connections.
#[derive(Debug)]
pub(crate) struct Refusals {
    counts: [AtomicU64; Reason::ALL.len()],
    /// Paced per source and kind of refusal (a port probe's closed connection does not
    /// hide the failed authentication that follows it).
    log: Mutex<LogLimit<(Source, &'static str)>>,
    throttle: Option<Mutex<Throttle>>,
}

impl Refusals {
    /// Nothing refused yet; throttling as `settings` say.
    pub(crate) fn new(settings: AuthThrottle) -> Self {
        Self {
            counts: Default::default(),
            log: Mutex::new(LogLimit::default()),
            throttle: Throttle::new(settings).map(Mutex::new),
        }
    }

    /// The counts by reason (for the metrics).
    pub(crate) fn counts(&self) -> Vec<(&'static str, u64)> {
        Reason::ALL
            .iter()
            .zip(&self.counts)
            .map(|(r, n)| (r.name(), n.load(Ordering::Relaxed)))
            .collect()
    }

    fn count(&self, reason: Reason) {
        let i = Reason::ALL
            .iter()
            .position(|r| *r == reason)
            .expect("every reason is in ALL");
        self.counts[i].fetch_add(1, Ordering::Relaxed);
    }

    /// The line to log about `what` from `source`: `None` when a line about it and this
    /// `kind` of refusal was logged within the period (the next line says how many were
    /// left untold).
    pub(crate) fn line(
        &self,
        source: Source,
        kind: &'static str,
        what: impl FnOnce() -> String,
    ) -> Option<String> {
        let tell = self
            .log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .count(&(source, kind), Instant::now())?;
        Some(format!("{}{}", what(), tell.and_more(&source)))
    }

    /// Logs (at info) what [`Refusals::line`] gives.
    fn tell(&self, source: Source, kind: &'static str, what: impl FnOnce() -> String) {
        if let Some(line) = self.line(source, kind, what) {
            tracing::info!("{line}");
        }
    }

    /// Whether `link`, just accepted, is refused before its handshake starts: its
    /// address is throttled. Counted and logged when so.
    pub(crate) fn refuses(&self, link: &crate::link::Link) -> bool {
        let Some(throttle) = &self.throttle else {
            return false;
        };
        let source = Source(link.peer_ip());
        let Some(ip) = source.0 else {
            return false;
        };
        let left = throttle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .refuses(ip, Instant::now());
        let Some(left) = left else {
            return false;
        };
        self.count(Reason::Throttled);
        self.tell(source, Reason::Throttled.name(), || {
            format!(
                "refused {}: its address failed to authenticate too often \
                 (transport.auth.throttle), refused for {} s more",
                link.describe(),
                left.as_secs() + 1
            )
        });
        true
    }

    /// The handshake of a connection from `source` (`describe`d) failed with `e`.
    pub(crate) fn failed(&self, source: Source, describe: &str, e: &OpenError) {
        let reason = Reason::of(e);
        let mut throttled = false;
        if let Some(reason) = reason {
            self.count(reason);
            if let (Some(throttle), Some(ip)) = (&self.throttle, source.0) {
                throttled = throttle
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .failed(ip, Instant::now());
            }
        }
        self.tell(source, reason.map_or("handshake", Reason::name), || {
            let then = if throttled {
                " (its address is refused for a while: transport.auth.throttle)"
            } else {
                ""
            };
            format!("refused {describe}: {e}{then}")
        });
    }

    /// The handshake of a connection from `source` succeeded.
    pub(crate) fn succeeded(&self, source: Source) {
        if let (Some(throttle), Some(ip)) = (&self.throttle, source.0) {
            throttle
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .succeeded(ip);
        }
    }
}
