//! Declaration churn: 10,000 client sessions against one weftd, a few at a time, each
//! connecting, declaring a subscriber, a queryable and a liveliness token on keys of its
//! own, and closing (half with a Close message, half by dropping the socket). weftd's
//! memory stays flat, and nothing any of them declared is left behind.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{rss, Weftd};
use serde_json::Value;
use weft_proto::core::Priority;
use weft_proto::network::{Declaration, Interest, InterestMode, InterestOptions, NetworkMessage};
use weft_testkit::free_port;
use weft_testkit::raw::RawClient;

/// Sessions opened and closed in all.
const CYCLES: usize = 10_000;
/// Sessions alive at once, at most.
const CONCURRENT: usize = 4;
/// Sessions between two readings of weftd's memory, each taken once every session so far
/// is gone from weftd (its sockets closed).
const BATCH: usize = 500;
/// The readings compared: the lowest of those after 2,000, 2,500 and 3,000 sessions (the
/// first 2,000 are the warm-up: they bring weftd's tables, the kernel's socket caches and
/// the allocator to their working size), of those after 5,500, 6,000 and 6,500, and of those
/// after 9,000, 9,500 and 10,000. One reading that catches the allocator with more heap than
/// usual counts for nothing.
const EARLY: std::ops::Range<usize> = 3..6;
const MIDDLE: std::ops::Range<usize> = 10..13;
const LATE: std::ops::Range<usize> = 17..20;
/// Resident memory weftd may gain from the early readings to the late ones, 6,000 sessions
/// apart, unless the growth is a single step. A leak of 100 bytes per session (a 112-byte
/// heap block) adds about 670 KiB. Without a leak (debug build, the allocator as set by
/// [`ALLOCATOR`]), the readings after the warm-up mostly stay within 280 KiB of each other,
/// but the heap can step up once and then stay level (548 KiB between 3,000 and 3,500
/// sessions, level to 10,000, in one run).
const TOLERANCE: usize = 512 * 1024;
/// A leak grows in both stretches (early to middle, middle to late, 3,500 sessions each):
/// growth above [`TOLERANCE`] fails only if each stretch gained more than this; a step in
/// one stretch alone passes. With a 100-byte leak per session put in on purpose (3 runs),
/// the whole grew by 700 to 852 KiB and each stretch by 264 KiB or more.
const STRETCH_GROWTH: usize = 128 * 1024;
/// Resident memory weftd may gain from the early readings to the late ones in all, steps or
/// not.
const MOST: usize = 1024 * 1024;
/// glibc's allocator for weftd here: no per-thread caches, one arena. With the defaults,
/// freed memory parked in the threads' caches and arenas grows for tens of thousands of
/// sessions before it levels off (measured on a release build: 5 MiB more RSS after 28,000
/// sessions than after 1,000, then level up to 60,000; in this test, up to 400 KiB from
/// the baseline to the end), which 10,000 sessions cannot tell apart from a leak. What
/// weftd keeps allocated counts the same either way.
const ALLOCATOR: (&str, &str) = (
    "GLIBC_TUNABLES",
    "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=1",
);

/// The id of the session that shows the checks work.
const PROBE: u128 = 0xc4_ffff_ffff;

/// The number of sockets process `pid` holds (its listener and a socket per session).
fn sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter(|target| target.to_string_lossy().starts_with("socket:"))
        .count()
}

