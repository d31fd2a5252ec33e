//! Zenoh counterpart of `weft sub-thr`: counts samples on `test/thr` and prints the median
//! rate over `--rounds` rounds of `--samples` messages, as
//! `median_msgs_per_s=… payload=…`.

use std::io::Read;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use weft_bench_compare::{measure_rounds_then, median, Args, SeqCheck};
use zenoh::Wait;

const USAGE: &str = "zsub_thr [-m client|peer] [-e ENDPOINT] [-l ENDPOINT] \
[--no-multicast-scouting] [--samples N] [--rounds R] [--max-seconds S] [--seq]";

fn main() {
    let args = Args::parse(USAGE);
    let samples: u64 = args.get("--samples", 100_000);
    let rounds: u32 = args.get("--rounds", 10);
    let max_seconds: f64 = args.get("--max-seconds", 120.0);
    let session = zenoh::open(args.zenoh_config()).wait().unwrap_or_else(|e| {
        eprintln!("zsub_thr: {e}");
        std::process::exit(1)
    });
    let count = Arc::new(AtomicU64::new(0));
    let size = Arc::new(AtomicUsize::new(0));
    let seq = args.flag("--seq").then(|| Arc::new(SeqCheck::default()));
    let (c, z, q) = (count.clone(), size.clone(), seq.clone());
    let subscriber = session
        .declare_subscriber("test/thr")
        .callback(move |s| {
            z.store(s.payload().len(), Ordering::Relaxed);
            if let Some(q) = &q {
                let mut head = [0u8; 8];
                let n = s.payload().reader().read(&mut head).unwrap_or(0);
                q.record(&head[..n]);
            }
            c.fetch_add(1, Ordering::Relaxed);
        })
        .wait()
        .unwrap_or_else(|e| {
            eprintln!("zsub_thr: {e}");
            std::process::exit(1)
        });
    let rates = measure_rounds_then(
        || count.load(Ordering::Relaxed),
        samples,
        rounds,
        max_seconds,
        || {
            if let Some(q) = &seq {
                println!("{}", q.line());
            }
        },
    );
    drop(subscriber);
    let _ = session.close().wait();
    if rates.is_empty() {
        eprintln!("zsub_thr: no complete round");
        std::process::exit(1);
    }
    println!(
        "median_msgs_per_s={:.0} payload={}",
        median(rates),
        size.load(Ordering::Relaxed)
    );
}
