//! The library side of the `weft` command-line tool: reading captured traffic and turning
//! decoded messages into JSON, shared by the binary and its tests.

pub mod capture;
pub mod json;
pub mod rates;
/// The MCAP layout of recordings (`weft record`, `weft replay`), from `weft-record`.
pub mod recording {
    pub use weft_record::mcap_file::*;
}
pub mod top;
pub mod trace;
