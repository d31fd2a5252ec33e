//! `weft top`: the busiest keys under a key expression, refreshed every second: samples
//! and bytes per second, mean size, the publishers and subscribers the routers know, and
//! the drops their subscriptions' counters tell (from the routers' admin space). A
//! terminal table, or one JSON object per refresh.

use std::collections::{BTreeSet, HashMap};
use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft::{GetOptions, Session};
use weft_cli::top::{Counts, KeyContext, Row, SubscriptionDrops, SubscriptionId};
use weft_keyexpr::KeyExpr;

use super::common::{stop_flag, stopped, usage_error, SessionArgs};

/// Arguments of `weft top`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft top -m client -e tcp/127.0.0.1:7447 -k 'robot/**'")]
pub(crate) struct TopArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The key expression to watch.
    #[arg(short, long, default_value = "**", value_parser = super::common::key_expr_arg)]
    key: String,
    /// Rows shown (the busiest keys).
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// Stop after this many refreshes.
    #[arg(long)]
    count: Option<u64>,
    /// One JSON object per refresh (also what a pipe gets with --json).
    #[arg(long)]
    json: bool,
}

/// Declarations the routers know: key expression -> the nodes that declared it.
type Declared = Vec<(String, BTreeSet<String>)>;

/// Runs `weft top`.
pub(crate) fn run(args: &TopArgs) -> ExitCode {
    let stop = stop_flag();
    let session = match args.session.open("top") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let counts = Arc::new(Mutex::new(Counts::default()));
    let seen = counts.clone();
    let subscriber = session.declare_subscriber(&args.key, move |s| {
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .add(&s.key_expr, s.payload.len());
    });
    let subscriber = match subscriber {
        Ok(s) => s,
        Err(e) => {
            session.close();
            return usage_error("top", &e.to_string());
        }
    };
    let me = session.zid().to_string();
    let tty = std::io::stdout().is_terminal() && !args.json;
    let mut refreshes = 0u64;
    let mut since = Instant::now();
    let mut declared: (Declared, Declared) = (Vec::new(), Vec::new());
    let mut drops = SubscriptionDrops::default();
    drops.update(subscription_drops(&session, &me));
    while !stopped(&stop) && args.count.is_none_or(|n| refreshes < n) {
        let next = since + Duration::from_secs(1);
        while Instant::now() < next && !stopped(&stop) {
            std::thread::sleep((next - Instant::now()).min(Duration::from_millis(100)));
        }
        // The declarations, asked every few refreshes (they change slowly).
        if refreshes % 5 == 0 {
            declared = (
                declarations(&session, "publisher", &me),
                declarations(&session, "subscriber", &me),
            );
        }
        let dropped = drops.update(subscription_drops(&session, &me));
        let now = Instant::now();
        let rows = counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take_rows(now - since, |key| KeyContext {
                publishers: matching(&declared.0, key),
                subscribers: matching(&declared.1, key),
                drops: dropped_matching(&dropped, key),
            });
        since = now;
        refreshes += 1;
        if args.json {
            outln!("{}", rows_json(&rows, args.limit));
        } else {
            print_table(&args.key, &rows, args.limit, tty);
        }
    }
    drop(subscriber);
    session.close();
    ExitCode::SUCCESS
}

/// The declarations of `kind` the routers list (`@/*/router/<kind>/**`), this tool's own
/// (`me`) left out.
fn declarations(session: &Session, kind: &str, me: &str) -> Declared {
    let Ok(replies) = session.get(&format!("@/*/router/{kind}/**"), &GetOptions::default()) else {
        return Vec::new();
    };
    let mut out: HashMap<String, BTreeSet<String>> = HashMap::new();
    for reply in replies.iter() {
        let Ok(sample) = reply.result else { continue };
        let Some((_, key)) = sample.key_expr.split_once(&format!("/router/{kind}/")) else {
            continue;
        };
        let Ok(sources) = serde_json::from_slice::<serde_json::Value>(&sample.payload) else {
            continue;
        };
        let nodes = out.entry(key.to_string()).or_default();
        for role in ["clients", "peers"] {
            for zid in sources[role].as_array().into_iter().flatten() {
                if let Some(zid) = zid.as_str().filter(|z| *z != me) {
                    nodes.insert(zid.to_string());
                }
            }
        }
    }
    out.into_iter().collect()
}

