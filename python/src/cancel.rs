//! `CancellationToken`: interrupts the `get`s it is given to (`cancellation_token=`).

use std::sync::{Mutex, PoisonError};
use std::thread::JoinHandle;

use pyo3::prelude::*;

/// Interrupts the `get`s it is given to: their handlers end at once (a channel is closed,
/// a callback's `drop` is called). A `get` given a cancelled token ends at its start.
/// Safe to share between threads.
#[pyclass(frozen, module = "weft")]
pub(crate) struct CancellationToken {
    token: weft::CancellationToken,
    /// The threads feeding callback handlers of its `get`s: `cancel` waits for them.
    pumps: Mutex<Vec<JoinHandle<()>>>,
}

impl CancellationToken {
    /// The library's token, for a `get`'s options.
    pub(crate) fn token(&self) -> weft::CancellationToken {
        self.token.clone()
    }

    /// Keeps the thread feeding a `get`'s callback, so that `cancel` waits for it
    /// (finished ones are let go on the way).
    pub(crate) fn watch(&self, pump: JoinHandle<()>) {
        let mut pumps = self.pumps.lock().unwrap_or_else(PoisonError::into_inner);
        pumps.retain(|p| !p.is_finished());
        pumps.push(pump);
    }
}

#[pymethods]
impl CancellationToken {
    /// A token not cancelled yet.
    #[new]
    fn new() -> Self {
        Self {
            token: weft::CancellationToken::new(),
            pumps: Mutex::new(Vec::new()),
        }
    }

    /// Interrupts every `get` under way it was given to, and every later one; returns
    /// once their callbacks have finished and their `drop` returned (except a callback
    /// cancelling its own `get`, which cannot wait for itself).
    fn cancel(&self, py: Python<'_>) {
        crate::gil::released(py, || {
            self.token.cancel();
            let pumps =
                std::mem::take(&mut *self.pumps.lock().unwrap_or_else(PoisonError::into_inner));
            let me = std::thread::current().id();
            for pump in pumps {
                if pump.thread().id() != me {
                    let _ = pump.join();
                }
            }
        });
    }

    /// Whether `cancel` was called.
    #[getter]
    fn is_cancelled(&self) -> bool {
        self.token.is_cancelled()
    }
}
