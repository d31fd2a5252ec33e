//! The error type of key-expression validation and canonicalisation.

/// Why a string is not a (canonical) key expression.
///
/// Every variant except [`Empty`](Self::Empty) carries the byte offset, in the
/// string that was checked, of the first offending character or chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum KeyExprError {
    /// The string is empty.
    #[error("a key expression cannot be empty")]
    Empty,
    /// The string is longer than [`MAX_KEY_EXPR_LEN`](crate::MAX_KEY_EXPR_LEN).
    #[error("a key expression of {len} bytes is over the limit of {max}")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// More chunks than [`MAX_KEY_EXPR_CHUNKS`](crate::MAX_KEY_EXPR_CHUNKS).
    #[error("the chunk at byte {offset} is over the limit of {max} chunks")]
    TooManyChunks {
        /// Byte offset of the first chunk over the limit.
        offset: usize,
        /// The limit.
        max: usize,
    },
    /// A chunk is empty: leading or trailing `/`, or `//`.
    #[error("empty chunk at byte {offset} (leading, trailing or doubled `/`)")]
    EmptyChunk {
        /// Byte offset where the empty chunk starts.
        offset: usize,
    },
    /// `#` or `?` appears in the string.
    #[error("forbidden character {} at byte {offset}", ch.escape_debug())]
    ForbiddenChar {
        /// The forbidden character.
        ch: char,
        /// Byte offset of the character.
        offset: usize,
    },
    /// A `*` that is neither a whole `*`/`**` chunk nor part of `$*`.
    #[error("`*` at byte {offset} must be a whole `*` or `**` chunk, or follow `$`")]
    StrayStar {
        /// Byte offset of the `*`.
        offset: usize,
    },
    /// A `$` that is not followed by `*`.
    #[error("`$` at byte {offset} is not followed by `*`")]
    StrayDollar {
        /// Byte offset of the `$`.
        offset: usize,
    },
    /// `$*` directly followed by `$` (as in `$*$*`), which is not canonical.
    #[error("`$` at byte {offset} directly follows `$*`")]
    DollarAfterDollarStar {
        /// Byte offset of the second `$`.
        offset: usize,
    },
    /// A chunk that is only `$*`, whose canonical form is `*`.
    #[error("chunk at byte {offset} is a lone `$*`; its canonical form is `*`")]
    LoneDollarStar {
        /// Byte offset of the chunk.
        offset: usize,
    },
    /// A `*` chunk right after a `**` chunk; the canonical form is `*/**`.
    #[error("`*` chunk at byte {offset} follows `**`; the canonical form is `*/**`")]
    StarAfterDoubleStar {
        /// Byte offset of the `*` chunk.
        offset: usize,
    },
    /// A `**` chunk right after another `**` chunk; the canonical form is a single `**`.
    #[error("`**` chunk at byte {offset} follows `**`; the canonical form is a single `**`")]
    DoubleStarAfterDoubleStar {
        /// Byte offset of the second `**` chunk.
        offset: usize,
    },
}

impl KeyExprError {
    /// Byte offset of the problem in the checked string (0 for [`Empty`](Self::Empty), the
    /// limit for [`TooLong`](Self::TooLong)).
    pub fn offset(&self) -> usize {
        match *self {
            Self::Empty => 0,
            Self::TooLong { max, .. } => max,
            Self::TooManyChunks { offset, .. }
            | Self::EmptyChunk { offset }
            | Self::ForbiddenChar { offset, .. }
            | Self::StrayStar { offset }
            | Self::StrayDollar { offset }
            | Self::DollarAfterDollarStar { offset }
            | Self::LoneDollarStar { offset }
            | Self::StarAfterDoubleStar { offset }
            | Self::DoubleStarAfterDoubleStar { offset } => offset,
        }
    }

    /// A short stable name for the kind of error, e.g. `"empty-chunk"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooLong { .. } => "too-long",
            Self::TooManyChunks { .. } => "too-many-chunks",
            Self::EmptyChunk { .. } => "empty-chunk",
            Self::ForbiddenChar { .. } => "forbidden-char",
            Self::StrayStar { .. } => "stray-star",
            Self::StrayDollar { .. } => "stray-dollar",
            Self::DollarAfterDollarStar { .. } => "dollar-after-dollar-star",
            Self::LoneDollarStar { .. } => "lone-dollar-star",
            Self::StarAfterDoubleStar { .. } => "star-after-double-star",
            Self::DoubleStarAfterDoubleStar { .. } => "double-star-after-double-star",
        }
    }
}
