//! What every session command shares: the flags of Zenoh's tools, opening the session,
//! printing samples, and stopping on SIGINT/SIGTERM.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use clap::ValueEnum;
use weft::{Config, Sample, WhatAmI};

/// Session flags, as Zenoh's tools have them.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct SessionArgs {
    /// Session mode.
    #[arg(short, long, value_enum, default_value = "peer")]
    mode: ModeArg,
    /// Endpoint to connect to (repeatable), e.g. tcp/127.0.0.1:7447; the same endpoint
    /// again with ?prio=0-2 adds a link reserved for priorities 0..=2.
    #[arg(short = 'e', long = "connect", value_name = "ENDPOINT")]
    connect: Vec<String>,
    /// Endpoint to listen on (repeatable), e.g. tcp/127.0.0.1:0.
    #[arg(short, long = "listen", value_name = "ENDPOINT")]
    listen: Vec<String>,
    /// JSON5 configuration file (Zenoh's key names).
    #[arg(short, long, value_name = "FILE")]
    config: Option<String>,
    /// Disable multicast scouting.
    #[arg(long)]
    no_multicast_scouting: bool,
    /// A configuration value, as Zenoh's tools' `--cfg`: `KEY:VALUE`, KEY a `/`-separated
    /// path and VALUE JSON5 (e.g. `--cfg 'transport/link/tx/lease:5000'`); repeatable,
    /// applied over the file.
    #[arg(long = "cfg", value_name = "KEY:VALUE")]
    cfg: Vec<String>,
    /// Zenoh's shared-memory transport: weft has none, so this flag is refused.
    #[arg(long, hide = true)]
    enable_shm: bool,
}

#[derive(Copy, Clone, Debug, ValueEnum)]
enum ModeArg {
    Client,
    Peer,
    Router,
}

/// A key expression (or selector) argument. MQTT's and NATS's wildcards are refused with
/// Zenoh's equivalents: as keys they would be literal chunks that nothing matches.
pub(crate) fn key_expr_arg(s: &str) -> Result<String, String> {
    let key = s.split_once('?').map_or(s, |(k, _)| k);
    for chunk in key.split('/') {
        let hint = match chunk {
            "+" => "`+` is MQTT's one-level wildcard",
            "#" => "`#` is MQTT's multi-level wildcard",
            ">" => "`>` is NATS's multi-token wildcard",
            _ => continue,
        };
        return Err(format!(
            "{hint}: use * for one chunk, ** for many (e.g. robot/*/pose, robot/**)"
        ));
    }
    Ok(s.to_string())
}

/// A command-line or configuration error: printed, then exit status 2.
pub(crate) fn usage_error(command: &str, message: &str) -> ExitCode {
    eprintln!("weft {command}: {message}");
    ExitCode::from(2)
}

impl SessionArgs {
    /// Builds the configuration: file first, then flags.
    pub(crate) fn config(&self, command: &str) -> Result<Config, ExitCode> {
        if self.enable_shm {
            return Err(usage_error(
                command,
                "--enable-shm: weft has no shared-memory transport (its data always goes \
                 through the links)",
            ));
        }
        let mut config = match (&self.config, self.cfg.is_empty()) {
            (None, true) => Config::default(),
            (path, _) => {
                let text = match path {
                    Some(path) => std::fs::read_to_string(path)
                        .map_err(|e| usage_error(command, &format!("cannot read {path}: {e}")))?,
                    None => "{}".to_string(),
                };
                let mut root: serde_json::Value = json5::from_str(&text).map_err(|e| {
                    usage_error(command, &format!("configuration is not valid JSON5: {e}"))
                })?;
                for setting in &self.cfg {
                    Config::apply_setting(&mut root, setting)
                        .map_err(|e| usage_error(command, &e.to_string()))?;
                }
                let (c, warnings) =
                    Config::from_value(&root).map_err(|e| usage_error(command, &e.to_string()))?;
                for w in warnings {
                    eprintln!("weft {command}: warning: {w}");
                }
                c
            }
        };
        let mode_in_config =
            self.config.is_some() || self.cfg.iter().any(|c| c.starts_with("mode:"));
        if !mode_in_config || self.mode_given() {
            config.mode = match self.mode {
                ModeArg::Client => WhatAmI::Client,
                ModeArg::Peer => WhatAmI::Peer,
                ModeArg::Router => WhatAmI::Router,
            };
        }
        for e in &self.connect {
            let ep = e.parse().map_err(|err: weft::endpoint::EndpointError| {
                usage_error(command, &err.to_string())
            })?;
            config.connect.push(ep);
        }
        for e in &self.listen {
            let ep = e.parse().map_err(|err: weft::endpoint::EndpointError| {
                usage_error(command, &err.to_string())
            })?;
            config.listen.push(ep);
        }
        if self.no_multicast_scouting {
            config.multicast_scouting = false;
        }
        Ok(config)
    }

    fn mode_given(&self) -> bool {
        std::env::args().any(|a| a == "-m" || a == "--mode" || a.starts_with("--mode="))
    }

    /// Opens the session, reporting failures.
    pub(crate) fn open(&self, command: &str) -> Result<weft::Session, ExitCode> {
        let config = self.config(command)?;
        weft::open(config).map_err(|e| {
            eprintln!("weft {command}: {e}");
            ExitCode::from(1)
        })
    }
}

/// Tells the user on standard error that a long-running command is in place (its
/// declaration made), as Zenoh's tools do: `weft sub: subscribed to demo/** (Ctrl-C
/// stops)`. Scripts may wait for this line.
pub(crate) fn announce_ready(command: &str, what: &str) {
    eprintln!("weft {command}: {what} (Ctrl-C stops)");
}

/// A flag raised by SIGINT or SIGTERM.
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    flag
}

/// Whether the stop flag is raised.
pub(crate) fn stopped(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Relaxed)
}

/// A sample as a JSON object: kind, key, payload (or payload_b64), encoding, attachment,
/// timestamp.
pub(crate) fn sample_json(s: &Sample) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert("kind".into(), s.kind.as_str().into());
    m.insert("key".into(), (*s.key_expr).into());
    match std::str::from_utf8(&s.payload) {
        Ok(text) => m.insert("payload".into(), text.into()),
        Err(_) => m.insert("payload_b64".into(), STANDARD.encode(&s.payload).into()),
    };
    m.insert("encoding".into(), s.encoding.clone().into());
    m.insert(
        "attachment".into(),
        match &s.attachment {
            None => serde_json::Value::Null,
            Some(a) => match std::str::from_utf8(a) {
                Ok(t) => t.into(),
                Err(_) => STANDARD.encode(a).into(),
            },
        },
    );
    m.insert(
        "timestamp".into(),
        match &s.timestamp {
            None => serde_json::Value::Null,
            Some(ts) => weft_cli::json::timestamp(ts),
        },
    );
    serde_json::Value::Object(m)
}

/// A sample as one line of text.
pub(crate) fn sample_line(s: &Sample) -> String {
    format!(
        "{} {} {}",
        s.kind.as_str(),
        s.key_expr,
        String::from_utf8_lossy(&s.payload)
    )
}
