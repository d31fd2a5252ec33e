//! What a test needs from outside the repository, and what happens when it is missing.
//!
//! A test that cannot run never passes in silence: it says `skipped: <reason>` on standard
//! error and returns, or, when the prerequisite's `WEFT_REQUIRE_*` variable is set (the
//! test command, `scripts/test.sh`, sets them all), it fails with that reason.

use std::fmt;

/// Something tests need from outside the repository, each with the environment variable
/// that turns its absence from a skip into a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prerequisite {
    /// Eclipse Zenoh 1.10.2's Python package in the Python `WEFT_ZENOH_PYTHON` names
    /// (with `mcap` beside it for the recording tests); `WEFT_REQUIRE_INTEROP`.
    ZenohPython,
    /// The zenohd 1.10.2 binary `WEFT_ZENOHD` names; `WEFT_REQUIRE_ZENOHD`.
    Zenohd,
    /// A headless Chromium (`WEFT_CHROMIUM`, else on the `PATH`); `WEFT_REQUIRE_BROWSER`.
    Browser,
    /// Network namespaces (root and iproute2); `WEFT_REQUIRE_NETNS`.
    Netns,
    /// Ports 7447 and 8000 on loopback free, for weftd's example configuration as it is
    /// shipped; `WEFT_REQUIRE_DEFAULT_PORTS`.
    DefaultPorts,
    /// `socat`, which links two pseudo-terminals into a serial line; `WEFT_REQUIRE_SOCAT`.
    Socat,
    /// A zenohd 1.10.2 built with the serial link (`transport_serial`), which
    /// `WEFT_ZENOHD_SERIAL` names; `WEFT_REQUIRE_ZENOHD_SERIAL`.
    ZenohdSerial,
    /// Zenoh-Pico's POSIX example programs (`z_pub`, `z_sub`, `z_get`, `z_queryable`,
    /// `z_liveliness`) built with its serial link, in the directory
    /// `WEFT_ZENOH_PICO_EXAMPLES` names; `WEFT_REQUIRE_ZENOH_PICO`.
    ZenohPico,
}

impl Prerequisite {
    /// The environment variable that, set to anything but empty or `0`, makes the
    /// prerequisite's absence a failure.
    pub fn require_var(self) -> &'static str {
        match self {
            Self::ZenohPython => "WEFT_REQUIRE_INTEROP",
            Self::Zenohd => "WEFT_REQUIRE_ZENOHD",
            Self::Browser => "WEFT_REQUIRE_BROWSER",
            Self::Netns => "WEFT_REQUIRE_NETNS",
            Self::DefaultPorts => "WEFT_REQUIRE_DEFAULT_PORTS",
            Self::Socat => "WEFT_REQUIRE_SOCAT",
            Self::ZenohdSerial => "WEFT_REQUIRE_ZENOHD_SERIAL",
            Self::ZenohPico => "WEFT_REQUIRE_ZENOH_PICO",
        }
    }

    /// Whether this run requires the prerequisite (its `WEFT_REQUIRE_*` variable is set).
    pub fn is_required(self) -> bool {
        std::env::var(self.require_var()).is_ok_and(|v| !v.is_empty() && v != "0")
    }

    /// Reports that the prerequisite is missing, for `reason`: panics when it is required,
    /// else prints `skipped: <reason>` on standard error (the caller then returns).
    #[track_caller]
    pub fn missing(self, reason: impl fmt::Display) {
        if self.is_required() {
            panic!("{reason}, but {} is set", self.require_var());
        }
        skipped(reason);
    }
}

/// Prints `skipped: <reason>` on standard error, for a test (or a part of one) that has
/// nothing to run here and that no `WEFT_REQUIRE_*` variable asks for.
pub fn skipped(reason: impl fmt::Display) {
    eprintln!("skipped: {reason}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prerequisite_has_its_own_variable() {
        let all = [
            Prerequisite::ZenohPython,
            Prerequisite::Zenohd,
            Prerequisite::Browser,
            Prerequisite::Netns,
            Prerequisite::DefaultPorts,
            Prerequisite::Socat,
            Prerequisite::ZenohdSerial,
            Prerequisite::ZenohPico,
        ];
        let mut vars: Vec<_> = all.iter().map(|p| p.require_var()).collect();
        vars.sort_unstable();
        vars.dedup();
        assert_eq!(vars.len(), all.len());
        assert!(vars.iter().all(|v| v.starts_with("WEFT_REQUIRE_")));
    }
}
