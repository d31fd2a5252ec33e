//! The session's modules use each other without circles: each module of
//! `src/session/` may use the ones below it, never one that uses it back (directly or
//! through others). Items of `session/mod.rs` itself (the session and its state) are
//! what every module builds on and are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The session modules each module names through `super::…` or `crate::session::…`.
fn uses() -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/session");
    // (module, file, how the file names the session's modules: `super::` from a file of
    // `session/` or a `mod.rs` one level down, `super::super::` from the other files
    // one level down, whose `super::` is their own module).
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let module = path.file_name().unwrap().to_string_lossy().into_owned();
            for inner in std::fs::read_dir(&path).unwrap() {
                let inner = inner.unwrap().path();
                let up = if inner.file_name().is_some_and(|n| n == "mod.rs") {
                    "super::"
                } else {
                    "super::super::"
                };
                files.push((module.clone(), inner, up));
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let module = path.file_stem().unwrap().to_string_lossy().into_owned();
            files.push((module, path, "super::"));
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|(m, _, _)| m.clone()).collect();
    let mut uses: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, path, up) in &files {
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let named = uses.entry(module.clone()).or_default();
        let braced = format!("use {up}{{");
        for prefix in [*up, "crate::session::", braced.as_str()] {
            for (at, _) in text.match_indices(prefix) {
                // `super::x` inside `super::super::x` is not this file's own `super::`.
                if *up == "super::" && text[..at].ends_with("super::") {
                    continue;
                }
                let rest = &text[at + prefix.len()..];
                let names: Vec<&str> = if prefix.ends_with('{') {
                    let list = &rest[..rest.find('}').unwrap_or(0)];
                    list.split(',').map(str::trim).collect()
                } else {
                    vec![rest]
                };
                for name in names {
                    let word: String = name
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if modules.contains(&word) && &word != module {
                        named.insert(word);
                    }
                }
            }
        }
    }
    uses
}

/// A circle of uses through `from`, if there is one.
fn circle_through(
    uses: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    for next in uses.get(path.last().unwrap()).into_iter().flatten() {
        if next == from {
            let mut circle = path.clone();
            circle.push(next.clone());
            return Some(circle);
        }
        if path.contains(next) {
            continue;
        }
        path.push(next.clone());
        if let Some(c) = circle_through(uses, from, path) {
            return Some(c);
        }
        path.pop();
    }
    None
}

#[test]
fn session_modules_use_each_other_without_circles() {
    let uses = uses();
    assert!(uses.len() > 20, "the session's modules were found");
    for module in uses.keys() {
        let mut path = vec![module.clone()];
        if let Some(circle) = circle_through(&uses, module, &mut path) {
            panic!(
                "the session's modules use each other in a circle: {}",
                circle.join(" -> ")
            );
        }
    }
}
