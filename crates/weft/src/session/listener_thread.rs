//! The listener thread: one thread per process (`weft-listeners`) calls the callbacks of
//! every matching listener and every network-events listener of every session, instead
//! of a thread per listener.
//!
//! A listener is a [`Watch`]: woken by [`wake`] (a session's declarations, interests or
//! faces changed, or an event was queued for a listener), the thread asks each watch in
//! turn whether it has news for its callback. Callbacks run there, never on an I/O
//! thread nor under a session's lock, so a slow callback never holds a session up; it
//! delays the other listeners' callbacks, which is why their events wait in bounded
//! queues of their own. Dropping a listener's [`Registration`] waits for a callback of
//! it that is running (unless dropped by that callback), so that none runs afterwards.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::ThreadId;
use std::time::Duration;

use super::SessionError;

/// How often the thread asks every watch, without a wake-up, whether it still has a
/// session (a watch of a session that is gone ends then).
const ALIVE_CHECK: Duration = Duration::from_secs(1);

/// A listener the thread serves.
pub(crate) trait Watch: Send {
    /// Looks for news and calls the listener's callback with it; `false` once the
    /// listener has nothing more to watch (its session is gone).
    fn run(&mut self) -> bool;
}

/// One listener, as the thread holds it.
struct Entry {
    /// Set when its registration is dropped or its watch ended.
    stopped: AtomicBool,
    /// Held while its callback runs.
    watch: Mutex<Box<dyn Watch>>,
}

/// What the thread and the sessions share.
#[derive(Default)]
struct Shared {
    state: Mutex<ListenerState>,
    woken: Condvar,
}

#[derive(Default)]
struct ListenerState {
    entries: Vec<Arc<Entry>>,
    /// Bumped by every [`wake`].
    generation: u64,
    /// The thread, once started.
    thread: Option<ThreadId>,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(Shared::default)
}

fn lock(m: &Mutex<ListenerState>) -> MutexGuard<'_, ListenerState> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether any listener was ever registered (until then, [`wake`] has nobody to wake).
static IN_USE: AtomicBool = AtomicBool::new(false);

/// Something changed: every watch looks again soon.
pub(crate) fn wake() {
    if !IN_USE.load(Ordering::Acquire) {
        return;
    }
    let shared = shared();
    let mut st = lock(&shared.state);
    st.generation = st.generation.wrapping_add(1);
    drop(st);
    shared.woken.notify_one();
}

/// Serves `watch` from now on (starting the thread on first use), until the returned
/// registration is dropped or the watch ends. The watch runs once soon, even without a
/// wake-up.
pub(crate) fn register(watch: Box<dyn Watch>) -> Result<Registration, SessionError> {
    let shared = shared();
    let mut st = lock(&shared.state);
    if st.thread.is_none() {
        let thread = std::thread::Builder::new()
            .name("weft-listeners".into())
            .spawn(move || run(shared))
            .map_err(|e| SessionError::Thread(e.to_string()))?;
        st.thread = Some(thread.thread().id());
        IN_USE.store(true, Ordering::Release);
    }
    let entry = Arc::new(Entry {
        stopped: AtomicBool::new(false),
        watch: Mutex::new(watch),
    });
    st.entries.push(entry.clone());
    st.generation = st.generation.wrapping_add(1);
    drop(st);
    shared.woken.notify_one();
    Ok(Registration { entry })
}

/// A listener served by the thread; dropping it stops the service.
pub(crate) struct Registration {
    entry: Arc<Entry>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.entry.stopped.store(true, Ordering::Release);
        let on_listener_thread = lock(&shared().state).thread == Some(std::thread::current().id());
        if !on_listener_thread {
            // A callback of it that is running ends before this returns.
            drop(
                self.entry
                    .watch
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            );
        }
        wake();
    }
}

/// The thread: after every wake-up (or [`ALIVE_CHECK`]), runs each watch not stopped.
fn run(shared: &Shared) {
    let mut seen = None;
    loop {
        let entries = {
            let mut st = lock(&shared.state);
            if seen == Some(st.generation) {
                st = shared
                    .woken
                    .wait_timeout_while(st, ALIVE_CHECK, |st| seen == Some(st.generation))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            seen = Some(st.generation);
            st.entries.retain(|e| !e.stopped.load(Ordering::Acquire));
            st.entries.clone()
        };
        for entry in entries {
            if entry.stopped.load(Ordering::Acquire) {
                continue;
            }
            let mut watch = entry.watch.lock().unwrap_or_else(PoisonError::into_inner);
            // Checked again under its lock: a registration dropped meanwhile waited
            // for this lock and is gone.
            if entry.stopped.load(Ordering::Acquire) {
                continue;
            }
            let going_on = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| watch.run()));
            if !matches!(going_on, Ok(true)) {
                if going_on.is_err() {
                    tracing::error!("a listener's callback panicked: the listener stops");
                }
                entry.stopped.store(true, Ordering::Release);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Tells its channel how many times it ran; ends after `runs`.
    struct Counting {
        ran: usize,
        runs: usize,
        tell: mpsc::Sender<usize>,
    }

    impl Watch for Counting {
        fn run(&mut self) -> bool {
            self.ran += 1;
            let _ = self.tell.send(self.ran);
            self.ran < self.runs
        }
    }

    #[test]
    fn a_watch_runs_when_registered_and_at_every_wake_until_it_ends() {
        let (tell, told) = mpsc::channel();
        let registration = register(Box::new(Counting {
            ran: 0,
            runs: 3,
            tell,
        }))
        .unwrap();
        let wait = Duration::from_secs(10);
        assert_eq!(told.recv_timeout(wait), Ok(1));
        wake();
        assert_eq!(told.recv_timeout(wait), Ok(2));
        wake();
        assert_eq!(told.recv_timeout(wait), Ok(3));
        // Ended: not run again, and its registration drops without waiting.
        wake();
        drop(registration);
        assert!(told.recv_timeout(Duration::from_millis(50)).is_err());
    }

    /// Blocks in its callback until told to go on.
    struct Blocking {
        started: mpsc::Sender<()>,
        go_on: Arc<(Mutex<bool>, Condvar)>,
        done: Arc<AtomicBool>,
    }

    impl Watch for Blocking {
        fn run(&mut self) -> bool {
            let _ = self.started.send(());
            let (m, c) = &*self.go_on;
            let mut go = m.lock().unwrap();
            while !*go {
                go = c.wait(go).unwrap();
            }
            self.done.store(true, Ordering::Release);
            true
        }
    }

    #[test]
    fn dropping_a_registration_waits_for_its_running_callback() {
        let (started, has_started) = mpsc::channel();
        let go_on = Arc::new((Mutex::new(false), Condvar::new()));
        let done = Arc::new(AtomicBool::new(false));
        let registration = register(Box::new(Blocking {
            started,
            go_on: go_on.clone(),
            done: done.clone(),
        }))
        .unwrap();
        has_started.recv_timeout(Duration::from_secs(10)).unwrap();
        let releaser = std::thread::spawn(move || {
            let (m, c) = &*go_on;
            *m.lock().unwrap() = true;
            c.notify_all();
        });
        drop(registration);
        assert!(done.load(Ordering::Acquire), "the callback finished first");
        releaser.join().unwrap();
    }
}
