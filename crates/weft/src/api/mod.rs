//! What applications handle: samples, subscribers, publishers, queries, queryables,
//! replies, and their options.

mod cancel;
mod fifo;
mod locality;
mod payload;
mod pubsub;
mod query;
mod sample;

pub use cancel::CancellationToken;
pub(crate) use fifo::fifo_channel;
pub use fifo::{FifoIter, FifoReceiver, Look, MAX_LOOK};
pub use locality::Locality;
pub use payload::Payload;
pub use pubsub::{Publisher, PutOptions, Subscriber};
pub use query::{GetOptions, Querier, Query, Queryable, Reply, ReplyError, ReplyKeyExpr};
pub use sample::{Sample, SampleKind, SharedKey};
