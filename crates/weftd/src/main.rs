//! `weftd`: the weft router.
//!
//! With no arguments it listens on `tcp/[::]:7447` and routes between every client, peer
//! and router that connects: data to matching subscribers, queries to matching queryables,
//! declarations and liveliness tokens to whoever must know them. Storages configured under
//! `plugins.storage_manager` keep data at rest and answer queries on it.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use weft::{Config, WhatAmI};

mod admin;
mod rest;

/// The weft router.
#[derive(Parser, Debug)]
#[command(name = "weftd", version, about)]
struct Args {
    /// JSON5 configuration file (Zenoh's key names).
    #[arg(short, long, value_name = "FILE")]
    config: Option<String>,
    /// Endpoint to listen on (repeatable); default tcp/[::]:7447.
    #[arg(short, long = "listen", value_name = "ENDPOINT")]
    listen: Vec<String>,
    /// Endpoint to connect to (repeatable), e.g. another router.
    #[arg(short = 'e', long = "connect", value_name = "ENDPOINT")]
    connect: Vec<String>,
    /// Disable multicast scouting.
    #[arg(long)]
    no_multicast_scouting: bool,
    /// Serve the REST interface on this HTTP port.
    #[arg(long, value_name = "PORT")]
    rest_http_port: Option<u16>,
    /// Access to the admin space (`@/<zid>/router/**`): `r` (read, the default) or
    /// `none`. The admin space is read-only.
    #[arg(long, value_enum, default_value = "r")]
    adminspace_permissions: AdminPermissions,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum AdminPermissions {
    /// Queries on the admin space are answered.
    R,
    /// No admin space.
    None,
}

/// Where a router listens when nothing else is configured.
const DEFAULT_LISTEN: &str = "tcp/[::]:7447";

fn config(args: &Args) -> Result<Config, String> {
    let mut config = match &args.config {
        Some(path) => {
            let (c, warnings) = Config::from_file(path).map_err(|e| e.to_string())?;
            for w in warnings {
                eprintln!("weftd: warning: {w}");
            }
            c
        }
        None => Config::default(),
    };
    config.mode = WhatAmI::Router;
    for e in &args.listen {
        config
            .listen
            .push(e.parse().map_err(|err| format!("{err}"))?);
    }
    for e in &args.connect {
        config
            .connect
            .push(e.parse().map_err(|err| format!("{err}"))?);
    }
    if config.listen.is_empty() {
        config
            .listen
            .push(DEFAULT_LISTEN.parse().expect("a valid endpoint"));
    }
    if args.no_multicast_scouting {
        config.multicast_scouting = false;
    }
    Ok(config)
}

fn main() -> ExitCode {
    let args = Args::parse();
    // Logs: RUST_LOG (e.g. `RUST_LOG=debug`), `info` by default, on standard error.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let mut config = match config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("weftd: {e}");
            return ExitCode::from(2);
        }
    };
    let storages = match config.plugins.as_ref().map(weft_storage::config::parse) {
        None => Vec::new(),
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            eprintln!("weftd: {e}");
            return ExitCode::from(2);
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    // Storages are declared before anyone can connect: nothing published to the router
    // escapes them.
    let listen = std::mem::take(&mut config.listen);
    let session = match weft::open(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("weftd: {e}");
            return ExitCode::from(1);
        }
    };
    let _storages = match weft_storage::start(&session, storages) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("weftd: {e}");
            session.close();
            return ExitCode::from(1);
        }
    };
    let _admin = if args.adminspace_permissions == AdminPermissions::R {
        match admin::declare(&session) {
            Ok(q) => Some(q),
            Err(e) => {
                eprintln!("weftd: admin space: {e}");
                None
            }
        }
    } else {
        None
    };
    if let Some(port) = args.rest_http_port {
        if let Err(e) = rest::serve(session.clone(), port) {
            eprintln!("weftd: {e}");
            session.close();
            return ExitCode::from(1);
        }
    }
    for ep in &listen {
        if let Err(e) = session.listen(ep) {
            eprintln!("weftd: {e}");
            session.close();
            return ExitCode::from(1);
        }
    }
    tracing::info!(
        "weftd {} (zid {}) listening on {}",
        env!("CARGO_PKG_VERSION"),
        session.zid(),
        session.listen_endpoints().join(", ")
    );
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
    }
    tracing::info!("shutting down");
    session.close();
    ExitCode::SUCCESS
}
