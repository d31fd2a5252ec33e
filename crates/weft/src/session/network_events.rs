//! Network events: listeners told when a node's transport with this session opens or
//! closes ([`TransportEvent`]), and when one of its links is added or removed
//! ([`LinkEvent`]: the main link with its transport, a link reserved for some priorities
//! on its own).
//!
//! The session tells each listener's queue while it holds its state's lock, so that a
//! listener sees a transport or link open before it sees it close; a thread per listener
//! takes the events from its queue and calls the listener's callback, so that a slow
//! callback never holds the session up. A queue keeps at most [`WAITING_MOST`] events: a
//! listener that falls further behind loses the newest ones, logged.

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

/// A link of a node's transport with this session was added (`kind` Put) or removed
/// (Delete).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkEvent {
    /// Added (`Put`) or removed (`Delete`).
    pub kind: SampleKind,
    /// The other node's id.
    pub zid: ZenohId,
    /// This end, e.g. `tcp/127.0.0.1:7447`.
    pub src: String,
    /// The other end, e.g. `tcp/127.0.0.1:51234`.
    pub dst: String,
    /// The largest batch the link carries, as its handshake agreed.
    pub mtu: u16,
    /// The priorities it carries (highest first, 0 to 7): all of them for a main link
    /// with QoS, its range for a link reserved for some; `None` without QoS.
    pub priorities: Option<(u8, u8)>,
}

impl LinkEvent {
    /// The event of `t`'s link being added (`Put`) or removed (`Delete`).
    pub(crate) fn of(kind: SampleKind, t: &dyn FaceTransport) -> Self {
        let transport = t.transport();
        let negotiated = transport.as_ref().map(|t| t.negotiated());
        let priorities = negotiated.and_then(|n| match n.link_priorities {
            Some((start, end)) => Some((start.to_u8(), end.to_u8())),
            None => n.qos.then_some((0, 7)),
        });
        Self {
            kind,
            zid: t.peer_zid(),
            src: transport
                .as_ref()
                .map(|t| t.local_describe())
                .unwrap_or_default(),
            dst: t.describe().to_string(),
            mtu: negotiated.map_or(0, |n| n.batch_size),
            priorities,
        }
    }
}

/// A kind of network event: what it says of itself, where a session keeps its
/// listeners, and what it tells a new listener that asks for history.
pub(crate) trait NetworkEvent: Clone + Send + Sized + 'static {
    /// `transport` or `link`.
    const WHAT: &'static str;
    /// The node it is about.
    fn zid(&self) -> ZenohId;
    /// The session's listeners of this event type.
    fn listeners(session: &Inner) -> &Listeners<Self>;
    /// One event of kind `Put` for each transport or link open now.
    fn history(st: &super::State) -> Vec<Self>;
}

/// One listener's events not yet handed to its callback.
struct Queue<E> {
    events: Mutex<VecDeque<E>>,
    ready: Condvar,
    ended: AtomicBool,
}

impl<E: NetworkEvent> Queue<E> {
    fn new() -> Self {
        Self {
            events: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            ended: AtomicBool::new(false),
        }
    }

    fn push(&self, event: E) {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        if events.len() >= WAITING_MOST {
            tracing::warn!(
                "a {} events listener is {WAITING_MOST} events behind: the event of {} is lost",
                E::WHAT,
                event.zid()
            );
            return;
        }
        events.push_back(event);
        self.ready.notify_one();
    }

    /// The events waiting, once there are some; `None` once the listener ended.
    fn take(&self) -> Option<Vec<E>> {
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

/// A session's listeners of one kind of network event.
pub(crate) struct Listeners<E>(Mutex<Vec<Arc<Queue<E>>>>);

impl<E> Default for Listeners<E> {
    fn default() -> Self {
        Self(Mutex::new(Vec::new()))
    }
}

impl<E: NetworkEvent> Listeners<E> {
    /// Tells every listener `event` (called with the session's state locked).
    pub(crate) fn tell(&self, event: &E) {
        for queue in self.0.lock().unwrap_or_else(PoisonError::into_inner).iter() {
            queue.push(event.clone());
        }
    }

    fn add(&self, queue: Arc<Queue<E>>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(queue);
    }

    fn remove(&self, queue: &Arc<Queue<E>>) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|q| !Arc::ptr_eq(q, queue));
    }
}

/// Told the transports that open and close (see
/// [`Session::declare_transport_events_listener`](crate::Session::declare_transport_events_listener));
/// nothing more once dropped.
pub type TransportEventsListener = EventsListener<TransportEvent>;

/// Told the links that are added and removed (see
/// [`Session::declare_link_events_listener`](crate::Session::declare_link_events_listener));
/// nothing more once dropped.
pub type LinkEventsListener = EventsListener<LinkEvent>;

/// A listener of network events of type `E`: a queue and the thread that calls its
/// callback; nothing more once dropped.
#[allow(private_bounds)]
pub struct EventsListener<E: NetworkEvent> {
    session: Weak<Inner>,
    queue: Arc<Queue<E>>,
    thread: Option<JoinHandle<()>>,
}

impl<E: NetworkEvent> Drop for EventsListener<E> {
    fn drop(&mut self) {
        if let Some(session) = self.session.upgrade() {
            E::listeners(&session).remove(&self.queue);
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

impl NetworkEvent for TransportEvent {
    const WHAT: &'static str = "transport";

    fn zid(&self) -> ZenohId {
        self.zid
    }

    fn listeners(session: &Inner) -> &Listeners<Self> {
        &session.transport_listeners
    }

    fn history(st: &super::State) -> Vec<Self> {
        st.faces
            .values()
            .filter(|f| !f.transport.is_closed())
            .map(|f| Self::of(SampleKind::Put, &*f.transport))
            .collect()
    }
}

impl NetworkEvent for LinkEvent {
    const WHAT: &'static str = "link";

    fn zid(&self) -> ZenohId {
        self.zid
    }

    fn listeners(session: &Inner) -> &Listeners<Self> {
        &session.link_listeners
    }

    fn history(st: &super::State) -> Vec<Self> {
        let mut links = Vec::new();
        for f in st.faces.values().filter(|f| !f.transport.is_closed()) {
            links.push(Self::of(SampleKind::Put, &*f.transport));
            links.extend(f.priority_links.iter().filter(|l| l.told).map(|l| Self {
                kind: SampleKind::Put,
                ..l.event.clone()
            }));
        }
        links
    }
}

impl Inner {
    /// A listener calling `callback` for every event of type `E` from now on, and first
    /// (with `history`) for each transport or link open already.
    #[allow(private_bounds)]
    pub(crate) fn declare_events_listener<E: NetworkEvent>(
        self: &Arc<Self>,
        history: bool,
        callback: Box<dyn Fn(E) + Send>,
    ) -> Result<EventsListener<E>, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let queue = Arc::new(Queue::new());
        {
            // Under the state's lock: nothing opens or closes between the history and
            // the listener's first event.
            let st = self.lock();
            if history {
                for event in E::history(&st) {
                    queue.push(event);
                }
            }
            E::listeners(self).add(queue.clone());
        }
        let thread = {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("weft-{}-events", E::WHAT))
                .spawn(move || {
                    while let Some(events) = queue.take() {
                        for event in events {
                            callback(event);
                        }
                    }
                })
        };
        match thread {
            Ok(thread) => Ok(EventsListener {
                session: Arc::downgrade(self),
                queue,
                thread: Some(thread),
            }),
            Err(e) => {
                E::listeners(self).remove(&queue);
                Err(SessionError::Thread(e.to_string()))
            }
        }
    }
}
