//! Network events: listeners told when a node's transport with this session opens or
//! closes ([`TransportEvent`]), and when one of its links is added or removed
//! ([`LinkEvent`]: the main link with its transport, a link reserved for some priorities
//! on its own).
//!
//! The session tells each listener's queue while it holds its state's lock, so that a
//! listener sees a transport or link open before it sees it close; the process's listener
//! thread ([`listener_thread`](super::listener_thread)) takes the events from each queue
//! and calls the listener's callback, so that a slow callback never holds the session up. A listener that falls [`WAITING_MOST`] events
//! behind is told less, never wrongly: a transport or link that opens and closes before
//! the listener's callback has seen it open leaves no event at all (its close removes
//! its waiting open), so every close the callback sees follows the open it saw. What
//! waits is then bounded by the transports and links open (each leaves at most its open
//! and the close of the one before it), which `max_sessions` bounds.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use weft_proto::core::{WhatAmI, ZenohId};

use super::face_transport::FaceTransport;
use super::listener_thread::{self, Registration, Watch};
use super::{Inner, SessionError};
use crate::api::SampleKind;

/// Events waiting for one listener's callback past which a close removes its open
/// instead of following it.
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
    /// Open (`Put`) or closed (`Delete`).
    fn kind(&self) -> SampleKind;
    /// Whether `other` is about the same transport or link.
    fn same_subject(&self, other: &Self) -> bool;
    /// The session's listeners of this event type.
    fn listeners(session: &Inner) -> &Listeners<Self>;
    /// One event of kind `Put` for each transport or link open now.
    fn history(st: &super::State) -> Vec<Self>;
}

/// One listener's events not yet handed to its callback.
struct Queue<E> {
    events: Mutex<VecDeque<E>>,
    ended: AtomicBool,
    /// Whether falling behind was logged since the queue was last emptied.
    said_behind: AtomicBool,
}

impl<E: NetworkEvent> Queue<E> {
    fn new() -> Self {
        Self {
            events: Mutex::new(VecDeque::new()),
            ended: AtomicBool::new(false),
            said_behind: AtomicBool::new(false),
        }
    }

    fn push(&self, event: E) {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        if events.len() >= WAITING_MOST && event.kind() == SampleKind::Delete {
            if !self.said_behind.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "a {} events listener is {WAITING_MOST} events behind: {}s that open \
                     and close before it sees them are left out",
                    E::WHAT,
                    E::WHAT
                );
            }
            // The latest event about the same subject: its open, not yet seen.
            let latest = events.iter().rposition(|e| e.same_subject(&event));
            if let Some(i) = latest.filter(|i| events[*i].kind() == SampleKind::Put) {
                events.remove(i);
                return;
            }
        }
        events.push_back(event);
        drop(events);
        listener_thread::wake();
    }

    /// The events waiting (none, possibly); `None` once the listener ended.
    fn take(&self) -> Option<Vec<E>> {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        if self.ended.load(Ordering::Acquire) {
            return None;
        }
        if !events.is_empty() {
            self.said_behind.store(false, Ordering::Relaxed);
        }
        Some(events.drain(..).collect())
    }

    fn end(&self) {
        let _events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        self.ended.store(true, Ordering::Release);
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

/// A listener of network events of type `E`: a queue, whose events the listener thread
/// hands to its callback; nothing more once dropped.
#[allow(private_bounds)]
pub struct EventsListener<E: NetworkEvent> {
    session: Weak<Inner>,
    queue: Arc<Queue<E>>,
    /// Dropped after the queue ended: waits for a callback that is running.
    _registration: Registration,
}

impl<E: NetworkEvent> Drop for EventsListener<E> {
    fn drop(&mut self) {
        if let Some(session) = self.session.upgrade() {
            E::listeners(&session).remove(&self.queue);
        }
        self.queue.end();
    }
}

/// An events listener as the listener thread runs it.
struct EventsWatch<E> {
    queue: Arc<Queue<E>>,
    callback: Box<dyn Fn(E) + Send>,
}

impl<E: NetworkEvent> Watch for EventsWatch<E> {
    fn run(&mut self) -> bool {
        let Some(events) = self.queue.take() else {
            return false;
        };
        for event in events {
            (self.callback)(event);
        }
        true
    }
}

impl NetworkEvent for TransportEvent {
    const WHAT: &'static str = "transport";

    fn kind(&self) -> SampleKind {
        self.kind
    }

    fn same_subject(&self, other: &Self) -> bool {
        self.zid == other.zid
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

    fn kind(&self) -> SampleKind {
        self.kind
    }

    fn same_subject(&self, other: &Self) -> bool {
        self.zid == other.zid && self.src == other.src && self.dst == other.dst
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
        let watch = EventsWatch {
            queue: queue.clone(),
            callback,
        };
        match listener_thread::register(Box::new(watch)) {
            Ok(registration) => Ok(EventsListener {
                session: Arc::downgrade(self),
                queue,
                _registration: registration,
            }),
            Err(e) => {
                E::listeners(self).remove(&queue);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: SampleKind, node: u128) -> TransportEvent {
        TransportEvent {
            kind,
            zid: ZenohId::new(node).unwrap(),
            whatami: WhatAmI::Client,
            qos: true,
        }
    }

    fn waiting(queue: &Queue<TransportEvent>) -> Vec<(SampleKind, u128)> {
        let events = queue.events.lock().unwrap();
        events.iter().map(|e| (e.kind, e.zid.to_u128())).collect()
    }

    #[test]
    fn a_listener_within_its_bound_is_told_everything() {
        let queue = Queue::new();
        queue.push(event(SampleKind::Put, 1));
        queue.push(event(SampleKind::Delete, 1));
        assert_eq!(
            waiting(&queue),
            [(SampleKind::Put, 1), (SampleKind::Delete, 1)]
        );
    }

    #[test]
    fn a_listener_behind_is_told_less_but_every_close_follows_its_open() {
        let queue = Queue::new();
        for node in 1..=WAITING_MOST as u128 {
            queue.push(event(SampleKind::Put, node));
        }
        // Node 5 closes before the listener saw it open: neither is told.
        queue.push(event(SampleKind::Delete, 5));
        assert_eq!(queue.events.lock().unwrap().len(), WAITING_MOST - 1);
        assert!(!waiting(&queue).contains(&(SampleKind::Put, 5)));
        // Past the bound, opens are kept (bounded by the sessions open)...
        queue.push(event(SampleKind::Put, 5000));
        queue.push(event(SampleKind::Put, 5001));
        // ...and a close whose open was seen already is kept too.
        let seen = queue.take().unwrap();
        assert_eq!(seen.len(), WAITING_MOST + 1);
        for node in 1..=WAITING_MOST as u128 {
            queue.push(event(SampleKind::Delete, node));
        }
        queue.push(event(SampleKind::Delete, 5000));
        assert_eq!(queue.events.lock().unwrap().len(), WAITING_MOST + 1);
        // A node that reconnects and closes again: its close removes its second open,
        // and its first close stays.
        queue.push(event(SampleKind::Put, 7));
        queue.push(event(SampleKind::Delete, 7));
        assert_eq!(queue.events.lock().unwrap().len(), WAITING_MOST + 1);
        assert_eq!(
            waiting(&queue)
                .iter()
                .filter(|(_, n)| *n == 7)
                .collect::<Vec<_>>(),
            [&(SampleKind::Delete, 7)],
            "its open and close after the bound cancel; its earlier close stays"
        );
    }
}
