//! What applications handle: samples, subscribers, publishers, and their options.

mod pubsub;
mod sample;

pub use pubsub::{Publisher, PutOptions, Subscriber};
pub use sample::{Sample, SampleKind};
