//! The values of configuration keys: how each kind of value is read and checked
//! ([`Read`]), once per kind, and the two forms a key takes: [`Checked`] (one value) and
//! [`Setting`] (one value, or one per mode: `{ router: .., peer: .., client: .. }`).
//!
//! A value that does not pass is refused during deserialization; the refusal travels
//! through serde's error as text ([`Refusal::encode`]) and comes back out, with the key's
//! path, as a [`ConfigError`] ([`Refusal::decode`]).

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use weft_proto::core::WhatAmI;

use super::ConfigError;

/// Why a value was refused (the key's path is added when it comes out of serde).
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(super) enum Refusal {
    /// Not a value of the key's kind; `value` is the value as written, or `(secret)`.
    Invalid {
        /// The value as written (or `(secret)`).
        value: String,
        /// What is accepted.
        expected: String,
    },
    /// An endpoint that does not parse.
    Endpoint {
        /// What is wrong with it.
        reason: String,
    },
    /// A file named by the key that cannot be used.
    File {
        /// The path, as written.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// A setting that asks for something weft does not do.
    Security {
        /// The value as written.
        value: String,
        /// What the setting asks for.
        reason: String,
    },
}

/// What begins an encoded refusal: no message of serde's own begins so.
const MARK: char = '\u{0}';

impl Refusal {
    /// `value` is not of the kind that `expected` describes.
    pub(super) fn invalid(value: &Value, expected: &str) -> Self {
        Self::Invalid {
            value: value.to_string(),
            expected: expected.to_owned(),
        }
    }

    /// As text, for serde's error.
    fn encode(&self) -> String {
        format!("{MARK}{}", serde_json::to_string(self).unwrap_or_default())
    }

    /// The refusal a serde error message carries, if it carries one.
    pub(super) fn decode(message: &str) -> Option<Self> {
        serde_json::from_str(message.strip_prefix(MARK)?).ok()
    }

    /// The configuration error for the key `key`.
    pub(super) fn at(self, key: String) -> ConfigError {
        match self {
            Self::Invalid { value, expected } => ConfigError::InvalidValue {
                key,
                value,
                expected,
            },
            Self::Endpoint { reason } => ConfigError::InvalidEndpoint { key, reason },
            Self::File { path, reason } => ConfigError::InvalidFile { key, path, reason },
            Self::Security { value, reason } => {
                ConfigError::UnsupportedSecurity { key, value, reason }
            }
        }
    }
}

/// A kind of value: how it is read from the document, and checked.
pub(super) trait Read: Sized {
    /// The value `v`, or why it is refused.
    fn read(v: &Value) -> Result<Self, Refusal>;
}

/// Deserializes a `T` by [`Read`], its refusal carried in the error.
fn read<'de, D: Deserializer<'de>, T: Read>(v: &Value) -> Result<T, D::Error> {
    T::read(v).map_err(|r| D::Error::custom(r.encode()))
}

/// A key that takes one value of kind `T`.
#[derive(Debug)]
pub(super) struct Checked<T>(pub(super) T);

impl<'de, T: Read> Deserialize<'de> for Checked<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        read::<D, T>(&v).map(Self)
    }
}

/// A key that takes a value of kind `T`, or one per mode; absent by default.
#[derive(Debug, Default)]
pub(super) enum Setting<T> {
    /// Not in the document.
    #[default]
    Unset,
    /// One value for every mode.
    All(T),
    /// A value per mode (router, peer, client), each optional.
    PerMode([Option<T>; 3]),
}

/// The place of `mode` in a per-mode value.
fn mode_index(mode: WhatAmI) -> usize {
    match mode {
        WhatAmI::Router => 0,
        WhatAmI::Peer => 1,
        WhatAmI::Client => 2,
    }
}

impl<T> Setting<T> {
    /// The value for a node of `mode`, if the document gives one.
    pub(super) fn get(&self, mode: WhatAmI) -> Option<&T> {
        match self {
            Self::Unset => None,
            Self::All(v) => Some(v),
            Self::PerMode(values) => values[mode_index(mode)].as_ref(),
        }
    }
}

/// Whether `v` is a per-mode value: an object whose keys are all modes.
pub(super) fn is_per_mode(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.keys()
            .all(|k| matches!(k.as_str(), "router" | "peer" | "client"))
    })
}

impl<'de, T: Read> Deserialize<'de> for Setting<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        match v.as_object() {
            Some(per_mode) if is_per_mode(&v) => {
                let mut values = [None, None, None];
                for (mode, item) in per_mode {
                    let mode = match mode.as_str() {
                        "router" => WhatAmI::Router,
                        "peer" => WhatAmI::Peer,
                        _ => WhatAmI::Client,
                    };
                    values[mode_index(mode)] = Some(read::<D, T>(item)?);
                }
                Ok(Self::PerMode(values))
            }
            _ => read::<D, T>(&v).map(Self::All),
        }
    }
}

/// A value of kind `T`, or null for "not set".
#[derive(Debug)]
pub(super) struct OrNull<T>(pub(super) Option<T>);

impl<T: Read> Read for OrNull<T> {
    fn read(v: &Value) -> Result<Self, Refusal> {
        if v.is_null() {
            Ok(Self(None))
        } else {
            T::read(v).map(|t| Self(Some(t)))
        }
    }
}

/// Why a [`FailClosed`] setting is refused when it asks for something.
pub(super) trait Why {
    /// What the setting asks for.
    const REASON: &'static str;
}

/// A setting of a security feature weft does not implement: accepted only when it asks
/// for nothing (null, false, or empty, as Zenoh's own default configuration has it), so
/// that weft never runs without a protection it was asked for.
#[derive(Debug)]
pub(super) struct FailClosed<W>(std::marker::PhantomData<W>);

impl<W> Default for FailClosed<W> {
    fn default() -> Self {
        Self(std::marker::PhantomData)
    }
}

impl<'de, W: Why> Deserialize<'de> for FailClosed<W> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if inert(&v) {
            Ok(Self::default())
        } else {
            let refusal = Refusal::Security {
                value: v.to_string(),
                reason: W::REASON.into(),
            };
            Err(D::Error::custom(refusal.encode()))
        }
    }
}

/// Whether a value asks for nothing: null, false, or an empty list, string or object.
pub(super) fn inert(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_goes_through_serdes_error_and_back() {
        let r = Refusal::invalid(&Value::from("soon"), "a positive number of milliseconds");
        let message = serde_json::Error::custom(r.encode()).to_string();
        assert_eq!(Refusal::decode(&message), Some(r));
        assert_eq!(Refusal::decode("invalid type: integer `5`"), None);
    }
}
