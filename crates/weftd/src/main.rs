//! `weftd`: the weft router.
//!
//! It routes between every client, peer and router that connects: data to matching
//! subscribers, queries to matching queryables, declarations and liveliness tokens to
//! whoever must know them. Storages configured under `plugins.storage_manager` keep data at
//! rest and answer queries on it; recordings configured under `plugins.recorder` write what
//! is published on their key expressions into rotated MCAP files.
//!
//! With no arguments at all it runs its built-in example configuration (`weftd.json5`
//! beside this crate's manifest): listening on `tcp/[::]:7447`, REST on port 8000 of the
//! loopback interface only, and an SQLite storage on `demo/**` in `./weft-data`.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use weft::{Config, WhatAmI};

mod admin;
mod http;
mod metrics;
mod plugins;
mod rest;
mod status;

/// The weft router.
#[derive(Parser, Debug)]
#[command(name = "weftd", version, about)]
struct Args {
    /// JSON5 configuration file (Zenoh's key names).
    #[arg(short, long, value_name = "FILE")]
    config: Option<String>,
    /// Endpoint to listen on (repeatable); default `tcp/[::]:7447`.
    #[arg(short, long = "listen", value_name = "ENDPOINT")]
    listen: Vec<String>,
    /// Endpoint to connect to (repeatable), e.g. another router.
    #[arg(short = 'e', long = "connect", value_name = "ENDPOINT")]
    connect: Vec<String>,
    /// Disable multicast scouting.
    #[arg(long)]
    no_multicast_scouting: bool,
    /// Serve the REST interface on this HTTP port: `PORT` (every interface, as Zenoh's
    /// REST plugin) or `ADDRESS:PORT` (e.g. `127.0.0.1:8000`: loopback only).
    #[arg(long, value_name = "[ADDRESS:]PORT")]
    rest_http_port: Option<String>,
    /// Access to the admin space (`@/<zid>/router/**`), as zenohd's flag: `r` (read, the
    /// default), `w`, `rw` or `none`; over `adminspace.permissions` of the configuration.
    /// weft's admin space has nothing to write: `w` answers no queries, `rw` is `r`.
    #[arg(long, value_enum)]
    adminspace_permissions: Option<AdminPermissions>,
    /// This router's ZenohID (1 to 32 hexadecimal digits), as zenohd's `--id`.
    #[arg(short = 'i', long = "id", value_name = "HEX")]
    id: Option<String>,
    /// Do not timestamp the data routed (`timestamping.enabled: false`).
    #[arg(long)]
    no_timestamp: bool,
    /// A configuration value, as zenohd's `--cfg`: `KEY:VALUE` with KEY a `/`-separated
    /// path and VALUE JSON5 (e.g. `--cfg 'transport/unicast/max_sessions:2000'`);
    /// repeatable, applied over the file.
    #[arg(long = "cfg", value_name = "KEY:VALUE")]
    cfg: Vec<String>,
    /// Series of `/metrics` shown one by one in each family per declared key expression
    /// (`weft_subscription_*`, `weft_publication_*`): the busiest declarations; the others
    /// are added up in one `key_expr="other"` series. Default 100; 0 shows only the sum.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100_000))]
    metrics_declared_series: Option<u32>,
    /// How logs are written on standard error: `text`, or `json` (one object per line,
    /// for log collectors). What is logged: `RUST_LOG` (default `info`).
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
}

/// How logs are written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// Lines of text.
    Text,
    /// One JSON object per line: timestamp, level, target, fields (the message among them).
    Json,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum AdminPermissions {
    /// Queries on the admin space are answered.
    R,
    /// Writes only: weft's admin space has nothing to write, so no queries are answered.
    W,
    /// Reads and writes: queries are answered; there is nothing to write.
    Rw,
    /// No admin space.
    None,
}

impl AdminPermissions {
    const fn readable(self) -> bool {
        matches!(self, Self::R | Self::Rw)
    }
}

/// Where a router listens when nothing else is configured.
const DEFAULT_LISTEN: &str = "tcp/[::]:7447";

/// The configuration weftd runs when started with no arguments.
const BUILT_IN_CONFIG: &str = include_str!("../weftd.json5");

/// Applies `--cfg KEY:VALUE` settings to a configuration's text; returns the document.
fn with_cfg(text: &str, settings: &[String]) -> Result<serde_json::Value, String> {
    let mut root: serde_json::Value =
        json5::from_str(text).map_err(|e| format!("configuration is not valid JSON5: {e}"))?;
    for setting in settings {
        Config::apply_setting(&mut root, setting).map_err(|e| e.to_string())?;
    }
    Ok(root)
}

