//! `weft hz` and `weft bw`: the rate and bandwidth of the samples on a key expression,
//! printed every second as ROS 2's `ros2 topic hz` and `ros2 topic bw` print them.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use weft_cli::rates::{Rates, Window};

use super::common::{stop_flag, stopped, usage_error, SessionArgs};

/// Arguments of `weft hz` and `weft bw`.
#[derive(clap::Args, Debug)]
#[command(after_help = "Example: weft hz -m client -e tcp/127.0.0.1:7447 -k robot/1/pose")]
pub(crate) struct RatesArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// The key expression to watch.
    #[arg(short, long, value_parser = super::common::key_expr_arg)]
    key: String,
    /// Samples the figures are computed over (the last ones).
    #[arg(short, long, default_value_t = 10_000)]
    window: usize,
    /// Stop after this many reports.
    #[arg(long)]
    count: Option<u64>,
    /// One JSON object per report.
    #[arg(long)]
    json: bool,
}

/// What a report shows.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Report {
    /// Samples per second and the spacing of arrivals (`weft hz`).
    Hz,
    /// Bytes per second and sample sizes (`weft bw`).
    Bw,
}

/// Runs `weft hz` or `weft bw`.
pub(crate) fn run(args: &RatesArgs, report: Report) -> ExitCode {
    let command = match report {
        Report::Hz => "hz",
        Report::Bw => "bw",
    };
    let stop = stop_flag();
    let session = match args.session.open(command) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let window = Arc::new(Mutex::new((Window::new(args.window), 0u64)));
    let seen = window.clone();
    let subscriber = session.declare_subscriber(&args.key, move |s| {
        let mut w = seen.lock().unwrap_or_else(|e| e.into_inner());
        w.0.add(Instant::now(), s.payload.len());
        w.1 += 1;
    });
    let subscriber = match subscriber {
        Ok(s) => s,
        Err(e) => {
            session.close();
            return usage_error(command, &e.to_string());
        }
    };
    if !args.json {
        eprintln!("watching {} (Ctrl-C to stop)", args.key);
    }
    let mut reports = 0u64;
    let mut received_before = 0u64;
    let mut next = Instant::now() + Duration::from_secs(1);
    while !stopped(&stop) && args.count.is_none_or(|n| reports < n) {
        std::thread::sleep(
            next.saturating_duration_since(Instant::now())
                .min(Duration::from_millis(100)),
        );
        if Instant::now() < next {
            continue;
        }
        next += Duration::from_secs(1);
        let (rates, received) = {
            let w = window.lock().unwrap_or_else(|e| e.into_inner());
            (w.0.rates(Instant::now()), w.1)
        };
        let fresh = received > received_before;
        received_before = received;
        match (rates, fresh) {
            (Some(r), true) => {
                print_report(&args.key, &r, report, args.json);
                reports += 1;
            }
            _ if !args.json => outln!("no new messages"),
            _ => {}
        }
    }
    drop(subscriber);
    session.close();
    ExitCode::SUCCESS
}

fn print_report(key: &str, r: &Rates, report: Report, json: bool) {
    match (report, json) {
        (Report::Hz, false) => outln!(
            "average rate: {:.3}\n\tmin: {:.3}s max: {:.3}s std dev: {:.5}s window: {}",
            r.hz,
            r.min_gap,
            r.max_gap,
            r.std_dev,
            r.count
        ),
        (Report::Bw, false) => outln!(
            "{} from {} messages\n\tMessage size mean: {} min: {} max: {}",
            per_second(r.bytes_per_s),
            r.count,
            size(r.mean_size),
            size(r.min_size as f64),
            size(r.max_size as f64)
        ),
        (Report::Hz, true) => outln!(
            "{}",
            serde_json::json!({
                "key": key, "hz": r.hz, "min_s": r.min_gap, "max_s": r.max_gap,
                "std_dev_s": r.std_dev, "window": r.count,
            })
        ),
        (Report::Bw, true) => outln!(
            "{}",
            serde_json::json!({
                "key": key, "bytes_per_s": r.bytes_per_s, "window": r.count,
                "mean_bytes": r.mean_size, "min_bytes": r.min_size, "max_bytes": r.max_size,
            })
        ),
    }
}

/// A size as ROS 2 prints it: B, KB, MB (powers of 1,000).
fn size(bytes: f64) -> String {
    if bytes >= 1e6 {
        format!("{:.2} MB", bytes / 1e6)
    } else if bytes >= 1e3 {
        format!("{:.2} KB", bytes / 1e3)
    } else {
        format!("{bytes:.0} B")
    }
}

fn per_second(bytes: f64) -> String {
    format!("{}/s", size(bytes))
}
