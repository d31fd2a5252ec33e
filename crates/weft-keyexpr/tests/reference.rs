//! Randomized checks of the optimised algorithms against a direct, recursive
//! transcription of the spec's rules (13.3, 13.4), and robustness on arbitrary
//! strings.

mod support;

use support::{key_expr, variant_of, Rng};
use weft_keyexpr::{canonize, includes, intersects, KeyExpr};

fn verbatim(chunk: &str) -> bool {
    chunk.starts_with('@')
}

/// A chunk as a sequence of symbols: `None` for `$*`, `Some(c)` for a character.
fn symbols(chunk: &str) -> Vec<Option<char>> {
    let mut out = Vec::new();
    let mut chars = chunk.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek() == Some(&'*') {
            chars.next();
            out.push(None);
        } else {
            out.push(Some(c));
        }
    }
    out
}

/// Do two `$*` patterns match a common string? Plain exhaustive recursion.
fn patterns_meet(p: &[Option<char>], q: &[Option<char>]) -> bool {
    match (p.first(), q.first()) {
        (None, None) => true,
        (Some(None), _) => {
            patterns_meet(&p[1..], q) || (!q.is_empty() && patterns_meet(p, &q[1..]))
        }
        (_, Some(None)) => patterns_meet(q, p),
        (Some(Some(x)), Some(Some(y))) => x == y && patterns_meet(&p[1..], &q[1..]),
        _ => false,
    }
}

/// Does `text` (taken literally, `$` and `*` included) match the pattern `p`?
fn pattern_matches(p: &[Option<char>], text: &[char]) -> bool {
    match p.first() {
        None => text.is_empty(),
        Some(None) => (0..=text.len()).any(|skip| pattern_matches(&p[1..], &text[skip..])),
        Some(Some(c)) => text.first() == Some(c) && pattern_matches(&p[1..], &text[1..]),
    }
}

fn ref_chunk_intersects(x: &str, y: &str) -> bool {
    x == y
        || (!verbatim(x)
            && !verbatim(y)
            && (x == "*" || y == "*" || patterns_meet(&symbols(x), &symbols(y))))
}

/// Spec 13.3, line by line.
fn ref_intersects(a: &[&str], b: &[&str]) -> bool {
    if a.is_empty() || b.is_empty() {
        return (a.is_empty() || a == ["**"]) && (b.is_empty() || b == ["**"]);
    }
    if a[0] == "**" {
        if a.len() == 1 {
            return !b.iter().any(|c| verbatim(c));
        }
        return (!verbatim(b[0]) && ref_intersects(a, &b[1..])) || ref_intersects(&a[1..], b);
    }
    if b[0] == "**" {
        return ref_intersects(b, a);
    }
    ref_chunk_intersects(a[0], b[0]) && ref_intersects(&a[1..], &b[1..])
}

fn ref_chunk_includes(l: &str, r: &str) -> bool {
    if l == r {
        return true;
    }
    if verbatim(l) || verbatim(r) {
        return false;
    }
    let text: Vec<char> = r.chars().collect();
    l == "*" || (l.contains("$*") && pattern_matches(&symbols(l), &text))
}

/// Spec 13.4: left to right, `**` absorbing any non-verbatim chunks.
fn ref_includes(l: &[&str], r: &[&str]) -> bool {
    let Some((&first, rest)) = l.split_first() else {
        return r.is_empty();
    };
    if first == "**" {
        return ref_includes(rest, r)
            || (!r.is_empty() && !verbatim(r[0]) && ref_includes(l, &r[1..]));
    }
    !r.is_empty() && r[0] != "**" && ref_chunk_includes(first, r[0]) && ref_includes(rest, &r[1..])
}

fn chunks(ke: KeyExpr<'_>) -> Vec<&str> {
    ke.chunks().collect()
}