fn config(args: &Args, built_in: bool) -> Result<Config, String> {
    let text = match &args.config {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read configuration file {path}: {e}"))?,
        ),
        None if built_in => Some(BUILT_IN_CONFIG.to_string()),
        None if !args.cfg.is_empty() => Some("{}".to_string()),
        None => None,
    };
    let loaded = match text {
        // Parsed once, edited by `--cfg` if any.
        Some(t) if args.cfg.is_empty() => Some(Config::from_json5(&t)),
        Some(t) => Some(Config::from_value(&with_cfg(&t, &args.cfg)?)),
        None => None,
    };
    let mut config = match loaded {
        Some(result) => {
            let (c, warnings) = result.map_err(|e| e.to_string())?;
            for w in warnings {
                eprintln!("weftd: warning: {w}");
            }
            c
        }
        None => Config::default(),
    };
    for w in plugins::check(config.plugins.as_ref())? {
        eprintln!("weftd: warning: {w}");
    }
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
    if let Some(id) = &args.id {
        config.id =
            Some(id.parse().map_err(|_| {
                format!("invalid --id {id:?}: expected 1 to 32 hexadecimal digits")
            })?);
    }
    if args.no_timestamp {
        config.timestamping = Some(false);
    }
    Ok(config)
}

/// Where REST listens: `--rest-http-port`, else `plugins.rest.http_port` as Zenoh's REST
/// plugin is configured.
fn rest_address(args: &Args, config: &Config) -> Result<Option<SocketAddr>, String> {
    if let Some(text) = &args.rest_http_port {
        return parse_rest_address(text).map(Some).ok_or_else(|| {
            format!("invalid --rest-http-port {text:?}: expected PORT or ADDRESS:PORT")
        });
    }
    let Some(value) = plugins::rest_http_port(config.plugins.as_ref())? else {
        return Ok(None);
    };
    let parsed = match &value {
        serde_json::Value::Number(n) => n
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .map(every_interface),
        serde_json::Value::String(text) => parse_rest_address(text),
        _ => None,
    };
    parsed.map(Some).ok_or_else(|| {
        format!(
            "invalid value {value} for plugins.rest.http_port: expected a port number or \
             \"ADDRESS:PORT\""
        )
    })
}

/// `PORT` (every interface) or `ADDRESS:PORT` (`127.0.0.1:8000`, `[::1]:8000`).
fn parse_rest_address(text: &str) -> Option<SocketAddr> {
    match text.parse::<u16>() {
        Ok(port) => Some(every_interface(port)),
        Err(_) => text.parse().ok(),
    }
}

/// `[::]:port`: every interface, IPv4 included (as Zenoh's REST plugin binds a bare port).
fn every_interface(port: u16) -> SocketAddr {
    SocketAddr::new(std::net::Ipv6Addr::UNSPECIFIED.into(), port)
}

