//! `KeyExprIndex` against a brute-force scan of the same registrations, on
//! thousands of random registrations and queries, with insertions and removals.

mod support;

use std::collections::BTreeMap;

use support::{concrete_key, key_expr, variant_of, Rng};
use weft_keyexpr::{includes, intersects, KeyExpr, KeyExprIndex, OwnedKeyExpr};

/// The index and a plain map holding the same registrations.
struct Both {
    index: KeyExprIndex<u32>,
    plain: BTreeMap<OwnedKeyExpr, u32>,
}

impl Both {
    fn new() -> Self {
        Self {
            index: KeyExprIndex::new(),
            plain: BTreeMap::new(),
        }
    }

    fn insert(&mut self, key: &OwnedKeyExpr, value: u32) {
        let old = self.index.insert(key.as_key_expr(), value);
        assert_eq!(old, self.plain.insert(key.clone(), value), "insert {key}");
    }

    fn remove(&mut self, key: &OwnedKeyExpr) {
        let old = self.index.remove(key.as_key_expr());
        assert_eq!(old, self.plain.remove(key), "remove {key}");
    }

    /// Compares the three queries of the index with scans of the plain map.
    fn check(&self, query: KeyExpr<'_>) -> usize {
        type Relation = fn(KeyExpr<'_>, KeyExpr<'_>) -> bool;
        let scans: [(&str, Relation); 3] = [
            ("intersecting", |reg, q| intersects(reg, q)),
            ("including", |reg, q| includes(reg, q)),
            ("included_by", |reg, q| includes(q, reg)),
        ];
        let mut found = 0;
        for (name, relation) in scans {
            let got = match name {
                "intersecting" => self.index.intersecting(query),
                "including" => self.index.including(query),
                _ => self.index.included_by(query),
            };
            let mut got: Vec<(String, u32)> =
                got.into_iter().map(|(k, v)| (k.to_string(), *v)).collect();
            got.sort();
            let want: Vec<(String, u32)> = self
                .plain
                .iter()
                .filter(|(k, _)| relation(k.as_key_expr(), query))
                .map(|(k, v)| (k.to_string(), *v))
                .collect();
            assert_eq!(got, want, "{name} {query}");
            found += got.len();
        }
        assert_eq!(self.index.len(), self.plain.len());
        found
    }
}

#[test]
fn index_matches_a_linear_scan() {
    let mut rng = Rng::new(2024);
    let mut both = Both::new();
    let mut registered = Vec::new();
    for i in 0..3_000 {
        let key = if rng.chance(30) {
            concrete_key(&mut rng, 6)
        } else {
            key_expr(&mut rng, 6)
        };
        both.insert(&key, i);
        registered.push(key);
    }
    let mut found = 0;
    for round in 0..3 {
        for _ in 0..400 {
            let query = match rng.below(3) {
                0 => concrete_key(&mut rng, 7),
                1 => key_expr(&mut rng, 6),
                _ => {
                    let base = rng.pick(&registered).clone();
                    variant_of(&mut rng, &base)
                }
            };
            found += both.check(query.as_key_expr());
        }
        // Churn: remove a third of the registrations, re-register some with new values.
        for (i, key) in registered.iter().enumerate() {
            if rng.chance(33) {
                both.remove(key);
            } else if rng.chance(10) {
                both.insert(key, 10_000 * (round + 1) + i as u32);
            }
        }
    }
    println!("{found} registrations found by 1,200 queries");
    assert!(found > 10_000, "queries found only {found} registrations");
}

#[test]
fn removing_everything_leaves_an_empty_index() {
    let mut rng = Rng::new(5);
    let mut both = Both::new();
    let keys: Vec<OwnedKeyExpr> = (0..2_000).map(|_| key_expr(&mut rng, 5)).collect();
    for (i, key) in keys.iter().enumerate() {
        both.insert(key, i as u32);
    }
    for key in &keys {
        assert_eq!(
            both.index.get(key.as_key_expr()),
            both.plain.get(key),
            "{key}"
        );
    }
    for key in keys.iter().rev() {
        both.remove(key);
    }
    assert!(both.index.is_empty());
    assert_eq!(both.index.iter().count(), 0);
    assert!(both
        .index
        .intersecting(KeyExpr::new("**").unwrap())
        .is_empty());
    // Freed nodes are reused: the index works as new.
    for (i, key) in keys.iter().enumerate().take(500) {
        both.insert(key, i as u32);
    }
    both.check(KeyExpr::new("**").unwrap());
    both.check(KeyExpr::new("a/*").unwrap());
}

