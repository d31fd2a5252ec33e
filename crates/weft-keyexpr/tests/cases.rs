//! Runs the case table in `tests/cases.txt` against weft-keyexpr.
//!
//! The same file is checked against Eclipse Zenoh by
//! `tests/interop/keyexpr_oracle.py`, so both implementations agree on it.

use weft_keyexpr::{canonize, includes, intersects, KeyExpr, KeyExprError, OwnedKeyExpr};

const CASES: &str = include_str!("cases.txt");

/// Undoes the escapes of the case file: `\s`, `\t`, `\e`, `\\`.
fn unescape(field: &str) -> String {
    if field == "\\e" {
        return String::new();
    }
    let mut out = String::new();
    let mut chars = field.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            other => panic!("bad escape \\{other:?} in {field:?}"),
        }
    }
    out
}

fn yes_no(field: &str) -> bool {
    match field {
        "yes" => true,
        "no" => false,
        other => panic!("expected yes or no, found {other:?}"),
    }
}

fn ke(s: &str) -> KeyExpr<'_> {
    KeyExpr::new(s).unwrap_or_else(|e| panic!("case uses an invalid key expression {s:?}: {e}"))
}

/// Checks one case; returns a description of the disagreement, if any.
fn check(kind: &str, fields: &[String]) -> Result<(), String> {
    match (kind, fields) {
        ("valid", [s]) => match KeyExpr::new(s) {
            Ok(k) if k.as_str() == s => Ok(()),
            Ok(_) => Err("changed the string".into()),
            Err(e) => Err(format!("rejected: {e}")),
        },
        ("invalid", [s, expected @ ..]) => match KeyExpr::new(s) {
            Ok(_) => Err("accepted".into()),
            Err(e) => check_error(&e, expected),
        },
        ("canon" | "canon-divergent", [input, expected]) => {
            let got = canonize(input);
            match (expected.as_str(), &got) {
                ("!", Err(_)) => Ok(()),
                (want, Ok(out)) if out == want => {
                    // The output is canonical, and canonicalising it changes nothing.
                    KeyExpr::new(out).map_err(|e| format!("output {out:?} invalid: {e}"))?;
                    match canonize(out) {
                        Ok(again) if again == *out => Ok(()),
                        other => Err(format!("not idempotent: {other:?}")),
                    }
                }
                _ => Err(format!("got {got:?}")),
            }
        }
        ("intersects", [a, b, expected]) => {
            let want = yes_no(expected);
            let (ab, ba) = (intersects(ke(a), ke(b)), intersects(ke(b), ke(a)));
            if ab != want || ba != want {
                return Err(format!("intersects(a, b) = {ab}, intersects(b, a) = {ba}"));
            }
            // Inclusion either way implies intersection.
            if !want && (includes(ke(a), ke(b)) || includes(ke(b), ke(a))) {
                return Err("disjoint but one includes the other".into());
            }
            Ok(())
        }
        ("includes", [a, b, expected]) => {
            let got = includes(ke(a), ke(b));
            if got != yes_no(expected) {
                return Err(format!("got {got}"));
            }
            if got && !intersects(ke(a), ke(b)) {
                return Err("includes but does not intersect".into());
            }
            Ok(())
        }
        _ => Err(format!("malformed case: {} field(s)", fields.len())),
    }
}

/// Compares an error with an optional `kind[@offset]` field.
fn check_error(e: &KeyExprError, expected: &[String]) -> Result<(), String> {
    let [spec] = expected else {
        return if expected.is_empty() {
            Ok(())
        } else {
            Err("too many fields".into())
        };
    };
    let (kind, offset) = match spec.split_once('@') {
        Some((kind, offset)) => (
            kind,
            Some(offset.parse::<usize>().map_err(|e| e.to_string())?),
        ),
        None => (spec.as_str(), None),
    };
    if e.kind() != kind || offset.is_some_and(|o| o != e.offset()) {
        return Err(format!("wrong error: {e:?} ({}@{})", e.kind(), e.offset()));
    }
    Ok(())
}

#[test]
fn case_table() {
    let (total, counts) = run_table(CASES);
    assert!(total >= 200, "the table shrank to {total} cases");
    for kind in ["valid", "invalid", "canon", "intersects", "includes"] {
        assert!(
            counts.get(kind).is_some_and(|&n| n >= 10),
            "too few {kind} cases"
        );
    }
}

/// Runs another table in the same format, named by `WEFT_KEYEXPR_CASES`, e.g. a
/// large one from `keyexpr_oracle.py --generate`; says it is skipped when unset.
#[test]
fn extra_case_table() {
    let Some(path) = std::env::var_os("WEFT_KEYEXPR_CASES") else {
        eprintln!("skipped: WEFT_KEYEXPR_CASES does not name an extra table of cases");
        return;
    };
    let text = std::fs::read_to_string(&path).expect("WEFT_KEYEXPR_CASES is readable");
    run_table(&text);
}

/// Checks every case of a table, panicking with the list of failures; returns
/// the number of cases and their count per kind.
fn run_table(table: &str) -> (usize, std::collections::BTreeMap<&str, usize>) {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    let mut failures = Vec::new();
    for (number, line) in table.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let kind = words.next().unwrap_or_default();
        let fields: Vec<String> = words.map(unescape).collect();
        *counts.entry(kind).or_default() += 1;
        if let Err(why) = check(kind, &fields) {
            failures.push(format!("line {}: {line}\n    {why}", number + 1));
        }
    }
    let total: usize = counts.values().sum();
    println!("{total} cases: {counts:?}");
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    (total, counts)
}

#[test]
fn owned_and_borrowed_agree_with_the_table() {
    // Every `valid` expression round-trips through the owned type and `canonize`.
    for line in CASES.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("valid") {
            continue;
        }
        let s = unescape(words.next().unwrap_or_default());
        let owned: OwnedKeyExpr = s.parse().unwrap();
        assert_eq!(owned.as_key_expr(), ke(&s));
        assert_eq!(canonize(&s).as_deref(), Ok(s.as_str()));
        assert_eq!(OwnedKeyExpr::autocanonize(&s).as_ref(), Ok(&owned));
    }
}

#[test]
fn key_expressions_over_the_size_limits_are_refused_with_the_limit() {
    use weft_keyexpr::{KeyExprError, MAX_KEY_EXPR_CHUNKS, MAX_KEY_EXPR_LEN};
    let long = "a".repeat(MAX_KEY_EXPR_LEN + 1);
    assert_eq!(
        KeyExpr::new(&long).unwrap_err(),
        KeyExprError::TooLong {
            len: MAX_KEY_EXPR_LEN + 1,
            max: MAX_KEY_EXPR_LEN
        }
    );
    assert!(KeyExpr::new(&long[1..]).is_ok());
    let chunks = vec!["a"; MAX_KEY_EXPR_CHUNKS].join("/");
    assert!(KeyExpr::new(&chunks).is_ok());
    let over = format!("**/{chunks}");
    assert_eq!(
        KeyExpr::new(&over).unwrap_err(),
        KeyExprError::TooManyChunks {
            offset: over.len() - 1,
            max: MAX_KEY_EXPR_CHUNKS
        }
    );
}
