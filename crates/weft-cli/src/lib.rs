//! The library side of the `weft` command-line tool: reading captured traffic and turning
//! decoded messages into JSON, shared by the binary and its tests.

pub mod capture;
pub mod json;
pub mod rates;
pub mod recording;
pub mod top;
pub mod trace;
