//! Running Python code from threads Python did not start, without ever blocking
//! interpreter exit.
//!
//! The binding's threads (a callback's thread, a `get`'s reply thread) take the GIL
//! through [`with_python`]; weft's I/O threads, which run callbacks once a read is handed
//! on, through [`with_python_kept`], keeping their Python thread state. weft's threads
//! never take the GIL anywhere else. At exit ([`shutdown`]), a flag is raised first, so
//! that none of them starts waiting for the GIL any more, then the sessions are closed
//! and the calls in flight are waited for, with the GIL released, for a bounded time;
//! a callback still computing in Python after a second is interrupted with
//! `SystemExit` (Python would otherwise end its thread in a way the process does not
//! survive).

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

static EXITING: AtomicBool = AtomicBool::new(false);
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread holds the GIL inside a weft call ([`holding_gil`]).
    static HOLDING: Cell<bool> = const { Cell::new(false) };
    /// How many calls of [`with_python`] (or its kept form) this thread is inside.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// The thread that runs [`shutdown`].
static SHUTTING_DOWN: std::sync::OnceLock<std::thread::ThreadId> = std::sync::OnceLock::new();

/// Runs `f` with the GIL released (as `allow_threads`). Should the interpreter have
/// started exiting meanwhile, a thread other than the one exiting never takes the GIL
/// back: Python ends such threads when they do, by unwinding them through frames that
/// cannot be unwound (the process would abort); it waits here until the process ends.
pub(crate) fn released<T, F>(py: Python<'_>, f: F) -> T
where
    F: Send + FnOnce() -> T,
    T: Send,
{
    py.allow_threads(|| {
        let r = f();
        if EXITING.load(Ordering::SeqCst)
            && SHUTTING_DOWN.get() != Some(&std::thread::current().id())
        {
            park_until_the_end();
        }
        r
    })
}

/// Never returns: the thread is no longer counted among the calls in flight at exit.
fn park_until_the_end() -> ! {
    let depth = DEPTH.with(|d| d.replace(0));
    IN_FLIGHT.fetch_sub(depth, Ordering::SeqCst);
    loop {
        std::thread::park();
    }
}

/// Runs `f`, a weft call that does not block (a put with congestion control `drop`),
/// with the GIL held: releasing and taking it back would cost more than the call. Should
/// `f` have to wait after all (a full FIFO channel of a local subscriber), it waits
/// through [`blocking`], which releases the GIL meanwhile.
pub(crate) fn holding_gil<R>(_py: Python<'_>, f: impl FnOnce() -> R) -> R {
    let before = HOLDING.with(|h| h.replace(true));
    let r = f();
    HOLDING.with(|h| h.set(before));
    r
}

/// Runs `wait`, which blocks, with the GIL released if this thread holds it inside
/// [`holding_gil`] (and as it is otherwise: weft's threads never take the GIL to wait).
pub(crate) fn blocking<R: Send>(wait: impl FnOnce() -> R + Send) -> R {
    crate::dispatch::before_blocking();
    if HOLDING.with(Cell::get) {
        Python::with_gil(|py| {
            HOLDING.with(|h| h.set(false));
            let r = released(py, wait);
            HOLDING.with(|h| h.set(true));
            r
        })
    } else {
        wait()
    }
}

/// Runs `f` with the GIL, unless the interpreter is exiting (then `f` is skipped).
pub(crate) fn with_python<F: FnOnce(Python<'_>)>(f: F) {
    enter();
    if !EXITING.load(Ordering::SeqCst) {
        Python::with_gil(|py| {
            // Exit may have begun while this thread waited for the GIL.
            if EXITING.load(Ordering::SeqCst) {
                return;
            }
            let _calling = Calling::begin(py);
            f(py);
        });
    }
    leave();
}

/// The Python thread ids of weft's threads running Python code (callbacks) now, one
/// entry per call: at exit, those still running after a while are interrupted.
static CALLING: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());

thread_local! {
    /// This thread's Python thread id, once asked.
    static PYTHON_ID: Cell<Option<u64>> = const { Cell::new(None) };
}

/// One call of Python code by a weft thread, listed in [`CALLING`] until dropped.
struct Calling(Option<u64>);

impl Calling {
    fn begin(py: Python<'_>) -> Self {
        let id = PYTHON_ID.with(|cached| {
            cached.get().or_else(|| {
                let id = py
                    .import("_thread")
                    .and_then(|t| t.call_method0("get_ident"))
                    .and_then(|id| id.extract::<u64>())
                    .ok();
                cached.set(id);
                id
            })
        });
        if let Some(id) = id {
            calling().push(id);
        }
        Self(id)
    }
}

impl Drop for Calling {
    fn drop(&mut self) {
        if let Some(id) = self.0 {
            let mut calling = calling();
            if let Some(i) = calling.iter().position(|c| *c == id) {
                calling.swap_remove(i);
            }
        }
    }
}

