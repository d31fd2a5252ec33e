//! A storage's answers to queries, made on a thread of its own.
//!
//! A queryable's callback runs where the query arrives: on a thread serving links (a
//! query from another node), which must never wait, or on the querier's own thread (a
//! get of the router's own session, weftd's REST). A storage's answer can be large (every
//! value under `demo/**`), so the callback only queues the query here, and this thread
//! reads the volume a page at a time and replies as an application thread: the replies
//! wait for room on the querier's link (congestion control `block`) or for a paced
//! reader, instead of piling up in the router. Queries wait in a bounded queue; one that
//! finds it full is answered with an error and counted.

use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;

use weft::Query;

use crate::storage::Shared;

/// Queries waiting for a storage's answering thread, at most.
pub(crate) const QUEUED_QUERIES: usize = 64;

/// Where a storage's queryable hands its queries.
pub(crate) struct Answers {
    queue: SyncSender<Query>,
    shared: Arc<Shared>,
}

impl Answers {
    /// Starts the answering thread of `shared`'s storage. It ends once every `Answers`
    /// handle is dropped (the storage's queryable undeclared) and the queue is empty.
    pub(crate) fn start(shared: Arc<Shared>) -> std::io::Result<Self> {
        let (queue, queries) = sync_channel::<Query>(QUEUED_QUERIES);
        let answering = shared.clone();
        std::thread::Builder::new()
            .name("weft-storage".into())
            .spawn(move || {
                for query in queries {
                    answering.on_query(&query);
                }
            })?;
        Ok(Self { queue, shared })
    }

    /// Queues `query` for the answering thread; with the queue full, answers it with an
    /// error at once and counts it (`StorageStats::queries_refused`).
    pub(crate) fn ask(&self, query: Query) {
        let refused = match self.queue.try_send(query) {
            Ok(()) => return,
            Err(TrySendError::Full(q) | TrySendError::Disconnected(q)) => q,
        };
        self.shared
            .stats
            .queries_refused
            .fetch_add(1, Ordering::Relaxed);
        let text = format!(
            "storage `{}` busy: {QUEUED_QUERIES} queries wait for it",
            self.shared.name
        );
        let _ = refused.reply_err(text.as_bytes(), "text/plain");
    }
}
