//! Canonicalisation (spec section 13.2).
//!
//! The canonical form of a key expression is the unique string of its set of keys
//! that the protocol carries. It is reached by three rewrites:
//! runs of `$*$*` inside a chunk become one `$*`; a chunk made only of `$*` becomes
//! `*`; and in every run of consecutive `*`/`**` chunks that holds a `**`, the `*`
//! chunks come first and the `**` chunks collapse into one `**` at the end.

use alloc::string::String;

use crate::chunk::DOLLAR_STAR;
use crate::error::KeyExprError;
use crate::validate::{self, Mode};

/// Returns the canonical form of `s`, or why `s` cannot be made canonical.
///
/// Error offsets refer to `s`.
///
/// ```
/// use weft_keyexpr::canonize;
/// assert_eq!(canonize("a/**/**/b$*$*c").unwrap(), "a/**/b$*c");
/// assert_eq!(canonize("a/**/*/$*").unwrap(), "a/*/*/**");
/// assert!(canonize("a//b").is_err());
/// ```
pub fn canonize(s: &str) -> Result<String, KeyExprError> {
    validate::check(s, Mode::Canonicalisable)?;
    let out = rewrite(s.split('/'), s.len());
    debug_assert_eq!(validate::check(&out, Mode::Canonical), Ok(()));
    Ok(out)
}

/// Writes the canonical form of a sequence of chunks that passed the
/// [`Mode::Canonicalisable`] check (or are chunks of canonical key expressions).
pub(crate) fn rewrite<'a>(chunks: impl Iterator<Item = &'a str>, capacity: usize) -> String {
    let mut out = String::with_capacity(capacity);
    let mut stars = 0usize;
    let mut double_star = false;
    for chunk in chunks {
        if chunk == "**" {
            double_star = true;
        } else if chunk == "*" || is_dollar_star_run(chunk) {
            stars += 1;
        } else {
            flush_wild_run(&mut out, &mut stars, &mut double_star);
            separate(&mut out);
            push_collapsed(&mut out, chunk);
        }
    }
    flush_wild_run(&mut out, &mut stars, &mut double_star);
    out
}

/// `true` for `$*`, `$*$*`, ...: a chunk whose canonical form is `*`.
fn is_dollar_star_run(chunk: &str) -> bool {
    !chunk.is_empty() && chunk.len() % 2 == 0 && chunk.as_bytes().chunks(2).all(|p| p == b"$*")
}

/// Writes a pending run of wildcard chunks: the `*` chunks, then one `**` if any.
fn flush_wild_run(out: &mut String, stars: &mut usize, double_star: &mut bool) {
    for _ in 0..*stars {
        separate(out);
        out.push('*');
    }
    if *double_star {
        separate(out);
        out.push_str("**");
    }
    *stars = 0;
    *double_star = false;
}

/// Writes a chunk, collapsing each run of `$*$*...` into one `$*`.
fn push_collapsed(out: &mut String, chunk: &str) {
    let mut rest = chunk;
    while let Some(at) = rest.find(DOLLAR_STAR) {
        out.push_str(&rest[..at + DOLLAR_STAR.len()]);
        rest = &rest[at + DOLLAR_STAR.len()..];
        while let Some(after) = rest.strip_prefix(DOLLAR_STAR) {
            rest = after;
        }
    }
    out.push_str(rest);
}

fn separate(out: &mut String) {
    if !out.is_empty() {
        out.push('/');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites() {
        let cases = [
            ("a/b", "a/b"),
            ("**/**", "**"),
            ("**/*", "*/**"),
            ("**/*/**/*/a/**/**", "*/*/**/a/**"),
            ("$*$*$*/x$*$*$*y$*", "*/x$*y$*"),
            ("$*$*a", "$*a"),
        ];
        for (input, expected) in cases {
            assert_eq!(canonize(input).as_deref(), Ok(expected), "{input}");
        }
    }

    #[test]
    fn errors_point_into_the_input() {
        assert_eq!(
            canonize("$*$*/a*"),
            Err(KeyExprError::StrayStar { offset: 6 })
        );
    }
}
