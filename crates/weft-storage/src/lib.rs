//! Storages: data at rest behind a key expression.
//!
//! A storage subscribes to its key expression, keeps the latest value of every key (last
//! writer wins by timestamp; a deletion is remembered, so that an older put arriving late
//! does not bring the key back), and answers queries on its keys, wildcards included. A
//! put or delete on a key expression with wildcards updates every stored key it
//! includes, each by the same rule (Zenoh's storages also apply it to keys stored later
//! with older timestamps; weft's do not keep it). A sample without a timestamp is
//! stamped from the session's clock, the one its router stamps with, in the order it
//! comes; a write older than the value held is discarded, counted and logged.
//! Values live in a [`volume::Volume`]: `memory`, or `sqlite` (persistent, survives a
//! crash of the process).
//!
//! Configured as Zenoh's storage manager is:
//!
//! ```json5
//! plugins: { storage_manager: {
//!   volumes: { sqlite: { dir: "/var/lib/weft" } },
//!   storages: {
//!     demo: { key_expr: "demo/**", volume: "memory" },
//!     kept: { key_expr: "kept/**", strip_prefix: "kept", volume: { id: "sqlite" } },
//!   },
//! } }
//! ```

mod answers;
pub mod config;
mod discards;
mod storage;
pub mod volume;

pub use config::{StorageConfig, StorageConfigError, VolumeKind};
pub use storage::{start, Storage, StorageError, StorageStats};
