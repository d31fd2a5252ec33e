//! `init_log_from_env_or` and `try_init_log_from_env`: weft's log events (`tracing`)
//! printed on standard error, at the level `RUST_LOG` names.

use std::fmt::Write as _;

use pyo3::prelude::*;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use crate::error::zerr;

/// Prints the events at `max` or more severe, one line each.
struct StderrLog {
    max: Level,
}

impl Subscriber for StderrLog {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.max
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::from_level(self.max))
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut line = Line(String::new());
        event.record(&mut line);
        let m = event.metadata();
        eprintln!("{:>5} {}:{}", m.level(), m.target(), line.0);
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// An event's fields as text: the message, then `name=value` pairs.
struct Line(String);

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, " {value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

/// The level `spec` asks for: `RUST_LOG`'s syntax, of which the most verbose level
/// named counts (`info`, `weft=debug,warn` gives debug).
fn level_of(spec: &str) -> Option<Level> {
    spec.split(',')
        .filter_map(|part| {
            let level = part.rsplit('=').next()?.trim();
            level.parse::<Level>().ok()
        })
        .max()
}

fn install(level: Level) {
    // Only the first installation counts, as with any global log subscriber.
    let _ = tracing::subscriber::set_global_default(StderrLog { max: level });
}

/// Prints weft's log on standard error at the level of `RUST_LOG`; does nothing when it
/// is not set.
#[pyfunction]
pub(crate) fn try_init_log_from_env() {
    if let Some(level) = std::env::var("RUST_LOG").ok().as_deref().and_then(level_of) {
        install(level);
    }
}

/// Prints weft's log on standard error at the level of `RUST_LOG`, or at `level`
/// (`error`, `warn`, `info`, `debug`, `trace`) when it is not set.
#[pyfunction]
pub(crate) fn init_log_from_env_or(level: &str) -> PyResult<()> {
    let spec = std::env::var("RUST_LOG").unwrap_or_else(|_| level.to_owned());
    let level = level_of(&spec).ok_or_else(|| zerr(format!("invalid log level `{spec}`")))?;
    install(level);
    Ok(())
}