#[test]
fn relations_match_the_reference() {
    let mut rng = Rng::new(0x5151);
    let mut related = [0usize; 2];
    for _ in 0..20_000 {
        let a = key_expr(&mut rng, 6);
        let b = if rng.chance(70) {
            variant_of(&mut rng, &a)
        } else {
            key_expr(&mut rng, 6)
        };
        let (ka, kb) = (a.as_key_expr(), b.as_key_expr());
        let (ca, cb) = (chunks(ka), chunks(kb));
        let meets = intersects(ka, kb);
        assert_eq!(meets, ref_intersects(&ca, &cb), "intersects({a}, {b})");
        assert_eq!(
            meets,
            intersects(kb, ka),
            "intersection is symmetric: {a}, {b}"
        );
        let inc = includes(ka, kb);
        assert_eq!(inc, ref_includes(&ca, &cb), "includes({a}, {b})");
        assert!(!inc || meets, "{a} includes {b} but does not intersect it");
        related[0] += usize::from(meets);
        related[1] += usize::from(inc);
    }
    // The generator must exercise both answers of both relations.
    assert!(related[0] > 4_000 && related[0] < 16_000, "{related:?}");
    println!(
        "intersecting pairs: {}, including pairs: {}",
        related[0], related[1]
    );
    assert!(related[1] > 1_000, "{related:?}");
}

#[test]
fn every_expression_relates_to_itself_and_to_a_catch_all() {
    let mut rng = Rng::new(99);
    let all = KeyExpr::new("**").unwrap();
    for _ in 0..5_000 {
        let a = key_expr(&mut rng, 8);
        let ka = a.as_key_expr();
        assert!(intersects(ka, ka) && includes(ka, ka), "{a}");
        let has_verbatim = ka.chunks().any(verbatim);
        assert_eq!(intersects(all, ka), !has_verbatim, "{a}");
        assert_eq!(includes(all, ka), !has_verbatim, "{a}");
    }
}

#[test]
fn pathological_double_stars_are_fast() {
    // Exponential for naive recursion; the row-by-row algorithm is quadratic.
    let left = ["**/a"; 60].join("/") + "/**/b";
    let right = ["a"; 200].join("/") + "/c";
    let (l, r) = (KeyExpr::new(&left).unwrap(), KeyExpr::new(&right).unwrap());
    let start = std::time::Instant::now();
    assert!(!intersects(l, r));
    assert!(!includes(l, r));
    let right_b = ["a"; 200].join("/") + "/b";
    assert!(intersects(l, KeyExpr::new(&right_b).unwrap()));
    assert!(includes(l, KeyExpr::new(&right_b).unwrap()));
    // Within the limit of 256 chunks.
    let both = ["a/**"; 127].join("/") + "/c";
    let other = ["**/b"; 128].join("/");
    assert!(!intersects(
        KeyExpr::new(&both).unwrap(),
        KeyExpr::new(&other).unwrap()
    ));
    let pattern = ["$*a"; 500].concat() + "$*b";
    // Within the limit of 4096 bytes.
    let text = "a".repeat(4_000);
    assert!(!intersects(
        KeyExpr::new(&pattern).unwrap(),
        KeyExpr::new(&text).unwrap()
    ));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn arbitrary_strings_never_panic_and_canonical_forms_are_stable() {
    const PIECES: &[&str] = &[
        "a", "b", "/", "/", "*", "**", "$", "$*", "@", "#", "?", " ", "é", "\u{0}", "日",
    ];
    let mut rng = Rng::new(7);
    let mut accepted = 0;
    for _ in 0..50_000 {
        let n = rng.below(9);
        let s: String = (0..n).map(|_| *rng.pick(PIECES)).collect();
        let checked = KeyExpr::new(&s);
        match canonize(&s) {
            Ok(canonical) => {
                let k = KeyExpr::new(&canonical).expect("canonize output is canonical");
                assert_eq!(canonize(&canonical).as_deref(), Ok(canonical.as_str()));
                // Canonicalisation does not change the set of keys.
                assert!(includes(k, k) && intersects(k, k));
                if checked.is_ok() {
                    assert_eq!(canonical, s, "a canonical string is its own form");
                    accepted += 1;
                }
            }
            Err(e) => {
                assert!(checked.is_err(), "{s:?} valid but not canonicalisable: {e}");
                assert!(e.offset() <= s.len());
            }
        }
        if let Err(e) = checked {
            assert!(e.offset() <= s.len(), "{s:?}: {e}");
            assert!(!e.to_string().is_empty());
        }
    }
    assert!(accepted > 1_000, "only {accepted} valid strings generated");
}