/// Waits (at most 30 s) until weftd holds no more sockets than `at_rest`: every session
/// closed so far is gone from it. Fails naming what weftd still holds.
fn wait_for_sockets(pid: u32, at_rest: usize, checker: &weft::Session) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while sockets(pid) > at_rest {
        if Instant::now() > deadline {
            panic!(
                "weftd still holds {} sockets, {at_rest} at rest; its admin space: {:?}",
                sockets(pid),
                leftovers(checker)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits, `timeout` at most, until weftd has handled everything `client` sent before: asks
/// for the subscribers declared now (an interest in current declarations only, which
/// weftd answers and then forgets) and reads until the answer's end. Not
/// `RawClient::sync`: with its interest in future declarations too, weftd would send each
/// session the undeclarations of the others as they close, traffic that has nothing to do
/// with what this test measures.
fn handled(client: &mut RawClient, timeout: Duration) -> std::io::Result<()> {
    let interest = NetworkMessage::Interest(Interest::new(
        1,
        InterestMode::Current,
        InterestOptions::SUBSCRIBERS,
        None,
    ));
    client.send(&interest, Priority::Control)?;
    client.recv_until(
        timeout,
        |m| matches!(m, NetworkMessage::Declare(d) if matches!(d.body, Declaration::Final(_))),
    )
}

/// One session: connects, declares a subscriber, a queryable and a token on keys of its
/// own, waits until weftd has handled them, and closes.
fn cycle(port: u16, n: usize) {
    let mut client = RawClient::connect(port, 0xc4_0000_0000 + n as u128)
        .unwrap_or_else(|e| panic!("session {n}: {e:?}"));
    client
        .declare_subscriber(1, &format!("churn/{n}/sub"))
        .unwrap();
    client
        .declare_queryable(2, &format!("churn/{n}/q"))
        .unwrap();
    client.declare_token(3, &format!("churn/{n}/tok")).unwrap();
    handled(&mut client, Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("session {n}: weftd did not answer: {e}"));
    if n % 2 == 0 {
        client.close().unwrap();
    }
}

/// Runs the sessions numbered `range`, `CONCURRENT` at a time.
fn run_cycles(port: u16, range: std::ops::Range<usize>) {
    let next = AtomicUsize::new(range.start);
    std::thread::scope(|s| {
        for _ in 0..CONCURRENT {
            s.spawn(|| loop {
                let n = next.fetch_add(1, Ordering::SeqCst);
                if n >= range.end {
                    break;
                }
                cycle(port, n);
            });
        }
    });
}

/// What weftd still holds of the churning sessions: the sessions other than `checker`'s,
/// and the subscribers, queryables and tokens on `churn/**`, from its admin space; the
/// tokens a liveliness get on `churn/**` finds.
fn leftovers(checker: &weft::Session) -> Vec<String> {
    let mut left = Vec::new();
    let options = weft::GetOptions {
        timeout: Some(Duration::from_secs(10)),
        ..weft::GetOptions::default()
    };
    let replies = checker.get("@/*/router/**", &options).unwrap();
    let mut answered = false;
    for reply in replies.iter() {
        let sample = reply.result.expect("an admin space reply");
        let key = sample.key_expr.as_str();
        if key.ends_with("/router") {
            answered = true;
            let value: Value = serde_json::from_slice(sample.payload.as_slice()).unwrap();
            let own = checker.zid().to_string();
            for s in value["sessions"].as_array().unwrap() {
                let zid = s["peer"].as_str().unwrap();
                if zid != own {
                    left.push(format!("session {zid}"));
                }
            }
        } else {
            // `@/<zid>/router/<kind>/<key expression>`: a declaration someone still holds.
            let Some((_, rest)) = key.split_once("/router/") else {
                continue;
            };
            if let Some((kind, k)) = rest.split_once('/') {
                if ["subscriber", "queryable", "token"].contains(&kind) && k.starts_with("churn/") {
                    left.push(format!("{kind} {k}"));
                }
            }
        }
    }
    assert!(answered, "weftd's admin space did not answer");
    let tokens = checker
        .liveliness_get("churn/**", Duration::from_secs(10))
        .unwrap();
    for reply in tokens.iter() {
        let sample = reply.result.expect("a liveliness reply");
        left.push(format!("liveliness token {}", sample.key_expr.as_str()));
    }
    left
}

/// Waits (at most 30 s) until [`leftovers`] finds nothing; returns what it found last.
fn wait_for_no_leftovers(checker: &weft::Session) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = leftovers(checker);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ten_thousand_sessions_declaring_and_closing_leave_weftd_as_it_was() {
    let started = Instant::now();
    let weftd = Weftd::with_env(free_port(), &[ALLOCATOR], &[]);
    let pid = weftd.pid();
    let checker = weftd.weft_client();
    // Its listener and the checker's session.
    let at_rest = sockets(pid);

    // The checks see what a session declares while it is open.
    let mut probe = RawClient::connect(weftd.port, PROBE).unwrap();
    probe.declare_subscriber(1, "churn/probe/sub").unwrap();
    probe.declare_queryable(2, "churn/probe/q").unwrap();
    probe.declare_token(3, "churn/probe/tok").unwrap();
    handled(&mut probe, Duration::from_secs(10)).unwrap();
    let mut seen = leftovers(&checker);
    seen.sort();
    let probe_zid = weft::ZenohId::new(PROBE).unwrap();
    assert_eq!(
        seen,
        [
            "liveliness token churn/probe/tok".to_string(),
            "queryable churn/probe/q".to_string(),
            format!("session {probe_zid}"),
            "subscriber churn/probe/sub".to_string(),
            "token churn/probe/tok".to_string(),
        ],
        "what an open session declared"
    );
    probe.close().unwrap();
    assert_eq!(wait_for_no_leftovers(&checker), Vec::<String>::new());

    let readings: Vec<usize> = (0..CYCLES)
        .step_by(BATCH)
        .map(|start| {
            run_cycles(weftd.port, start..(start + BATCH).min(CYCLES));
            wait_for_sockets(pid, at_rest, &checker);
            rss(pid)
        })
        .collect();
    let lowest = |r: std::ops::Range<usize>| *readings[r].iter().min().unwrap();
    let (early, middle, late) = (lowest(EARLY), lowest(MIDDLE), lowest(LATE));
    eprintln!(
        "{CYCLES} sessions in {:?}; weftd VmRSS after every {BATCH}: {:?} KiB",
        started.elapsed(),
        readings.iter().map(|b| b >> 10).collect::<Vec<_>>(),
    );
    let grew = |from: usize, to: usize| to.saturating_sub(from);
    let sessions = |r: std::ops::Range<usize>| r.map(|i| (i + 1) * BATCH).collect::<Vec<_>>();
    let leaked = grew(early, late) > MOST
        || (grew(early, late) > TOLERANCE
            && grew(early, middle) > STRETCH_GROWTH
            && grew(middle, late) > STRETCH_GROWTH);
    assert!(
        !leaked,
        "weftd grew by {} KiB from the readings after {:?} sessions to those after {:?}: \
         {} KiB by those after {:?}, then {} KiB",
        grew(early, late) >> 10,
        sessions(EARLY),
        sessions(LATE),
        grew(early, middle) >> 10,
        sessions(MIDDLE),
        grew(middle, late) >> 10,
    );
    let left = wait_for_no_leftovers(&checker);
    assert!(left.is_empty(), "left in weftd: {left:?}");
}
