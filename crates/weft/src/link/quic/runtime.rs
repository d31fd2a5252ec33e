//! The one place weft runs async code: a single-threaded tokio runtime on a thread of its
//! own (`weft-quic`), started the first time a QUIC endpoint is used, for quinn's
//! endpoints, connections and the tasks bridging QUIC streams to weft's sockets.
//!
//! weft's threads never enter it: they hand it a future ([`run`]) and wait for the
//! answer on a channel, which works from any thread, an application's async runtime
//! included.

use std::future::Future;
use std::sync::mpsc;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle};

use super::QuicError;

/// The runtime's handle, or why it could not start (kept: a later use fails the same way).
static RUNTIME: OnceLock<Result<Handle, String>> = OnceLock::new();

/// The runtime, started on first use.
pub(super) fn handle() -> Result<&'static Handle, QuicError> {
    RUNTIME
        .get_or_init(start)
        .as_ref()
        .map_err(|reason| QuicError::Runtime(reason.clone()))
}

fn start() -> Result<Handle, String> {
    let runtime = Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| e.to_string())?;
    let handle = runtime.handle().clone();
    std::thread::Builder::new()
        .name("weft-quic".into())
        // The thread drives the runtime (its I/O, its timers and every spawned task)
        // for the life of the process.
        .spawn(move || runtime.block_on(std::future::pending::<()>()))
        .map_err(|e| e.to_string())?;
    Ok(handle)
}

/// Runs `future` on the runtime and waits for its output on this thread.
pub(super) fn run<F>(future: F) -> Result<F::Output, QuicError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (tx, rx) = mpsc::sync_channel(1);
    handle()?.spawn(async move {
        let _ = tx.send(future.await);
    });
    rx.recv()
        .map_err(|_| QuicError::Runtime("a QUIC task ended without an answer".into()))
}

/// Spawns `future` on the runtime, without waiting for it.
pub(super) fn spawn<F>(future: F) -> Result<tokio::task::JoinHandle<F::Output>, QuicError>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    Ok(handle()?.spawn(future))
}
