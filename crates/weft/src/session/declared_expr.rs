//! A declared publisher's key expression, declared on each face it sends to: the face is
//! told once `DeclareKeyExpr(id, key)`, and every put after it names the key by that
//! two-byte id instead of its text (an 8-byte sample on `robot/arm/joint/state` is 22
//! bytes smaller on the wire). Zenoh-Pico's and Zenoh's receivers resolve such ids as
//! weft's do (`Face::resolve`).
//!
//! The declaration goes in the same lane as the puts (their priority, on whatever link
//! carries it), reliably, and with their congestion control: it reaches the face before
//! them, and never makes a put wait longer than the put itself would. Only
//! stream links get one (a datagram may be lost, and every put after it with it), and not
//! links under access control (its egress check reads the key's text). The ids are the
//! session's, from [`ExprIds`]; a publisher gone withdraws its id from the faces that
//! knew it (`UndeclareKeyExpr`) and gives it back.

use std::sync::{Arc, Weak};

use weft_proto::core::{CongestionControl, Mapping, NetworkQos, Priority, Reliability, WireExpr};
use weft_proto::network::{Declaration, Declare, DeclareKeyExpr, NetworkMessage, UndeclareKeyExpr};

use super::face_transport::FaceTransport;
use crate::transport::Caller;

/// The key-expression ids of a session's publishers: 1 to 65,535, those given back used
/// again first.
#[derive(Debug, Default)]
pub(crate) struct ExprIds {
    /// The highest id given out so far.
    next: u16,
    /// Ids given back.
    free: Vec<u16>,
}

impl ExprIds {
    /// An id, if one is left (else the publisher sends its key's text).
    pub(crate) fn take(&mut self) -> Option<u16> {
        if let Some(id) = self.free.pop() {
            return Some(id);
        }
        self.next = self.next.checked_add(1)?;
        Some(self.next)
    }

    /// Gives `id` back.
    pub(crate) fn give_back(&mut self, id: u16) {
        self.free.push(id);
    }
}

/// A publisher's key expression and the faces it is declared on.
#[derive(Debug)]
pub(crate) struct DeclaredExpr {
    id: u16,
    /// The faces told the id (held weakly: a face gone frees its entry, and a new face
    /// cannot take a former one's place while it is held).
    faces: Vec<Weak<dyn FaceTransport>>,
    /// Whether each of the publisher's current targets knows the id, in the targets'
    /// order (set by [`DeclaredExpr::align`] when the routes change): a put looks at a
    /// flag per target, not at the faces.
    known: Vec<bool>,
}

impl DeclaredExpr {
    /// A key expression to declare under `id`, on no face yet.
    pub(crate) const fn new(id: u16) -> Self {
        Self {
            id,
            faces: Vec::new(),
            known: Vec::new(),
        }
    }

    /// The id.
    pub(crate) const fn id(&self) -> u16 {
        self.id
    }

    /// The wire expression naming the key on a face that knows the id.
    pub(crate) const fn wire_expr(&self) -> WireExpr<'static> {
        WireExpr {
            scope: self.id,
            suffix: "",
            mapping: Mapping::Sender,
        }
    }

    /// Whether `t` knows the id.
    fn known_by(&self, t: &Arc<dyn FaceTransport>) -> bool {
        self.faces
            .iter()
            .any(|f| std::ptr::addr_eq(f.as_ptr(), Arc::as_ptr(t)))
    }

    /// The publisher's routes changed to `targets`: forgets the faces that are gone, and
    /// notes which targets know the id.
    pub(crate) fn align(&mut self, targets: &[Arc<dyn FaceTransport>]) {
        self.faces
            .retain(|f| f.upgrade().is_some_and(|t| !t.is_closed()));
        self.known = targets.iter().map(|t| self.known_by(t)).collect();
    }

    /// Makes sure `t`, the `target`-th of the routes last aligned with, knows the id
    /// before a put at `priority` with `congestion`: `true` when it does (the put may
    /// name the key by it), `false` when this face is not to be told one or could not be
    /// now (the put then carries the key's text).
    pub(crate) fn declare_on(
        &mut self,
        (target, t): (usize, &Arc<dyn FaceTransport>),
        key: &str,
        (priority, congestion): (Priority, CongestionControl),
        caller: &Caller,
    ) -> bool {
        if self.known.get(target) == Some(&true) {
            return true;
        }
        if !t.keeps_order() || t.access_control().is_some() {
            return false;
        }
        let mut declare = Declare::new(
            None,
            Declaration::KeyExpr(DeclareKeyExpr {
                id: self.id,
                wire_expr: WireExpr::key(key),
                unknown: Default::default(),
            }),
        );
        declare.qos = NetworkQos::new(priority, congestion, false);
        let sent = t.send(
            &NetworkMessage::Declare(declare),
            priority,
            Reliability::Reliable,
            congestion,
            caller,
        );
        if sent.is_err() {
            return false;
        }
        self.faces.push(Arc::downgrade(t));
        if let Some(known) = self.known.get_mut(target) {
            *known = true;
        }
        true
    }

    /// Withdraws the id from every face that knows it, at `priority` (after the puts
    /// before it), and forgets them.
    pub(crate) fn withdraw(&mut self, priority: Priority, caller: &Caller) {
        let mut undeclare = Declare::new(
            None,
            Declaration::UndeclareKeyExpr(UndeclareKeyExpr {
                id: self.id,
                unknown: Default::default(),
            }),
        );
        undeclare.qos = NetworkQos::new(priority, CongestionControl::Block, false);
        let msg = NetworkMessage::Declare(undeclare);
        self.known.clear();
        for t in self.faces.drain(..).filter_map(|f| f.upgrade()) {
            let _ = t.send(
                &msg,
                priority,
                Reliability::Reliable,
                CongestionControl::Block,
                caller,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_given_out_once_and_reused_once_given_back() {
        let mut ids = ExprIds::default();
        assert_eq!((ids.take(), ids.take()), (Some(1), Some(2)));
        ids.give_back(1);
        assert_eq!(ids.take(), Some(1));
        assert_eq!(ids.take(), Some(3));
        let mut full = ExprIds {
            next: u16::MAX,
            free: Vec::new(),
        };
        assert_eq!(full.take(), None, "no id is left: the key's text is sent");
    }
}
