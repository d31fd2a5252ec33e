//! Transport events: listeners told when a node's transport with this session opens or
//! closes.
//!
//! The session tells each listener's queue while it holds its state's lock, so that a
//! listener sees a node's transport open before it sees it close; a thread per listener
//! takes the events from its queue and calls the listener's callback, so that a slow
//! callback never holds the session up. A queue keeps at most [`WAITING_MOST`] events: a
//! listener that falls further behind loses the newest ones, counted and logged.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::thread::JoinHandle;

use weft_proto::core::{WhatAmI, ZenohId};

use super::face_transport::FaceTransport;
use super::{Inner, SessionError};
use crate::api::SampleKind;

/// Most events waiting for one listener's callback.
pub(crate) const WAITING_MOST: usize = 1024;

/// A node's transport with this session opened (`kind` Put) or closed (Delete).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportEvent {
    /// Opened (`Put`) or closed (`Delete`).
    pub kind: SampleKind,
    /// The other node's id.
    pub zid: ZenohId,
    /// The other node's role.
    pub whatami: WhatAmI,
    /// Whether the transport carries the 8 priorities (QoS negotiated).
    pub qos: bool,
}

impl TransportEvent {
    /// The event of `t` opening (`Put`) or closing (`Delete`).
    pub(crate) fn of(kind: SampleKind, t: &dyn FaceTransport) -> Self {
        Self {
            kind,
            zid: t.peer_zid(),
            whatami: t.peer_whatami(),
            qos: t.transport().is_some_and(|t| t.negotiated().qos),
        }
    }
}

/// One listener's events not yet handed to its callback.
#[derive(Default)]
struct Queue {
    events: Mutex<VecDeque<TransportEvent>>,
    ready: Condvar,
    ended: AtomicBool,
}

impl Queue {
    fn push(&self, event: TransportEvent) {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        if events.len() >= WAITING_MOST {
            tracing::warn!(
                "a transport events listener is {WAITING_MOST} events behind: the event of {} is lost",
                event.zid
            );
            return;
        }
        events.push_back(event);
        self.ready.notify_one();
    }

    /// The events waiting, once there are some; `None` once the listener ended.
    fn take(&self) -> Option<Vec<TransportEvent>> {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if self.ended.load(Ordering::Acquire) {
                return None;
            }
            if !events.is_empty() {
                return Some(events.drain(..).collect());
            }
            events = self
                .ready
                .wait(events)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn end(&self) {
        let _events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        self.ended.store(true, Ordering::Release);
        self.ready.notify_all();
    }
}

/// A session's transport events listeners.
#[derive(Default)]
pub(crate) struct Listeners(Mutex<Vec<Arc<Queue>>>);

impl Listeners {
    /// Tells every listener `event` (called with the session's state locked).
    pub(crate) fn tell(&self, event: &TransportEvent) {
        for queue in self.0.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            queue.push(event.clone());
        }
    }

    fn add(&self, queue: Arc<Queue>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(queue);
    }

    fn remove(&self, queue: &Arc<Queue>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|q| !Arc::ptr_eq(q, queue));
    }
}

/// Told the transports that open and close (see
/// [`Session::declare_transport_events_listener`](crate::Session::declare_transport_events_listener));
/// nothing more once dropped.
pub struct TransportEventsListener {
    session: Weak<Inner>,
    queue: Arc<Queue>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for TransportEventsListener {
    fn drop(&mut self) {
        if let Some(session) = self.session.upgrade() {
            session.transport_listeners.remove(&self.queue);
        }
        self.queue.end();
        if let Some(thread) = self.thread.take() {
            // Not from its own callback: that thread ends once the callback returns.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

impl Inner {
    /// A listener calling `callback` for every transport that opens or closes from now
    /// on, and first (with `history`) for each transport open already.
    pub(crate) fn declare_transport_events_listener(
        self: &Arc<Self>,
        history: bool,
        callback: Box<dyn Fn(TransportEvent) + Send>,
    ) -> Result<TransportEventsListener, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let queue = Arc::new(Queue::default());
        {
            // Under the state's lock: no transport opens or closes between the history
            // and the listener's first event.
            let st = self.lock();
            if history {
                for face in st.faces.values().filter(|f| !f.transport.is_closed()) {
                    queue.push(TransportEvent::of(SampleKind::Put, &*face.transport));
                }
            }
            self.transport_listeners.add(queue.clone());
        }
        let thread = {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name("weft-transport-events".into())
                .spawn(move || {
                    while let Some(events) = queue.take() {
                        for event in events {
                            callback(event);
                        }
                    }
                })
        };
        match thread {
            Ok(thread) => Ok(TransportEventsListener {
                session: Arc::downgrade(self),
                queue,
                thread: Some(thread),
            }),
            Err(e) => {
                self.transport_listeners.remove(&queue);
                Err(SessionError::Thread(e.to_string()))
            }
        }
    }
}
