//! The validated key-expression types: borrowed [`KeyExpr`] and owned
//! [`OwnedKeyExpr`].

use alloc::borrow::ToOwned;
use alloc::string::String;
use core::borrow::Borrow;
use core::fmt;
use core::str::FromStr;

use crate::canon;
use crate::error::KeyExprError;
use crate::validate::{self, Mode};

/// A borrowed key expression, known to be valid and canonical.
///
/// It can only be built by [`KeyExpr::new`] (or `TryFrom<&str>`), which checks
/// the string, or borrowed from an [`OwnedKeyExpr`]. Because canonical form is
/// unique, two key expressions denote the same set of keys exactly when their
/// strings are equal.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyExpr<'a>(&'a str);

impl<'a> KeyExpr<'a> {
    /// Checks that `s` is a valid key expression in canonical form.
    ///
    /// Use [`canonize`](crate::canonize) or [`OwnedKeyExpr::autocanonize`] first
    /// for strings that may not be canonical.
    pub fn new(s: &'a str) -> Result<Self, KeyExprError> {
        validate::check(s, Mode::Canonical)?;
        Ok(Self(s))
    }

    /// Wraps a string already known to be valid and canonical.
    pub(crate) fn from_checked(s: &'a str) -> Self {
        debug_assert_eq!(validate::check(s, Mode::Canonical), Ok(()));
        Self(s)
    }

    /// The key expression as a string.
    pub fn as_str(self) -> &'a str {
        self.0
    }

    /// `true` if the expression contains a wildcard (`*`, `**` or `$*`), i.e. it
    /// may denote more than one key.
    pub fn is_wild(self) -> bool {
        self.0.contains('*')
    }

    /// The chunks (the `/`-separated parts), left to right.
    pub fn chunks(self) -> Chunks<'a> {
        Chunks(self.0.split('/'))
    }

    /// The longest prefix made of whole chunks without any wildcard, or `None`
    /// when the first chunk is already wild.
    ///
    /// ```
    /// use weft_keyexpr::KeyExpr;
    /// let ke = KeyExpr::new("demo/room$*/**").unwrap();
    /// assert_eq!(ke.nonwild_prefix().unwrap().as_str(), "demo");
    /// assert!(KeyExpr::new("*/a").unwrap().nonwild_prefix().is_none());
    /// ```
    pub fn nonwild_prefix(self) -> Option<Self> {
        let Some(star) = self.0.find('*') else {
            return Some(self);
        };
        let slash = self.0[..star].rfind('/')?;
        Some(Self::from_checked(&self.0[..slash]))
    }

    /// `true` if at least one key matches both `self` and `other` (spec 13.3).
    pub fn intersects(self, other: KeyExpr<'_>) -> bool {
        crate::intersect::intersects(self, other)
    }

    /// `true` if every key matching `other` matches `self`, as Zenoh decides it
    /// (spec 13.4).
    pub fn includes(self, other: KeyExpr<'_>) -> bool {
        crate::include::includes(self, other)
    }

    /// Joins `self` and `other` with a `/` and canonicalises the result
    /// (e.g. `a/**` joined with `*/b` gives `a/*/**/b`).
    pub fn join(self, other: KeyExpr<'_>) -> OwnedKeyExpr {
        let capacity = self.0.len() + 1 + other.0.len();
        let joined = canon::rewrite(self.chunks().chain(other.chunks()), capacity);
        OwnedKeyExpr::from_checked(joined)
    }

    /// Copies the expression into an [`OwnedKeyExpr`].
    pub fn to_owned_key_expr(self) -> OwnedKeyExpr {
        OwnedKeyExpr::from_checked(self.0.to_owned())
    }
}

impl<'a> TryFrom<&'a str> for KeyExpr<'a> {
    type Error = KeyExprError;

    fn try_from(s: &'a str) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl AsRef<str> for KeyExpr<'_> {
    fn as_ref(&self) -> &str {
        self.0
    }
}

impl PartialEq<str> for KeyExpr<'_> {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for KeyExpr<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for KeyExpr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl fmt::Debug for KeyExpr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyExpr({:?})", self.0)
    }
}

/// An owned key expression, known to be valid and canonical.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnedKeyExpr(String);

