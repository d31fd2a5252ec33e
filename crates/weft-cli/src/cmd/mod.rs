//! The `weft` subcommands.

pub(crate) mod acl;
pub(crate) mod common;
pub(crate) mod decode;
pub(crate) mod explain;
pub(crate) mod liveliness;
pub(crate) mod perf;
pub(crate) mod pubsub;
pub(crate) mod query;
pub(crate) mod rates;
pub(crate) mod record;
pub(crate) mod scout;
pub(crate) mod top;