#[test]
fn long_queries_and_deep_registrations() {
    let mut rng = Rng::new(77);
    let mut both = Both::new();
    for i in 0..300 {
        both.insert(&key_expr(&mut rng, 4), i);
    }
    // Registrations deeper than the tree keeps, and queries past each bit-set size, up
    // to the limit of MAX_KEY_EXPR_CHUNKS (256) chunks.
    let depths = [100, 127, 128, 129, 200, 255];
    for (i, n) in depths.into_iter().enumerate() {
        let deep = OwnedKeyExpr::new(["a"; 1000][..n].join("/")).unwrap();
        both.insert(&deep, 1_000 + i as u32);
        let wild = OwnedKeyExpr::new(format!("{}/**", ["a"; 1000][..n].join("/"))).unwrap();
        both.insert(&wild, 2_000 + i as u32);
    }
    for n in [1, 30, 62, 63, 64, 65, 200, 254, 255] {
        let plain = OwnedKeyExpr::new(["a"; 1000][..n].join("/")).unwrap();
        both.check(plain.as_key_expr());
        let wild = OwnedKeyExpr::new(format!("{}/**", ["a"; 1000][..n].join("/"))).unwrap();
        both.check(wild.as_key_expr());
    }
    // `**/a/*/a/*...`: 2n + 1 chunks.
    for n in [1, 30, 31, 32, 33, 63, 64, 65, 127] {
        let mixed = OwnedKeyExpr::new(format!("**/{}", ["a/*"; 1000][..n].join("/"))).unwrap();
        both.check(mixed.as_key_expr());
    }
    assert!(OwnedKeyExpr::new(["a"; 1000][..257].join("/")).is_err());
    for (i, n) in depths.into_iter().enumerate() {
        let deep = OwnedKeyExpr::new(["a"; 1000][..n].join("/")).unwrap();
        assert_eq!(
            both.index.get(deep.as_key_expr()),
            Some(&(1_000 + i as u32))
        );
        both.remove(&deep);
        both.check(KeyExpr::new("**").unwrap());
    }
}

#[test]
fn realistic_routing_table() {
    let mut index = KeyExprIndex::new();
    let subs = [
        "robot/*/sensor/**",
        "robot/7/sensor/lidar",
        "robot/**/status",
        "robot/7/cam$*/raw",
        "@/router/**",
        "**",
    ];
    for (i, s) in subs.iter().enumerate() {
        index.insert(KeyExpr::new(s).unwrap(), i);
    }
    let hits = |q: &str| {
        let mut v: Vec<usize> = index
            .intersecting(KeyExpr::new(q).unwrap())
            .into_iter()
            .map(|(_, v)| *v)
            .collect();
        v.sort();
        v
    };
    assert_eq!(hits("robot/7/sensor/lidar"), [0, 1, 5]);
    assert_eq!(hits("robot/7/camfront/raw"), [3, 5]);
    assert_eq!(hits("robot/a/b/status"), [2, 5]);
    assert_eq!(hits("@/router/x"), [4]);
    assert_eq!(hits("robot/*/sensor"), [0, 5]);
    let mut covered: Vec<usize> = index
        .included_by(KeyExpr::new("robot/**").unwrap())
        .into_iter()
        .map(|(_, v)| *v)
        .collect();
    covered.sort();
    assert_eq!(covered, [0, 1, 2, 3]);
    let mut covering: Vec<usize> = index
        .including(KeyExpr::new("robot/7/sensor/lidar").unwrap())
        .into_iter()
        .map(|(_, v)| *v)
        .collect();
    covering.sort();
    assert_eq!(covering, [0, 1, 5]);
}