fn main() -> ExitCode {
    let built_in = std::env::args_os().len() == 1;
    let args = Args::parse();
    // Logs: RUST_LOG (e.g. `RUST_LOG=debug`), `info` by default, on standard error.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr);
    match args.log_format {
        LogFormat::Text => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => logs.json().init(),
    }
    let mut config = match config(&args, built_in) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("weftd: {e}");
            return ExitCode::from(2);
        }
    };
    let rest_http_address = match rest_address(&args, &config) {
        Ok(p) => p,
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
    let recordings = match config.plugins.as_ref().map(weft_record::config::parse) {
        None => Vec::new(),
        Some(Ok(r)) => r,
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
    let admin_readable = args
        .adminspace_permissions
        .map_or(config.adminspace_read, AdminPermissions::readable);
    let mut plugins = Vec::new();
    if let Some(address) = rest_http_address {
        plugins.push(admin::Plugin::rest(address));
    }
    if let Some(manager) = config
        .plugins
        .as_ref()
        .and_then(|p| p.get("storage_manager"))
    {
        plugins.push(admin::Plugin::storage_manager(manager.get("storages")));
    }
    let metadata = config.metadata.clone().unwrap_or(serde_json::Value::Null);
    // The recordings as configured, for the admin space.
    let recordings_given = config
        .plugins
        .as_ref()
        .and_then(|p| p.pointer("/recorder/recordings"))
        .cloned();
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
    let recordings = match weft_record::start(&session, recordings) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("weftd: {e}");
            session.close();
            return ExitCode::from(1);
        }
    };
    if !recordings.is_empty() {
        let stats: Vec<_> = recordings
            .iter()
            .map(|r| (r.config.name.clone(), r.stats()))
            .collect();
        plugins.push(admin::Plugin::recorder(recordings_given.as_ref(), &stats));
    }
    let plugin_metrics = metrics::PluginMetrics {
        storages: _storages
            .iter()
            .map(|s| metrics::StorageMetrics {
                name: s.config.name.clone(),
                key_expr: s.config.key_expr.to_string(),
                stats: s.stats(),
            })
            .collect(),
        recordings: recordings
            .iter()
            .map(|r| metrics::RecordingMetrics {
                name: r.config.name.clone(),
                key_expr: r.config.key_expr.to_string(),
                stats: r.stats(),
            })
            .collect(),
        declared_series: args.metrics_declared_series.map(|n| n as usize),
    };
    let admin_context = admin::Context {
        metadata,
        plugins,
        plugin_metrics: plugin_metrics.clone(),
    };
    let _admin = if admin_readable {
        match admin::declare(&session, admin_context) {
            Ok(q) => Some(q),
            Err(e) => {
                eprintln!("weftd: admin space: {e}");
                None
            }
        }
    } else {
        None
    };
    if let Some(address) = rest_http_address {
        if let Err(e) = rest::serve(session.clone(), address, plugin_metrics) {
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
    // Recordings finish their files (summary and index) before the session goes.
    for recording in recordings {
        recording.stop();
    }
    session.close();
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cfg_settings_replace_or_create_the_keys_they_name() {
        let settings = [
            "mode:\"client\"".to_string(),
            "transport/unicast/max_sessions:5".to_string(),
            "connect/endpoints:[\"tcp/127.0.0.1:7447\"]".to_string(),
        ];
        let root = with_cfg("{ mode: 'router', transport: { link: {} } }", &settings).unwrap();
        assert_eq!(root["mode"], "client");
        assert_eq!(root["transport"]["unicast"]["max_sessions"], 5);
        assert!(root["transport"]["link"].is_object());
        assert_eq!(root["connect"]["endpoints"][0], "tcp/127.0.0.1:7447");
        let (config, _) = Config::from_value(&root).unwrap();
        assert_eq!(config.max_sessions, 5);
        for bad in ["no-colon", "mode:{"] {
            let e = with_cfg("{}", &[bad.to_string()]).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn no_arguments_select_the_built_in_example() {
        let args = Args::parse_from(["weftd"]);
        let config = config(&args, true).unwrap();
        // REST on loopback only: a newcomer's first run exposes nothing that writes.
        assert_eq!(
            rest_address(&args, &config),
            Ok(Some("127.0.0.1:8000".parse().unwrap()))
        );
        assert_eq!(config.listen.len(), 1);
        assert_eq!(config.listen[0].to_string(), DEFAULT_LISTEN);
        let storages = weft_storage::config::parse(config.plugins.as_ref().unwrap()).unwrap();
        assert_eq!(storages.len(), 1);
        assert_eq!(storages[0].key_expr.as_str(), "demo/**");
    }

    #[test]
    fn arguments_replace_the_built_in_example() {
        let args = Args::parse_from(["weftd", "-l", "tcp/127.0.0.1:7999"]);
        let config = config(&args, false).unwrap();
        assert_eq!(rest_address(&args, &config), Ok(None));
        assert!(config.plugins.is_none());
    }

    #[test]
    fn a_bad_rest_port_names_the_key() {
        let args = Args::parse_from(["weftd"]);
        let (config, _) =
            Config::from_json5("{ plugins: { rest: { http_port: 70000 } } }").unwrap();
        let e = rest_address(&args, &config).unwrap_err();
        assert!(e.contains("plugins.rest.http_port"), "{e}");
        let args = Args::parse_from(["weftd", "--rest-http-port", "localhost"]);
        let e = rest_address(&args, &config).unwrap_err();
        assert!(e.contains("--rest-http-port"), "{e}");
    }

    #[test]
    fn rest_addresses_are_read_as_zenohs_rest_plugin_reads_them() {
        let from_config = |text: &str| {
            let (config, _) = Config::from_json5(text).unwrap();
            rest_address(&Args::parse_from(["weftd"]), &config)
        };
        let any = |port| Ok(Some(every_interface(port)));
        assert_eq!(
            from_config("{ plugins: { rest: { http_port: 8000 } } }"),
            any(8000)
        );
        assert_eq!(
            from_config(r#"{ plugins: { rest: { http_port: "8001" } } }"#),
            any(8001)
        );
        assert_eq!(
            from_config(r#"{ plugins: { rest: { http_port: "127.0.0.1:8002" } } }"#),
            Ok(Some("127.0.0.1:8002".parse().unwrap()))
        );
        let args = Args::parse_from(["weftd", "--rest-http-port", "[::1]:8003"]);
        assert_eq!(
            rest_address(&args, &Config::default()),
            Ok(Some("[::1]:8003".parse().unwrap()))
        );
    }
}
