//! `weft explain`: how the router(s) would route a put on a key, node by node, and why
//! each would or would not receive it (weftd's `@/<zid>/router/explain/<key>`).

use std::process::ExitCode;

use weft::GetOptions;

use super::common::{usage_error, SessionArgs};

/// Arguments of `weft explain`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: weft explain -m client -e tcp/127.0.0.1:7447 -k robot/1/pose \
                        --from 5bd3c0ab3f4e9d1c"
)]
pub(crate) struct ExplainArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The concrete key a put would be published on.
    #[arg(short, long, value_parser = super::common::key_expr_arg)]
    key: String,
    /// The ZenohID of the node the put would come from (default: the router itself).
    #[arg(long, value_name = "ZID")]
    from: Option<String>,
    /// The routers' answers as JSON, one object per router.
    #[arg(long)]
    json: bool,
}

/// Runs `weft explain`.
pub(crate) fn run(args: &ExplainArgs) -> ExitCode {
    if args.key.contains('*') || args.key.contains('$') {
        return usage_error(
            "explain",
            &format!("-k {}: a concrete key (a put has no wildcards)", args.key),
        );
    }
    let session = match args.session.open("explain") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let selector = match &args.from {
        Some(zid) => format!("@/*/router/explain/{}?from={zid}", args.key),
        None => format!("@/*/router/explain/{}", args.key),
    };
    let replies = match session.get(&selector, &GetOptions::default()) {
        Ok(r) => r,
        Err(e) => {
            session.close();
            return usage_error("explain", &e.to_string());
        }
    };
    let mut answered = 0;
    let mut failed = false;
    for reply in replies.iter() {
        match reply.result {
            Ok(sample) => match serde_json::from_slice::<serde_json::Value>(&sample.payload) {
                Ok(explanation) => {
                    answered += 1;
                    if args.json {
                        outln!("{explanation}");
                    } else {
                        print_explanation(&sample.key_expr, &explanation);
                    }
                }
                Err(e) => {
                    eprintln!("weft explain: {}: not an explanation: {e}", sample.key_expr);
                    failed = true;
                }
            },
            Err(e) => {
                eprintln!("weft explain: {}", String::from_utf8_lossy(&e.payload));
                failed = true;
            }
        }
    }
    session.close();
    if answered == 0 && !failed {
        eprintln!("weft explain: no router answered (weftd answers @/<zid>/router/explain/<key>)");
        return ExitCode::from(1);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// One router's explanation as text: its own subscriptions, then each node.
fn print_explanation(reply_key: &str, e: &serde_json::Value) {
    let router = reply_key.split('/').nth(1).unwrap_or("?");
    let from = e["from"].as_str().unwrap_or("the router itself");
    outln!(
        "put on {} from {from}, routed by {router}:",
        e["key"].as_str().unwrap_or("")
    );
    for local in e["local"].as_array().into_iter().flatten() {
        outln!(
            "  delivers  {router} (itself): its subscription {}",
            local.as_str().unwrap_or("")
        );
    }
    for f in e["faces"].as_array().into_iter().flatten() {
        let verdict = if f["receives"].as_bool() == Some(true) {
            "sends to"
        } else {
            "skips   "
        };
        let matching: Vec<&str> = f["matching"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m.as_str())
            .collect();
        let drops = f["congestion_drops"].as_u64().unwrap_or(0);
        outln!(
            "  {verdict}  {} ({}, {}): {}{}{}",
            f["zid"].as_str().unwrap_or(""),
            f["whatami"].as_str().unwrap_or(""),
            f["link"].as_str().unwrap_or(""),
            f["why"].as_str().unwrap_or(""),
            if matching.is_empty() {
                String::new()
            } else {
                format!(" ({})", matching.join(", "))
            },
            if drops > 0 {
                format!("; {drops} messages to it dropped so far (congestion)")
            } else {
                String::new()
            }
        );
    }
}
