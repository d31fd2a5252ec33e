//! Cancelling `get`s: a token given to any number of them ([`GetOptions::cancellation`])
//! ends them all at once, and every later one it is given to at its start.
//!
//! [`GetOptions::cancellation`]: crate::GetOptions::cancellation

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::session::Inner;

/// Ends the `get`s it was given to: their reply channels close at once, without the
/// replies held for consolidation; replies arriving later are counted as `expired`. A
/// `get` started with a token already cancelled sends nothing and ends at once. Clones
/// share one token.
#[derive(Clone, Default)]
pub struct CancellationToken(Arc<Mutex<TokenState>>);

/// What a token knows: whether it was cancelled, and the `get`s under way it was given
/// to (a session, the `get`'s id, and a handle that dies with the `get`).
#[derive(Default)]
struct TokenState {
    cancelled: bool,
    gets: Vec<(Weak<Inner>, u32, Weak<()>)>,
}

impl CancellationToken {
    /// A token not cancelled yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ends every `get` under way the token was given to, and marks it cancelled.
    pub fn cancel(&self) {
        let gets = {
            let mut st = self.lock();
            st.cancelled = true;
            std::mem::take(&mut st.gets)
        };
        for (session, qid, alive) in gets {
            if let (Some(session), Some(_)) = (session.upgrade(), alive.upgrade()) {
                session.cancel_get(qid);
            }
        }
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.lock().cancelled
    }

    /// Records a `get` under way; false if the token is cancelled already (the caller
    /// then ends the `get` itself). `get`s that ended are forgotten on the way.
    pub(crate) fn register(&self, session: Weak<Inner>, qid: u32, alive: Weak<()>) -> bool {
        let mut st = self.lock();
        if st.cancelled {
            return false;
        }
        st.gets.retain(|(_, _, a)| a.strong_count() > 0);
        st.gets.push((session, qid, alive));
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TokenState> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for CancellationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CancellationToken")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

/// Two tokens are equal when they are clones of one.
impl PartialEq for CancellationToken {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CancellationToken {}
