//! The `weft` subcommands.

/// Prints a line on standard output, as `println!`; when the output is closed (`weft sub
/// | head`), the program ends quietly with success, as Unix tools do, instead of
/// panicking.
macro_rules! outln {
    () => {
        $crate::cmd::output::line(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::cmd::output::line(format_args!($($arg)*))
    };
}

pub(crate) mod acl;
pub(crate) mod common;
pub(crate) mod decode;
pub(crate) mod explain;
pub(crate) mod liveliness;
pub(crate) mod output;
pub(crate) mod perf;
pub(crate) mod pubsub;
pub(crate) mod query;
pub(crate) mod rates;
pub(crate) mod record;
pub(crate) mod scout;
pub(crate) mod top;
