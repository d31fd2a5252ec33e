//! Chunk-level rules: what kind a chunk is, and whether two chunks intersect
//! or one includes the other.
//!
//! All functions here take chunks of valid canonical key expressions; they never
//! panic on other input but their answers are then meaningless.

/// The sub-chunk wildcard.
pub(crate) const DOLLAR_STAR: &str = "$*";

/// What a chunk of a canonical key expression is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChunkKind {
    /// Plain text: matches only itself.
    Literal,
    /// Starts with `@`: matches only an identical chunk, never a wildcard.
    Verbatim,
    /// `*`: any one non-verbatim chunk.
    Star,
    /// `**`: any number (including zero) of non-verbatim chunks.
    DoubleStar,
    /// Contains `$*`: a pattern within one non-verbatim chunk.
    Pattern,
}

impl ChunkKind {
    /// Classifies a chunk of a canonical key expression.
    pub(crate) fn of(chunk: &str) -> Self {
        match chunk.as_bytes() {
            [b'@', ..] => Self::Verbatim,
            b"*" => Self::Star,
            b"**" => Self::DoubleStar,
            bytes if bytes.contains(&b'$') => Self::Pattern,
            _ => Self::Literal,
        }
    }
}

/// `true` if the chunk starts with `@`.
pub(crate) fn is_verbatim(chunk: &str) -> bool {
    chunk.as_bytes().first() == Some(&b'@')
}

/// `true` if some chunk matches both `x` and `y` (neither may be `**`).
pub(crate) fn chunk_intersects(x: &str, y: &str) -> bool {
    if x == y {
        return true;
    }
    if is_verbatim(x) || is_verbatim(y) {
        return false;
    }
    if x == "*" || y == "*" {
        return true;
    }
    match (x.contains('$'), y.contains('$')) {
        (false, false) => false,
        (true, false) => pattern_matches(x, y),
        (false, true) => pattern_matches(y, x),
        (true, true) => patterns_intersect(x, y),
    }
}

/// `true` if `left` includes `right`: every chunk matched by `right` is matched by
/// `left` (neither may be `**`).
///
/// A `$*` inside `right` is taken as two plain characters, which `left`'s literal
/// pieces cannot match but its `$*` can absorb.
pub(crate) fn chunk_includes(left: &str, right: &str) -> bool {
    if left == right {
        return true;
    }
    if is_verbatim(left) || is_verbatim(right) {
        return false;
    }
    if left == "*" {
        return true;
    }
    left.contains('$') && pattern_matches(left, right)
}

/// `true` if `text` matches `pattern`, where each `$*` of `pattern` stands for any
/// (possibly empty) sequence of characters. Linear in practice, no recursion.
pub(crate) fn pattern_matches(pattern: &str, text: &str) -> bool {
    let Some((first, rest)) = pattern.split_once(DOLLAR_STAR) else {
        return pattern == text;
    };
    let (middle, last) = rest.rsplit_once(DOLLAR_STAR).unwrap_or(("", rest));
    if text.len() < first.len() + last.len() || !text.starts_with(first) || !text.ends_with(last) {
        return false;
    }
    // Both `first` and `last` are char-aligned in `text`, so this slice is valid.
    let mut window = &text[first.len()..text.len() - last.len()];
    for needle in middle.split(DOLLAR_STAR) {
        match window.find(needle) {
            Some(at) => window = &window[at + needle.len()..],
            None => return false,
        }
    }
    true
}

/// `true` if two `$*` patterns (each with at least one `$*`) match a common string.
///
/// That is the case exactly when the literal text before the first `$*` of one is
/// a prefix of the other's, and the text after the last `$*` of one is a suffix of
/// the other's: a common string is then the longer prefix, every middle piece of
/// both patterns, and the longer suffix, in that order.
fn patterns_intersect(x: &str, y: &str) -> bool {
    let (x_first, x_last) = outer_pieces(x);
    let (y_first, y_last) = outer_pieces(y);
    (x_first.starts_with(y_first) || y_first.starts_with(x_first))
        && (x_last.ends_with(y_last) || y_last.ends_with(x_last))
}

/// The text before the first and after the last `$*` of a pattern.
fn outer_pieces(pattern: &str) -> (&str, &str) {
    let first = pattern.split(DOLLAR_STAR).next().unwrap_or("");
    let last = pattern.rsplit(DOLLAR_STAR).next().unwrap_or("");
    (first, last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(ChunkKind::of("a"), ChunkKind::Literal);
        assert_eq!(ChunkKind::of("@a$*"), ChunkKind::Verbatim);
        assert_eq!(ChunkKind::of("*"), ChunkKind::Star);
        assert_eq!(ChunkKind::of("**"), ChunkKind::DoubleStar);
        assert_eq!(ChunkKind::of("a$*"), ChunkKind::Pattern);
    }

    #[test]
    fn pattern_matching() {
        assert!(pattern_matches("a$*", "a"));
        assert!(pattern_matches("a$*b", "ab"));
        assert!(!pattern_matches("ab$*ba", "aba"));
        assert!(pattern_matches("$*x$*y$*", "axbxcy"));
        assert!(!pattern_matches("$*y$*x$*", "axbxcy0"));
        assert!(pattern_matches("é$*ü", "éaü"));
        assert!(!pattern_matches("é$*ü", "éa"));
    }

    #[test]
    fn pattern_intersection() {
        assert!(chunk_intersects("a$*d", "ab$*"));
        assert!(!chunk_intersects("c$*", "abc$*"));
        assert!(chunk_intersects("$*c", "$*abc"));
        assert!(!chunk_intersects("@a$*", "@ab"));
        assert!(chunk_intersects("@a$*", "@a$*"));
    }

    #[test]
    fn inclusion() {
        assert!(chunk_includes("a$*", "ab$*"));
        assert!(!chunk_includes("a$*", "*"));
        assert!(chunk_includes("*", "a$*"));
        assert!(!chunk_includes("*", "@a"));
        assert!(!chunk_includes("a$*b$*c", "a$*c"));
    }
}
