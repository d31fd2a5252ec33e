//! How callbacks run, for bindings that hand received data to another runtime (an
//! interpreter, an event loop).
//!
//! weft calls subscriber, queryable and reply callbacks on its I/O threads, which serve
//! every link of the process: a callback that blocks is noticed (its thread is replaced by
//! a fresh one, so that the other links keep being served), but a binding does better by
//! saying what it does. This module is that contract, the only way into the I/O threads
//! from outside weft:
//!
//! - [`after_this_read`]: from a callback, asks that a function run on this thread once
//!   the batch being handed on is done, with the link put back (where the thread holds no
//!   lock of weft's): a binding takes its interpreter's lock once for all the messages of
//!   a read, and may block there;
//! - [`hold_this_link`]: from a callback, has the link wait unread until those functions
//!   have run (back-pressure from a consumer that cannot take more yet);
//! - [`before_blocking`]: says that this thread is about to wait (for a reply, a
//!   channel): on an I/O thread running the functions of [`after_this_read`], another
//!   thread takes over its links at once;
//! - [`io_thread_count`], [`MAX_IO_THREADS`]: how many I/O threads there are.
//!
//! The Python binding (`python/src/dispatch.rs`) is built on these.

pub use crate::transport::{
    after_this_read, before_blocking, hold_this_link, io_thread_count, MAX_IO_THREADS,
};
