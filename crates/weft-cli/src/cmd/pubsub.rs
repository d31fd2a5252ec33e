//! `weft put`, `weft delete`, `weft sub`.

use std::process::ExitCode;
use std::time::Duration;

use weft::{CongestionControl, Priority, PutOptions};

use super::common::{
    announce_ready, sample_json, sample_line, stop_flag, stopped, usage_error, SessionArgs,
};

/// Arguments of `weft put`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft put -m client -e tcp/127.0.0.1:7447 -k demo/a -p hello")]
pub(crate) struct PutArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The key to publish on.
    #[arg(short, long, value_parser = super::common::key_expr_arg)]
    key: String,
    /// The payload.
    #[arg(short, long, default_value = "")]
    payload: String,
    /// The payload's encoding (e.g. text/plain).
    #[arg(long)]
    encoding: Option<String>,
    /// Text attached to the value (Zenoh's `-a`).
    #[arg(short, long)]
    attach: Option<String>,
    /// Priority, 1 (real time) to 7 (background).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=7))]
    priority: Option<u8>,
    /// Send at once, without batching.
    #[arg(long)]
    express: bool,
}

/// Arguments of `weft delete`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft delete -m client -e tcp/127.0.0.1:7447 -k demo/a")]
pub(crate) struct DeleteArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The key to delete (with wildcards, every key it includes, in storages).
    #[arg(short, long, value_parser = super::common::key_expr_arg)]
    key: String,
}

/// Arguments of `weft sub`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft sub -m client -e tcp/127.0.0.1:7447 -k 'demo/**' --json")]
pub(crate) struct SubArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The key expression to subscribe to.
    #[arg(short, long, value_parser = super::common::key_expr_arg)]
    key: String,
    /// Exit after this many samples.
    #[arg(long)]
    count: Option<u64>,
    /// One JSON object per sample.
    #[arg(long)]
    json: bool,
}

/// Runs `weft put`.
pub(crate) fn put(args: &PutArgs) -> ExitCode {
    let session = match args.session.open("put") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = PutOptions {
        encoding: args.encoding.clone().unwrap_or_default(),
        attachment: args.attach.as_ref().map(|a| a.as_bytes().to_vec()),
        priority: args
            .priority
            .and_then(Priority::from_u8)
            .unwrap_or(Priority::Data),
        congestion_control: CongestionControl::Block,
        express: args.express,
        ..PutOptions::default()
    };
    let result = session
        .declare_publisher(&args.key, options)
        .and_then(|p| p.put(args.payload.as_bytes()));
    finish("put", &session, result)
}

/// Runs `weft delete`.
pub(crate) fn delete(args: &DeleteArgs) -> ExitCode {
    let session = match args.session.open("delete") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let options = PutOptions {
        congestion_control: CongestionControl::Block,
        ..PutOptions::default()
    };
    let result = session.delete(&args.key, &options);
    finish("delete", &session, result)
}

fn finish(
    command: &str,
    session: &weft::Session,
    result: Result<(), weft::SessionError>,
) -> ExitCode {
    match result {
        Ok(()) => {
            session.close();
            ExitCode::SUCCESS
        }
        Err(e @ (weft::SessionError::KeyExpr(_) | weft::SessionError::Wildcard(_))) => {
            usage_error(command, &e.to_string())
        }
        Err(e) => {
            eprintln!("weft {command}: {e}");
            ExitCode::from(1)
        }
    }
}

/// Runs `weft sub`.
pub(crate) fn sub(args: &SubArgs) -> ExitCode {
    let stop = stop_flag();
    let session = match args.session.open("sub") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (_sub, rx) = match session.declare_subscriber_channel(&args.key, 65_536) {
        Ok(x) => x,
        Err(e) => return usage_error("sub", &e.to_string()),
    };
    announce_ready("sub", &format!("subscribed to {}", args.key));
    let mut seen = 0u64;
    while !stopped(&stop) && args.count.is_none_or(|n| seen < n) {
        if let Ok(s) = rx.recv_timeout(Duration::from_millis(100)) {
            if args.json {
                outln!("{}", sample_json(&s));
            } else {
                outln!("{}", sample_line(&s));
            }
            seen += 1;
        }
    }
    session.close();
    ExitCode::SUCCESS
}
