//! `weft`: the command-line tool.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// weft: pub/sub, queries and liveliness over the Zenoh protocol.
#[derive(Parser, Debug)]
#[command(name = "weft", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How logs are written on standard error: `text`, or `json` (one object per line).
    /// What is logged: `RUST_LOG` (default `warn`).
    #[arg(long, value_enum, global = true, default_value = "text")]
    log_format: LogFormat,
}

/// How logs are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Lines of text.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Decode captured Zenoh traffic into one JSON object per message.
    ///
    /// Reads the `.hex` capture format (`> HEX` / `< HEX` lines, `# conn` lines starting a
    /// connection) from files or `-` (standard input), or a single hex string with
    /// `--hex`. Stream framing, datagrams and scouting are told apart by themselves.
    ///
    /// Example: weft decode tests/vectors/02-pub-sub.hex
    Decode(cmd::decode::DecodeArgs),
    /// Publish one value on a key.
    Put(cmd::pubsub::PutArgs),
    /// Delete a key.
    Delete(cmd::pubsub::DeleteArgs),
    /// Print the samples published on a key expression.
    Sub(cmd::pubsub::SubArgs),
    /// Query a selector and print the replies.
    Get(cmd::query::GetArgs),
    /// Answer queries on a key expression with a fixed payload.
    Queryable(cmd::query::QueryableArgs),
    /// Liveliness tokens: declare, watch, list.
    #[command(subcommand)]
    Liveliness(cmd::liveliness::LivelinessCommand),
    /// Publish as fast as possible on test/thr (throughput test).
    PubThr(cmd::perf::PubThrArgs),
    /// Measure the rate of messages on test/thr.
    SubThr(cmd::perf::SubThrArgs),
    /// Measure round trips to `weft pong` (one-way latency = RTT/2).
    Ping(cmd::perf::PingArgs),
    /// Answer `weft ping`.
    Pong(cmd::perf::PongArgs),
    /// List the routers, peers and clients that answer a multicast Scout.
    ///
    /// Sends Scouts to the scouting group (224.0.0.224:7446 unless configured otherwise)
    /// during the timeout and prints each node that answers: its role, ZenohID and
    /// locators. Exit status 1 when none answered.
    ///
    /// Example: weft scout --what 'router|peer' --timeout 2000 --json
    Scout(cmd::scout::ScoutArgs),
    /// How the router(s) would route a put on a key: every connected node, whether it
    /// would receive it and why not (no matching subscription, not on the router tree,
    /// peers not routed to each other, access control, link down), with the congestion
    /// drops so far.
    Explain(cmd::explain::ExplainArgs),
    /// The busiest keys under a key expression, refreshed every second: msg/s, bytes/s,
    /// mean size, and the publishers and subscribers the routers know.
    Top(cmd::top::TopArgs),
    /// Print the rate of the samples on a key expression every second (as `ros2 topic
    /// hz`): samples per second and the spacing of their arrivals over the last --window.
    Hz(cmd::rates::RatesArgs),
    /// Print the bandwidth of the samples on a key expression every second (as `ros2 topic
    /// bw`): bytes per second and sample sizes over the last --window.
    Bw(cmd::rates::RatesArgs),
    /// Record the samples on a key expression into an MCAP file.
    ///
    /// One channel per key (topic = key, message encoding = the Zenoh encoding), log time
    /// = the sample's timestamp or its reception time; readable by the MCAP tools and
    /// Foxglove. Stops at --count samples, after --duration seconds, or on Ctrl-C.
    Record(cmd::record::RecordArgs),
    /// Publish the samples of an MCAP file written by `weft record` again, with their
    /// original spacing (scaled by --rate), keys remapped with --remap FROM=TO.
    Replay(cmd::record::ReplayArgs),
    /// Access control: how a configuration decides a message, and why.
    #[command(subcommand)]
    Acl(cmd::acl::AclCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs: RUST_LOG (e.g. `RUST_LOG=debug`), warnings only by default, on standard error
    // (standard output is the command's own).
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => logs.json().init(),
    }
    match &cli.command {
        Command::Decode(a) => cmd::decode::run(a),
        Command::Put(a) => cmd::pubsub::put(a),
        Command::Delete(a) => cmd::pubsub::delete(a),
        Command::Sub(a) => cmd::pubsub::sub(a),
        Command::Get(a) => cmd::query::get(a),
        Command::Queryable(a) => cmd::query::queryable(a),
        Command::Explain(a) => cmd::explain::run(a),
        Command::Top(a) => cmd::top::run(a),
        Command::Hz(a) => cmd::rates::run(a, cmd::rates::Report::Hz),
        Command::Bw(a) => cmd::rates::run(a, cmd::rates::Report::Bw),
        Command::Record(a) => cmd::record::record(a),
        Command::Replay(a) => cmd::record::replay(a),
        Command::Liveliness(c) => cmd::liveliness::run(c),
        Command::PubThr(a) => cmd::perf::pub_thr(a),
        Command::SubThr(a) => cmd::perf::sub_thr(a),
        Command::Ping(a) => cmd::perf::ping(a),
        Command::Pong(a) => cmd::perf::pong(a),
        Command::Scout(a) => cmd::scout::run(a),
        Command::Acl(c) => cmd::acl::run(c),
    }
}
