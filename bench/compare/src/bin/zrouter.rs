//! A Zenoh 1.10.2 router: one session in router mode, the routing zenohd runs, without
//! zenohd's plugins or REST interface. For the routed runs when no release build of zenohd
//! is at hand (`ZENOHD=…/zrouter`): it takes the arguments the benchmark scripts give zenohd,
//! `-c FILE` (a Zenoh configuration, its mode set to router), `-l ENDPOINT` (repeatable) and
//! `--no-multicast-scouting`, and routes until it is killed.

use weft_bench_compare::Args;
use zenoh::Wait;

const USAGE: &str = "zrouter [-c FILE] [-l ENDPOINT]... [--no-multicast-scouting]";

fn main() {
    let args = Args::parse(USAGE);
    let fail = |what: &str, e: &dyn std::fmt::Display| -> ! {
        eprintln!("zrouter: {what}: {e}");
        std::process::exit(2)
    };
    let mut config = match args.options.iter().rev().find(|(k, _)| k == "-c") {
        Some((_, path)) => zenoh::Config::from_file(path).unwrap_or_else(|e| fail(path, &e)),
        None => zenoh::Config::default(),
    };
    let mut set = |key: &str, value: String| {
        if let Err(e) = config.insert_json5(key, &value) {
            fail(key, &e);
        }
    };
    set("mode", "\"router\"".into());
    if !args.listen.is_empty() {
        let items: Vec<String> = args.listen.iter().map(|e| format!("{e:?}")).collect();
        set("listen/endpoints", format!("[{}]", items.join(",")));
    }
    if args.flag("--no-multicast-scouting") {
        set("scouting/multicast/enabled", "false".into());
    }
    let session = zenoh::open(config)
        .wait()
        .unwrap_or_else(|e| fail("open a session", &e));
    println!("zrouter: routing as {}", session.zid());
    loop {
        std::thread::park();
    }
}
