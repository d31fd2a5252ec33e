//! Validation of key expressions (spec section 13.1) and of their canonical form
//! (section 13.2).

use crate::error::KeyExprError;

/// How strict a check is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The string must be a valid key expression in canonical form.
    Canonical,
    /// The string must become valid once canonicalised: runs of `$*$*`, lone `$*`
    /// chunks and any sequence of `*`/`**` chunks are accepted.
    Canonicalisable,
}

/// The longest key expression accepted, in bytes. Real keys are far shorter (a ROS 2
/// liveliness token is a few hundred bytes); the bound keeps what one key costs to store
/// and to match bounded.
pub const MAX_KEY_EXPR_LEN: usize = 4096;

/// The most chunks a key expression may have. Matching two expressions with `**` costs
/// up to the product of their chunk counts; this keeps it to tens of thousands of chunk
/// comparisons however hostile the keys.
pub const MAX_KEY_EXPR_CHUNKS: usize = 256;

/// Checks `s`, returning the first problem found, scanning left to right.
pub(crate) fn check(s: &str, mode: Mode) -> Result<(), KeyExprError> {
    if s.is_empty() {
        return Err(KeyExprError::Empty);
    }
    if s.len() > MAX_KEY_EXPR_LEN {
        return Err(KeyExprError::TooLong {
            len: s.len(),
            max: MAX_KEY_EXPR_LEN,
        });
    }
    let mut offset = 0;
    let mut after_double_star = false;
    for (n, chunk) in s.split('/').enumerate() {
        if n == MAX_KEY_EXPR_CHUNKS {
            return Err(KeyExprError::TooManyChunks {
                offset,
                max: MAX_KEY_EXPR_CHUNKS,
            });
        }
        match chunk {
            "" => return Err(KeyExprError::EmptyChunk { offset }),
            "*" | "**" if after_double_star && mode == Mode::Canonical => {
                return Err(if chunk == "*" {
                    KeyExprError::StarAfterDoubleStar { offset }
                } else {
                    KeyExprError::DoubleStarAfterDoubleStar { offset }
                });
            }
            "*" | "**" => {}
            _ => check_chunk(chunk, offset, mode)?,
        }
        after_double_star = chunk == "**";
        offset += chunk.len() + 1;
    }
    Ok(())
}

/// Checks one chunk that is neither empty nor a whole `*`/`**` chunk.
fn check_chunk(chunk: &str, offset: usize, mode: Mode) -> Result<(), KeyExprError> {
    let bytes = chunk.as_bytes();
    let mut i = 0;
    let mut after_dollar_star = false;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'*' => return Err(KeyExprError::StrayStar { offset: offset + i }),
            b'$' if after_dollar_star && mode == Mode::Canonical => {
                return Err(KeyExprError::DollarAfterDollarStar { offset: offset + i });
            }
            b'$' if bytes.get(i + 1) != Some(&b'*') => {
                return Err(KeyExprError::StrayDollar { offset: offset + i });
            }
            b'$' => {
                after_dollar_star = true;
                i += 2;
                continue;
            }
            b'#' | b'?' => {
                return Err(KeyExprError::ForbiddenChar {
                    ch: char::from(byte),
                    offset: offset + i,
                });
            }
            _ => {}
        }
        after_dollar_star = false;
        i += 1;
    }
    if mode == Mode::Canonical && chunk == "$*" {
        return Err(KeyExprError::LoneDollarStar { offset });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(s: &str) -> Result<(), KeyExprError> {
        check(s, Mode::Canonical)
    }

    #[test]
    fn offsets_point_at_the_problem() {
        assert_eq!(
            canonical("a//b"),
            Err(KeyExprError::EmptyChunk { offset: 2 })
        );
        assert_eq!(
            canonical("ab/c*"),
            Err(KeyExprError::StrayStar { offset: 4 })
        );
        assert_eq!(
            canonical("a/$*"),
            Err(KeyExprError::LoneDollarStar { offset: 2 })
        );
        assert_eq!(
            canonical("x/**/*"),
            Err(KeyExprError::StarAfterDoubleStar { offset: 5 })
        );
        assert_eq!(
            canonical("a$*$*"),
            Err(KeyExprError::DollarAfterDollarStar { offset: 3 })
        );
    }

    #[test]
    fn lenient_mode_accepts_what_canonicalisation_fixes() {
        for s in ["a$*$*b", "$*", "$*$*/**/**/*", "**/*"] {
            assert_eq!(check(s, Mode::Canonicalisable), Ok(()), "{s}");
            assert!(canonical(s).is_err(), "{s}");
        }
    }
}