impl OwnedKeyExpr {
    /// Checks that `s` is a valid key expression in canonical form.
    pub fn new(s: impl Into<String>) -> Result<Self, KeyExprError> {
        let s = s.into();
        validate::check(&s, Mode::Canonical)?;
        Ok(Self(s))
    }

    /// Canonicalises `s`, then checks it (see [`canonize`](crate::canonize)).
    pub fn autocanonize(s: &str) -> Result<Self, KeyExprError> {
        canon::canonize(s).map(Self)
    }

    /// Wraps a string already known to be valid and canonical.
    pub(crate) fn from_checked(s: String) -> Self {
        debug_assert_eq!(validate::check(&s, Mode::Canonical), Ok(()));
        Self(s)
    }

    /// Borrows the expression as a [`KeyExpr`].
    pub fn as_key_expr(&self) -> KeyExpr<'_> {
        KeyExpr(&self.0)
    }

    /// The key expression as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Gives back the inner string.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl TryFrom<String> for OwnedKeyExpr {
    type Error = KeyExprError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        Self::new(s)
    }
}

impl TryFrom<&str> for OwnedKeyExpr {
    type Error = KeyExprError;

    fn try_from(s: &str) -> Result<Self, Self::Error> {
        KeyExpr::new(s).map(KeyExpr::to_owned_key_expr)
    }
}

impl FromStr for OwnedKeyExpr {
    type Err = KeyExprError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::try_from(s)
    }
}

impl From<KeyExpr<'_>> for OwnedKeyExpr {
    fn from(ke: KeyExpr<'_>) -> Self {
        ke.to_owned_key_expr()
    }
}

impl From<OwnedKeyExpr> for String {
    fn from(ke: OwnedKeyExpr) -> Self {
        ke.0
    }
}

impl AsRef<str> for OwnedKeyExpr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for OwnedKeyExpr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for OwnedKeyExpr {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for OwnedKeyExpr {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<KeyExpr<'_>> for OwnedKeyExpr {
    fn eq(&self, other: &KeyExpr<'_>) -> bool {
        self.0 == other.0
    }
}

impl fmt::Display for OwnedKeyExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for OwnedKeyExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OwnedKeyExpr({:?})", self.0)
    }
}

/// Iterator over the chunks of a [`KeyExpr`], from [`KeyExpr::chunks`].
#[derive(Debug, Clone)]
pub struct Chunks<'a>(core::str::Split<'a, char>);

impl<'a> Iterator for Chunks<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.0.next()
    }
}

impl<'a> DoubleEndedIterator for Chunks<'a> {
    fn next_back(&mut self) -> Option<&'a str> {
        self.0.next_back()
    }
}

impl core::iter::FusedIterator for Chunks<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn chunks_and_prefix() {
        let ke = KeyExpr::new("a/b$*/@c").unwrap();
        assert_eq!(ke.chunks().collect::<Vec<_>>(), ["a", "b$*", "@c"]);
        assert_eq!(ke.chunks().next_back(), Some("@c"));
        assert_eq!(ke.nonwild_prefix().unwrap(), "a");
        let plain = KeyExpr::new("a/b").unwrap();
        assert_eq!(plain.nonwild_prefix(), Some(plain));
        assert!(!plain.is_wild());
        assert!(ke.is_wild());
    }

    #[test]
    fn join_canonicalises() {
        let a = KeyExpr::new("a/**").unwrap();
        assert_eq!(a.join(KeyExpr::new("**/b").unwrap()), "a/**/b");
        assert_eq!(a.join(KeyExpr::new("*").unwrap()), "a/*/**");
        assert_eq!(a.join(KeyExpr::new("*/**/c").unwrap()), "a/*/**/c");
    }

    #[test]
    fn owned_round_trip() {
        let owned: OwnedKeyExpr = "x/*/y".parse().unwrap();
        assert_eq!(owned.as_key_expr().as_str(), "x/*/y");
        assert_eq!(
            OwnedKeyExpr::autocanonize("x/**/*").unwrap().as_str(),
            "x/*/**"
        );
        assert!(OwnedKeyExpr::new("x/**/*").is_err());
    }
}
