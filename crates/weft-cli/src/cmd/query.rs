//! `weft get` and `weft queryable`.

use std::process::ExitCode;
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use clap::ValueEnum;
use weft::{GetOptions, PutOptions, QueryTarget};

use super::common::{announce_ready, stop_flag, stopped, usage_error, SessionArgs};

/// Arguments of `weft get`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft get -m client -e tcp/127.0.0.1:7447 -s 'demo/**?x=1' --json")]
pub(crate) struct GetArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The selector: a key expression, optionally followed by ?parameters.
    #[arg(short, long, value_parser = super::common::key_expr_arg)]
    selector: String,
    /// How long to wait for replies, in milliseconds (Zenoh's `-o`).
    #[arg(short = 'o', long, default_value_t = 10_000)]
    timeout: u64,
    /// Which queryables answer: best_matching, all or all_complete (Zenoh's
    /// BEST_MATCHING, ALL and ALL_COMPLETE are accepted too).
    #[arg(
        short,
        long,
        value_enum,
        default_value = "best_matching",
        ignore_case = true
    )]
    target: TargetArg,
    /// A payload sent with the query (Zenoh's `-p`).
    #[arg(short, long)]
    payload: Option<String>,
    /// One JSON object per reply.
    #[arg(long)]
    json: bool,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
#[value(rename_all = "snake_case")]
enum TargetArg {
    BestMatching,
    All,
    AllComplete,
}

/// Arguments of `weft queryable`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: weft queryable -m client -e tcp/127.0.0.1:7447 -k demo/q -p answer"
)]
pub(crate) struct QueryableArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The key expression to answer for.
    #[arg(short, long, value_parser = super::common::key_expr_arg)]
    key: String,
    /// The payload of every reply.
    #[arg(short, long, default_value = "")]
    payload: String,
    /// Declare the queryable complete (it answers for every key of its key expression).
    #[arg(long)]
    complete: bool,
    /// Exit after answering this many queries.
    #[arg(long)]
    count: Option<u64>,
}

fn text_or_b64(bytes: &[u8]) -> (&'static str, String) {
    match std::str::from_utf8(bytes) {
        Ok(t) => ("payload", t.to_string()),
        Err(_) => ("payload_b64", STANDARD.encode(bytes)),
    }
}

/// Runs `weft get`.
pub(crate) fn get(args: &GetArgs) -> ExitCode {
    let session = match args.session.open("get") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = GetOptions {
        target: match args.target {
            TargetArg::BestMatching => QueryTarget::BestMatching,
            TargetArg::All => QueryTarget::All,
            TargetArg::AllComplete => QueryTarget::AllComplete,
        },
        timeout: Some(Duration::from_millis(args.timeout)),
        payload: args
            .payload
            .as_ref()
            .map(|p| (p.as_bytes().to_vec(), "text/plain".to_string())),
        ..GetOptions::default()
    };
    let replies = match session.get(&args.selector, &options) {
        Ok(r) => r,
        Err(e) => return usage_error("get", &e.to_string()),
    };
    for reply in replies {
        match (reply.result, args.json) {
            (Ok(s), true) => {
                let (field, value) = text_or_b64(&s.payload);
                let mut m = serde_json::Map::new();
                m.insert("ok".into(), true.into());
                m.insert("key".into(), (*s.key_expr).into());
                m.insert(field.into(), value.into());
                m.insert("encoding".into(), s.encoding.into());
                outln!("{}", serde_json::Value::Object(m));
            }
            (Err(e), true) => {
                let (_, value) = text_or_b64(&e.payload);
                outln!("{}", serde_json::json!({ "ok": false, "error": value }));
            }
            (Ok(s), false) => outln!("{} {}", s.key_expr, String::from_utf8_lossy(&s.payload)),
            (Err(e), false) => outln!("error: {}", String::from_utf8_lossy(&e.payload)),
        }
    }
    session.close();
    ExitCode::SUCCESS
}

/// Runs `weft queryable`.
pub(crate) fn queryable(args: &QueryableArgs) -> ExitCode {
    let stop = stop_flag();
    let session = match args.session.open("queryable") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let payload = args.payload.clone();
    let fixed_key = (!args.key.contains('*') && !args.key.contains("$*")).then(|| args.key.clone());
    let q = session.declare_queryable(&args.key, args.complete, move |q| {
        let key = fixed_key
            .clone()
            .unwrap_or_else(|| q.key_expr().to_string());
        let _ = q.reply(&key, payload.as_bytes(), &PutOptions::default());
        let _ = tx.send(q.selector());
    });
    let _q = match q {
        Ok(q) => q,
        Err(e) => return usage_error("queryable", &e.to_string()),
    };
    announce_ready("queryable", &format!("answering queries on {}", args.key));
    let mut answered = 0u64;
    while !stopped(&stop) && args.count.is_none_or(|n| answered < n) {
        if let Ok(selector) = rx.recv_timeout(Duration::from_millis(100)) {
            outln!("query {selector}");
            answered += 1;
        }
    }
    session.close();
    ExitCode::SUCCESS
}
