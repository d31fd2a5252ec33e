//! Standard output for the subcommands (see the `outln!` macro): a reader that went away
//! ends the program quietly.

use std::fmt;
use std::io::{ErrorKind, Write};

/// Writes `args` and a newline to standard output; exits with success if the output is
/// closed.
pub(crate) fn line(args: fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{args}").and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}

/// Writes `text` to standard output without a newline, as [`line`] otherwise.
pub(crate) fn text(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
    }
}
