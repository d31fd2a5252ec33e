//! Building blocks shared by every message family: ZenohIDs, roles, timestamps,
//! encodings, wire expressions, priorities and resolutions.

mod encoding;
mod qos;
mod resolution;
mod timestamp;
mod whatami;
mod wire_expr;
mod zid;

pub use encoding::{encoding_name, Encoding};
pub use qos::{CongestionControl, NetworkQos, Priority, Reliability};
pub use resolution::{Bits, Resolution};
pub use timestamp::{Timestamp, UtcTime};
pub use whatami::{WhatAmI, WhatAmIMatcher};
pub use wire_expr::{Mapping, WireExpr};
pub use zid::ZenohId;
