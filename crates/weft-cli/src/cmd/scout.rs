//! `weft scout`: lists the nodes that answer a multicast Scout.

use std::ops::ControlFlow;
use std::process::ExitCode;
use std::time::Duration;

use weft::{Config, Hello, ScoutError, WhatAmIMatcher};

use super::common::usage_error;

/// Arguments of `weft scout`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Examples:\n  weft scout\n  weft scout --what 'router|peer|client' --timeout 1000 --json"
)]
pub(crate) struct ScoutArgs {
    /// Roles to look for: router, peer, client, joined by `|` or `,`.
    #[arg(short, long, default_value = "router|peer", value_parser = parse_what)]
    what: WhatAmIMatcher,
    /// How long to scout, in milliseconds.
    #[arg(short, long, default_value_t = 3000,
          value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    timeout: u64,
    /// Print one JSON object per node: {"zid", "whatami", "locators"}.
    #[arg(long)]
    json: bool,
    /// JSON5 configuration file (its `scouting.multicast.*` keys: group, interface, TTL).
    #[arg(short, long, value_name = "FILE")]
    config: Option<String>,
}

/// Parses `--what`.
fn parse_what(s: &str) -> Result<WhatAmIMatcher, String> {
    let empty_part = s.split(['|', ',']).any(|p| p.trim().is_empty());
    match weft::config::parse_matcher(&serde_json::Value::String(s.to_string())) {
        Some(m) if !empty_part => Ok(m),
        _ => Err(format!(
            "`{s}`: expected roles among router, peer and client, joined by | (e.g. router|peer)"
        )),
    }
}

/// One node as a line of text: role, id, locators.
fn line(h: &Hello) -> String {
    format!("{} {} {}", h.whatami, h.zid, h.locators.join(" "))
}

/// One node as JSON.
fn json(h: &Hello) -> serde_json::Value {
    serde_json::json!({
        "zid": h.zid.to_string(),
        "whatami": h.whatami.as_str(),
        "locators": h.locators,
    })
}

/// Runs `weft scout`: prints each node as it answers; exit status 1 when none did.
pub(crate) fn run(args: &ScoutArgs) -> ExitCode {
    let config = match &args.config {
        Some(path) => match Config::from_file(path) {
            Ok((c, warnings)) => {
                for w in warnings {
                    eprintln!("weft scout: warning: {w}");
                }
                c
            }
            Err(e) => return usage_error("scout", &e.to_string()),
        },
        None => Config::default(),
    };
    let mut found = 0usize;
    let result = weft::scout_with(
        args.what,
        &config,
        Duration::from_millis(args.timeout),
        |h| {
            found += 1;
            if args.json {
                outln!("{}", json(h));
            } else {
                outln!("{}", line(h));
            }
            ControlFlow::Continue(())
        },
    );
    match result {
        Err(e @ ScoutError::Disabled) => usage_error("scout", &e.to_string()),
        Err(e) => {
            eprintln!("weft scout: {e}");
            ExitCode::from(1)
        }
        Ok(()) if found == 0 => {
            eprintln!("weft scout: no node answered within {} ms", args.timeout);
            ExitCode::from(1)
        }
        Ok(()) => ExitCode::SUCCESS,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_what;

    #[test]
    fn what_accepts_role_combinations_and_rejects_others() {
        assert_eq!(parse_what("router").unwrap().0, 0b001);
        assert_eq!(parse_what("router|peer").unwrap().0, 0b011);
        assert_eq!(parse_what("peer,client").unwrap().0, 0b110);
        for bad in ["", "server", "router|", "router|serverr"] {
            assert!(parse_what(bad).is_err(), "{bad}");
        }
    }
}