fn calling() -> std::sync::MutexGuard<'static, Vec<u64>> {
    CALLING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Raises `SystemExit` in every weft thread still running Python code (a callback that
/// computes on, at exit): it then returns at its next bytecode instead of being ended
/// by Python's finalisation, which the process would not survive.
#[allow(unsafe_code)]
fn interrupt_calls(py: Python<'_>) {
    let ids = calling().clone();
    let exit = py.get_type::<pyo3::exceptions::PySystemExit>();
    for id in ids {
        // SAFETY: the GIL is held; `exit` is a live exception type; an id that no
        // longer names a thread is ignored (the call returns 0).
        unsafe {
            pyo3::ffi::PyThreadState_SetAsyncExc(id as std::os::raw::c_long, exit.as_ptr());
        }
    }
}

/// Counts a call with the GIL in flight.
fn enter() {
    IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
    DEPTH.with(|d| d.set(d.get() + 1));
}

/// The call counted by [`enter`] is over.
fn leave() {
    DEPTH.with(|d| d.set(d.get() - 1));
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
}

/// Runs `f` with the GIL, unless the interpreter is exiting (then `f` is skipped), on a
/// thread that takes the GIL often and was not started by Python (weft's I/O threads):
/// the thread's Python thread state is made once and kept, instead of made and
/// destroyed at each taking of the GIL.
pub(crate) fn with_python_kept<F: FnOnce(Python<'_>)>(f: F) {
    if !EXITING.load(Ordering::SeqCst) {
        KEPT_STATE.with(|kept| {
            let mut kept = kept.borrow_mut();
            if kept.is_none() {
                *kept = Some(KeptState::make());
            }
        });
    }
    with_python(f);
}

thread_local! {
    /// This thread's kept Python thread state ([`with_python_kept`]).
    static KEPT_STATE: std::cell::RefCell<Option<KeptState>> =
        const { std::cell::RefCell::new(None) };
}

/// A Python thread state kept for the life of the thread: made by
/// `PyGILState_Ensure`, whose count then stays above zero (so that later takings of the
/// GIL reuse it), with the GIL released at once. Released when the thread ends, unless
/// the interpreter is exiting.
struct KeptState {
    gil: pyo3::ffi::PyGILState_STATE,
    thread: *mut pyo3::ffi::PyThreadState,
}

#[allow(unsafe_code)]
impl KeptState {
    fn make() -> Self {
        // SAFETY: the interpreter is initialised (weft's Python objects exist) and not
        // exiting, and this thread does not hold the GIL; `PyGILState_Ensure` gives it a
        // thread state and the GIL, which `PyEval_SaveThread` releases, keeping the
        // state.
        unsafe {
            let gil = pyo3::ffi::PyGILState_Ensure();
            let thread = pyo3::ffi::PyEval_SaveThread();
            Self { gil, thread }
        }
    }
}

#[allow(unsafe_code)]
impl Drop for KeptState {
    fn drop(&mut self) {
        if EXITING.load(Ordering::SeqCst) {
            return;
        }
        // SAFETY: the state was made on this thread, which does not hold the GIL (it
        // is ending): taking the GIL back with the state, then releasing the state,
        // undoes `make`.
        unsafe {
            pyo3::ffi::PyEval_RestoreThread(self.thread);
            pyo3::ffi::PyGILState_Release(self.gil);
        }
    }
}

/// Whether the interpreter is exiting (after [`shutdown`] started).
pub(crate) fn exiting() -> bool {
    EXITING.load(Ordering::SeqCst)
}

/// Logs `err`, raised by a user callback, on the `weft` logger (with its traceback).
pub(crate) fn log_callback_error(py: Python<'_>, err: PyErr) {
    if exiting() && err.is_instance_of::<pyo3::exceptions::PySystemExit>(py) {
        // Exit interrupted the callback ([`shutdown`]): nothing went wrong.
        return;
    }
    let logged = (|| -> PyResult<()> {
        let logger = py.import("logging")?.call_method1("getLogger", ("weft",))?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("exc_info", err.clone_ref(py).into_value(py))?;
        logger.call_method(
            "error",
            ("callback error: %s", err.value(py)),
            Some(&kwargs),
        )?;
        Ok(())
    })();
    if logged.is_err() {
        err.print(py);
    }
}

/// Called once at interpreter exit: stops callbacks from entering Python, closes every
/// open session (on a thread of its own, so that a callback the closing would wait for
/// cannot hold it), and waits (at most one second) for the callbacks already running;
/// those still running Python code then are interrupted with `SystemExit` and waited
/// for (at most two more seconds), and the closing too (at most two more seconds).
#[pyfunction]
#[pyo3(name = "_shutdown")]
pub(crate) fn shutdown(py: Python<'_>) {
    let _ = SHUTTING_DOWN.set(std::thread::current().id());
    EXITING.store(true, Ordering::SeqCst);
    let sessions = crate::session::all_open();
    let (closed_tx, closed) = std::sync::mpsc::channel();
    let closing = std::thread::Builder::new()
        .name("weft-py-exit".into())
        .spawn(move || {
            crate::session::close_all(sessions);
            let _ = closed_tx.send(());
        });
    if let Err(e) = closing {
        // The process ends all the same; its peers see its links end.
        tracing::warn!("cannot start a thread to close the sessions at exit: {e}");
    }
    let returned = py.allow_threads(|| wait_in_flight(Duration::from_secs(1)));
    if !returned {
        // Interrupted again as they come: a callback waiting for the GIL meanwhile may
        // have begun before it saw that exit had begun.
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            interrupt_calls(py);
            let returned = py.allow_threads(|| wait_in_flight(Duration::from_millis(100)));
            if returned || Instant::now() >= deadline {
                break;
            }
        }
    }
    py.allow_threads(move || {
        let _ = closed.recv_timeout(Duration::from_secs(2));
    });
}

/// Waits, at most `limit`, for the calls in flight to end; whether they all did.
fn wait_in_flight(limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while IN_FLIGHT.load(Ordering::SeqCst) > 0 {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}
