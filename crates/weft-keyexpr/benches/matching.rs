//! Matching a key against 100,000 registered key expressions: the chunk-tree
//! index versus a linear scan with `intersects`.
//!
//! Run with `cargo bench -p weft-keyexpr --bench matching`.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use weft_keyexpr::{KeyExpr, KeyExprIndex, OwnedKeyExpr};

const REGISTRATIONS: usize = 100_000;
const ROBOTS: u64 = 2_000;
const SENSORS: u64 = 50;
const KINDS: [&str; 5] = ["temperature", "pressure", "imu", "lidar", "camera"];

/// xorshift64*: a small deterministic generator, so every run registers the same set.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn kind(&mut self) -> &'static str {
        KINDS[self.below(KINDS.len() as u64) as usize]
    }
}

/// One registration: mostly concrete sensor keys, about a fifth with wildcards.
fn registration(rng: &mut Rng) -> String {
    let (r, s) = (rng.below(ROBOTS), rng.below(SENSORS));
    match rng.below(20) {
        0 => format!("robot/{r}/sensor/*/{}", rng.kind()),
        1 => format!("robot/{r}/**"),
        2 => format!("robot/*/sensor/{s}/{}", rng.kind()),
        3 => format!("fleet/{}/robot/{r}/status", rng.below(40)),
        4 => format!("robot/{r}/cam$*/raw"),
        _ => format!("robot/{r}/sensor/{s}/{}", rng.kind()),
    }
}

fn registrations() -> Vec<OwnedKeyExpr> {
    let mut rng = Rng(0x5eed_0f3e_1f00);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(REGISTRATIONS);
    // A few catch-all expressions, as a router would hold.
    for s in ["**/alarm", "robot/*/sensor/*/temperature", "fleet/**"] {
        seen.insert(s.to_string());
        out.push(OwnedKeyExpr::new(s).unwrap());
    }
    while out.len() < REGISTRATIONS {
        let s = registration(&mut rng);
        if seen.insert(s.clone()) {
            out.push(OwnedKeyExpr::new(s).unwrap());
        }
    }
    out
}

fn queries() -> Vec<OwnedKeyExpr> {
    let mut rng = Rng(0xc0ffee);
    (0..1024)
        .map(|_| {
            let (r, s) = (rng.below(ROBOTS), rng.below(SENSORS));
            OwnedKeyExpr::new(format!("robot/{r}/sensor/{s}/{}", rng.kind())).unwrap()
        })
        .collect()
}

fn matching(c: &mut Criterion) {
    let registered = registrations();
    let mut index = KeyExprIndex::new();
    for (i, ke) in registered.iter().enumerate() {
        index.insert(ke.as_key_expr(), i);
    }
    assert_eq!(index.len(), REGISTRATIONS);
    let queries = queries();

    // Both methods must agree before their speed means anything.
    for q in queries.iter().take(64) {
        let mut fast: Vec<usize> = index
            .intersecting(q.as_key_expr())
            .iter()
            .map(|(_, v)| **v)
            .collect();
        fast.sort_unstable();
        let slow: Vec<usize> = registered
            .iter()
            .enumerate()
            .filter(|(_, ke)| ke.as_key_expr().intersects(q.as_key_expr()))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(fast, slow, "{q}");
    }

    let mut group = c.benchmark_group("match_concrete_key_100k");
    group.measurement_time(Duration::from_secs(5));
    let mut next = 0;
    group.bench_function("index", |b| {
        b.iter(|| {
            next = (next + 1) % queries.len();
            let mut hits = 0usize;
            index.for_each_intersecting(queries[next].as_key_expr(), |_, _| hits += 1);
            black_box(hits)
        })
    });
    group.bench_function("linear_scan", |b| {
        b.iter(|| {
            next = (next + 1) % queries.len();
            let q = queries[next].as_key_expr();
            let hits = registered
                .iter()
                .filter(|ke| ke.as_key_expr().intersects(q))
                .count();
            black_box(hits)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("match_wild_query_100k");
    group.measurement_time(Duration::from_secs(5));
    let wild = KeyExpr::new("robot/42/sensor/*/imu").unwrap();
    group.bench_function("index", |b| {
        b.iter(|| {
            let mut hits = 0usize;
            index.for_each_intersecting(black_box(wild), |_, _| hits += 1);
            black_box(hits)
        })
    });
    group.bench_function("linear_scan", |b| {
        b.iter(|| {
            let hits = registered
                .iter()
                .filter(|ke| ke.as_key_expr().intersects(black_box(wild)))
                .count();
            black_box(hits)
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = matching
}
criterion_main!(benches);
