//! Key expressions as Eclipse Zenoh 1.x defines them (wire protocol 0x09).
//!
//! A key expression is a `/`-separated list of chunks that names a set of keys:
//! `*` is any one chunk, `**` any number of chunks, `$*` any text inside a
//! chunk, and a chunk starting with `@` is only ever matched by itself.
//!
//! * [`KeyExpr`] / [`OwnedKeyExpr`]: a string checked to be a valid, canonical
//!   key expression ([`KeyExpr::new`]); [`canonize`] rewrites a string into
//!   canonical form first.
//! * [`intersects`] and [`includes`]: the relations that decide which
//!   subscribers a publication reaches, which queryables a query reaches, and
//!   which declarations an interest covers.
//! * [`KeyExprIndex`]: registrations found by relation to a query through a
//!   chunk tree, without scanning them all.
//!
//! The crate is `no_std` (it needs `alloc`), never panics on any input, and
//! matches without recursion over the expressions' length.
//!
//! ```
//! use weft_keyexpr::{canonize, KeyExpr};
//! let sub = KeyExpr::new("robot/*/sensor/**").unwrap();
//! let key = KeyExpr::new("robot/7/sensor/lidar/front").unwrap();
//! assert!(sub.intersects(key) && sub.includes(key));
//! assert_eq!(canonize("robot/**/**/$*").unwrap(), "robot/*/**");
//! ```

#![no_std]

extern crate alloc;

mod bits;
mod canon;
mod chunk;
mod error;
mod include;
mod index;
mod intersect;
mod key_expr;
mod validate;

pub use canon::canonize;
pub use error::KeyExprError;
pub use include::includes;
pub use index::KeyExprIndex;
pub use intersect::intersects;
pub use key_expr::{Chunks, KeyExpr, OwnedKeyExpr};
pub use validate::{MAX_KEY_EXPR_CHUNKS, MAX_KEY_EXPR_LEN};