/// Every subscription the routers count (`counters.subscriptions` of each session in
/// `@/*/router`) with its cumulative drops, this tool's own (`me`) left out.
fn subscription_drops(session: &Session, me: &str) -> Vec<(SubscriptionId, u64)> {
    // Within a refresh: a router that does not answer in time is left out of this one.
    let within_a_refresh = GetOptions {
        timeout: Some(Duration::from_millis(800)),
        ..GetOptions::default()
    };
    let Ok(replies) = session.get("@/*/router", &within_a_refresh) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for reply in replies.iter() {
        let Ok(sample) = reply.result else { continue };
        let Ok(router) = serde_json::from_slice::<serde_json::Value>(&sample.payload) else {
            continue;
        };
        let router_zid = router["zid"].as_str().unwrap_or_default();
        for s in router["sessions"].as_array().into_iter().flatten() {
            let Some(node) = s["peer"].as_str().filter(|p| *p != me) else {
                continue;
            };
            for t in s["counters"]["subscriptions"]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let (Some(ke), Some(dropped)) = (t["key_expr"].as_str(), t["dropped"].as_u64()) {
                    let id = (router_zid.to_owned(), node.to_owned(), ke.to_owned());
                    out.push((id, dropped));
                }
            }
        }
    }
    out
}

/// Drops of subscriptions whose key expression matches `key`.
fn dropped_matching(dropped: &[(String, u64)], key: &str) -> u64 {
    let Ok(key) = KeyExpr::new(key) else {
        return 0;
    };
    dropped
        .iter()
        .filter(|(ke, _)| KeyExpr::new(ke).is_ok_and(|ke| ke.intersects(key)))
        .map(|(_, n)| n)
        .sum()
}

/// How many nodes declared a key expression matching `key`.
fn matching(declared: &Declared, key: &str) -> usize {
    let Ok(key) = KeyExpr::new(key) else {
        return 0;
    };
    declared
        .iter()
        .filter(|(ke, _)| KeyExpr::new(ke).is_ok_and(|ke| ke.intersects(key)))
        .flat_map(|(_, nodes)| nodes)
        .collect::<BTreeSet<_>>()
        .len()
}

fn rows_json(rows: &[Row], limit: usize) -> serde_json::Value {
    let keys: Vec<serde_json::Value> = rows
        .iter()
        .take(limit)
        .map(|r| {
            serde_json::json!({
                "key": r.key, "msgs_per_s": r.msgs_per_s, "bytes_per_s": r.bytes_per_s,
                "mean_bytes": r.mean_size, "publishers": r.publishers,
                "subscribers": r.subscribers, "drops_per_s": r.drops_per_s,
            })
        })
        .collect();
    serde_json::json!({ "keys": keys, "total_keys": rows.len() })
}

fn print_table(expr: &str, rows: &[Row], limit: usize, tty: bool) {
    if tty {
        // Back to the top of a cleared screen: the table stays in place.
        super::output::text("\x1b[H\x1b[2J");
    }
    let total: f64 = rows.iter().map(|r| r.msgs_per_s).sum();
    outln!("{expr}: {} keys, {total:.1} msg/s", rows.len());
    outln!(
        "{:<40} {:>10} {:>12} {:>9} {:>5} {:>5} {:>9}",
        "KEY",
        "MSG/S",
        "BYTES/S",
        "AVG",
        "PUBS",
        "SUBS",
        "DROPS/S"
    );
    for r in rows.iter().take(limit) {
        outln!(
            "{:<40} {:>10.1} {:>12.0} {:>9.0} {:>5} {:>5} {:>9.1}",
            r.key,
            r.msgs_per_s,
            r.bytes_per_s,
            r.mean_size,
            r.publishers,
            r.subscribers,
            r.drops_per_s
        );
    }
    if !tty {
        outln!();
    }
}
