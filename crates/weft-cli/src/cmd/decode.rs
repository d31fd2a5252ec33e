//! `weft decode`: captured Zenoh traffic as JSON.

use std::io::{self, Read, Write};
use std::process::ExitCode;

use clap::ValueEnum;
use weft_cli::capture;
use weft_cli::json::Style;
use weft_cli::trace::{self, Framing, Options};

/// Arguments of `weft decode`.
#[derive(clap::Args, Debug)]
pub(crate) struct DecodeArgs {
    /// Capture files (`-` for standard input).
    files: Vec<String>,
    /// Decode this hex string instead of files.
    #[arg(long, conflicts_with = "files")]
    hex: Option<String>,
    /// Force the framing instead of detecting it.
    #[arg(long, value_enum)]
    framing: Option<FramingArg>,
    /// Show whole payloads (by default payloads longer than 256 bytes are cut).
    #[arg(long)]
    full: bool,
    /// Also check that every batch re-encodes to the same bytes; exit 1 otherwise.
    #[arg(long)]
    check: bool,
}

/// A framing to force.
#[derive(Copy, Clone, Debug, ValueEnum)]
enum FramingArg {
    Stream,
    Datagram,
    Scouting,
}

/// Runs `weft decode`.
pub(crate) fn run(args: &DecodeArgs) -> ExitCode {
    let opts = Options {
        framing: args.framing.map(|f| match f {
            FramingArg::Stream => Framing::Stream,
            FramingArg::Datagram => Framing::Datagram,
            FramingArg::Scouting => Framing::Scouting,
        }),
        style: if args.full {
            Style {
                payload_limit: usize::MAX,
            }
        } else {
            Style::default()
        },
    };
    let inputs: Vec<(String, Result<String, String>)> = match &args.hex {
        Some(h) => vec![("--hex".into(), Ok(format!("> {h}")))],
        None if args.files.is_empty() => {
            eprintln!("weft decode: give capture files, `-` for standard input, or --hex HEX");
            return ExitCode::from(2);
        }
        None => args
            .files
            .iter()
            .map(|f| (f.clone(), read_input(f)))
            .collect(),
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut failed = false;
    for (name, text) in inputs {
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                eprintln!("weft decode: {name}: {e}");
                failed = true;
                continue;
            }
        };
        let capture = match capture::parse(&text) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("weft decode: {name}: {e}");
                failed = true;
                continue;
            }
        };
        let (report, error) = trace::decode_capture(&capture, &opts);
        for r in &report.records {
            if let Err(e) = writeln!(out, "{}", r.value) {
                // A reader that went away (`| head`) ends the decoding quietly.
                if e.kind() == io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
                eprintln!("weft decode: {e}");
                return ExitCode::from(1);
            }
        }
        let _ = out.flush();
        if args.check {
            for m in &report.mismatches {
                eprintln!(
                    "weft decode: {name}: line {} (connection {}, {}): re-encoding differs\n  captured:   {}\n  re-encoded: {}",
                    m.line,
                    m.conn,
                    m.dir.symbol(),
                    weft_cli::json::hex(&m.original),
                    weft_cli::json::hex(&m.reencoded)
                );
                failed = true;
            }
        }
        if let Some(e) = error {
            eprintln!("weft decode: {name}: {e}");
            failed = true;
        }
    }
    let _ = out.flush();
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn read_input(path: &str) -> Result<String, String> {
    if path == "-" {
        let mut s = String::new();
        io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| e.to_string())?;
        Ok(s)
    } else {
        std::fs::read_to_string(path).map_err(|e| e.to_string())
    }
}
