//! `weft liveliness token|sub|get`.

use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;

use super::common::{announce_ready, stop_flag, stopped, usage_error, SessionArgs};

/// Liveliness subcommands.
#[derive(Subcommand, Debug)]
pub(crate) enum LivelinessCommand {
    /// Declare a token and keep it until interrupted.
    ///
    /// Example: weft liveliness token -m client -e tcp/127.0.0.1:7447 -k robots/r1
    Token {
        #[command(flatten)]
        session: SessionArgs,
        /// The token's key.
        #[arg(short, long, value_parser = super::common::key_expr_arg)]
        key: String,
    },
    /// Print a line when a token appears (put) or disappears (delete).
    ///
    /// Example: weft liveliness sub -k 'robots/**' --history --json
    Sub {
        #[command(flatten)]
        session: SessionArgs,
        /// The key expression to watch.
        #[arg(short, long, value_parser = super::common::key_expr_arg)]
        key: String,
        /// Report the tokens already alive first.
        #[arg(long)]
        history: bool,
        /// One JSON object per event.
        #[arg(long)]
        json: bool,
    },
    /// List the tokens alive now.
    ///
    /// Example: weft liveliness get -k 'robots/**' --json
    Get {
        #[command(flatten)]
        session: SessionArgs,
        /// The key expression to list.
        #[arg(short, long, value_parser = super::common::key_expr_arg)]
        key: String,
        /// How long to wait for the answer, in milliseconds.
        #[arg(long, default_value_t = 10_000)]
        timeout: u64,
        /// One JSON object per token.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a liveliness subcommand.
pub(crate) fn run(cmd: &LivelinessCommand) -> ExitCode {
    let stop = stop_flag();
    match cmd {
        LivelinessCommand::Token { session, key } => {
            let session = match session.open("liveliness token") {
                Ok(s) => s,
                Err(code) => return code,
            };
            let _token = match session.declare_token(key) {
                Ok(t) => t,
                Err(e) => return usage_error("liveliness token", &e.to_string()),
            };
            announce_ready("liveliness token", &format!("{key} is alive"));
            while !stopped(&stop) {
                std::thread::sleep(Duration::from_millis(100));
            }
            session.close();
            ExitCode::SUCCESS
        }
        LivelinessCommand::Sub {
            session,
            key,
            history,
            json,
        } => {
            let session = match session.open("liveliness sub") {
                Ok(s) => s,
                Err(code) => return code,
            };
            let json = *json;
            let sub = session.declare_liveliness_subscriber(key, *history, move |s| {
                if json {
                    outln!(
                        "{}",
                        serde_json::json!({ "kind": s.kind.as_str(), "key": &*s.key_expr })
                    );
                } else {
                    outln!("{} {}", s.kind.as_str(), s.key_expr);
                }
            });
            let _sub = match sub {
                Ok(s) => s,
                Err(e) => return usage_error("liveliness sub", &e.to_string()),
            };
            while !stopped(&stop) {
                std::thread::sleep(Duration::from_millis(100));
            }
            session.close();
            ExitCode::SUCCESS
        }
        LivelinessCommand::Get {
            session,
            key,
            timeout,
            json,
        } => {
            let session = match session.open("liveliness get") {
                Ok(s) => s,
                Err(code) => return code,
            };
            let replies = match session.liveliness_get(key, Duration::from_millis(*timeout)) {
                Ok(r) => r,
                Err(e) => return usage_error("liveliness get", &e.to_string()),
            };
            for r in replies {
                if let Ok(s) = r.result {
                    if *json {
                        outln!("{}", serde_json::json!({ "key": &*s.key_expr }));
                    } else {
                        outln!("{}", s.key_expr);
                    }
                }
            }
            session.close();
            ExitCode::SUCCESS
        }
    }
}
