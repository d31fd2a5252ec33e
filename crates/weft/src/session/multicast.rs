//! A UDP multicast group as one face of the session (Zenoh's multicast transport, peer
//! mode).
//!
//! Eclipse Zenoh floods data to a group: every publication goes to it, whatever its
//! members declared, and what comes from a member is taken as from that member. weft
//! gives the group one face, whose ZenohID is derived from the group's locator (no node
//! has it):
//!
//! - sends on the face go to the group, each message in a datagram of its own right away
//!   (fragmented beyond the group's batch size), with this node's sequence numbers;
//! - the face holds a subscriber on `**`, so that every publication is routed to the
//!   group as Zenoh routes it; no query is (Zenoh routes none to a group), and nothing is
//!   introduced to the group (no declarations, no interests);
//! - what members send is handed to the session as received on the face, each member's
//!   own key-expression ids resolved first (members choose ids independently); their
//!   other declarations, interests and queries are not taken (counted as discarded), as
//!   the group face is already routed everything.
//!
//! Membership (Joins, per-member sequence numbers, leases) is
//! `weft_transport::multicast::Members`; this module runs it on the I/O threads, as a
//! socket they serve beside the unicast links (`transport::Served`): one of them reads
//! the group's socket, routes what comes (callbacks run there, under its watchdog) and,
//! on its timer, drops the members whose lease ended. This node's Joins are timers of the
//! links loop (`Timeout::Periodic`), which runs no callback: a callback that blocks does
//! not silence the node.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use weft_keyexpr::OwnedKeyExpr;
use weft_proto::core::{CongestionControl, Priority, Reliability, WhatAmI, WireExpr, ZenohId};
use weft_proto::network::{Declaration, NetworkMessage, Push};
use weft_proto::transport::{Close, CloseReason, TransportMessage};
use weft_transport::establish::Negotiated;
use weft_transport::multicast::{GroupParams, JoinSchedule, MemberEvent, Members};
use weft_transport::rx::Incoming;
use weft_transport::tx::{Pushed, Transmitter};

use super::deadlines::{Periodic, Timeout};
use super::face::Face;
use super::face_transport::FaceTransport;
use super::{Inner, OpenError};
use crate::endpoint::Endpoint;
use crate::link::multicast::GroupSockets;
use crate::transport::{
    Caller, DiscardReason, DropReason, Readable, ReceivedBatch, SendError, Served, TransportStats,
    Turn,
};

/// The longest the group's timer waits before looking whether the group was closed (and
/// letting its socket go).
const CLOSE_CHECK: Duration = Duration::from_millis(100);

/// One multicast group this session is a member of.
pub(crate) struct Group {
    me: Weak<Self>,
    /// The face's id (derived from the locator).
    face_zid: ZenohId,
    describe: String,
    sockets: GroupSockets,
    params: GroupParams,
    tx: Mutex<Transmitter>,
    closed: AtomicBool,
    /// When this node's next Join is due.
    joins: Mutex<JoinSchedule>,
    stats: TransportStats,
    /// The session, for handing on what members send.
    inner: Weak<Inner>,
    /// What the I/O thread serving the group keeps of its members.
    members: Mutex<GroupMembers>,
    /// Whether an I/O thread still serves the group's socket.
    served: AtomicBool,
}

/// The members of a group, as the I/O thread serving it keeps them.
struct GroupMembers {
    /// Their membership: Joins, sequence numbers, leases.
    members: Members,
    /// The key expressions each declared.
    exprs: MemberExprs,
    /// Membership changes not yet logged.
    events: Vec<MemberEvent>,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("describe", &self.describe)
            .finish_non_exhaustive()
    }
}

/// The face id of the group at `locator`: a hash of it (two FNV-1a of 64 bits).
fn group_zid(locator: &str) -> ZenohId {
    let fnv = |seed: u64| {
        locator.bytes().fold(seed, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&fnv(0xcbf2_9ce4_8422_2325).to_le_bytes());
    bytes[8..].copy_from_slice(&fnv(0x8422_2325_cbf2_9ce4).to_le_bytes());
    ZenohId::from_le_slice(&bytes).expect("16 bytes make an id")
}

/// Joins the group `ep` names (from `listen` or `connect`: the same for a group) and
/// makes it a face of the session; returns the group's locator.
pub(crate) fn open(inner: &Arc<Inner>, ep: &Endpoint) -> Result<String, OpenError> {
    let describe = format!("udp/{}", ep.address);
    let refused = |reason: String| OpenError::Listen {
        endpoint: ep.to_string(),
        reason,
    };
    if inner.access_control.is_some() {
        // Access control decides per face from its subjects (interface, ZenohID...), and
        // a group's members have no face of their own: refused rather than unchecked.
        return Err(refused(
            "access control does not cover multicast groups in weft: a group cannot be \
             joined while access_control is enabled"
                .into(),
        ));
    }
    let sockets = GroupSockets::open(ep).map_err(|e| refused(e.to_string()))?;
    let mut params = GroupParams::new(inner.zid, inner.config.mode);
    params.lease = inner.config.lease;
    params.join_interval = inner.config.multicast_join_interval;
    params.max_members = inner.config.multicast_max_sessions;
    params.qos = inner.config.multicast_qos;
    params.max_message = inner.config.max_message_size;
    // As Zenoh: the configured batch size, at most 8192 (members must all announce the
    // same: 2048 for zenoh-pico's default build).
    params.batch_size = inner.config.batch_size.min(params.batch_size);
    let mut random = [0u8; 4];
    getrandom::fill(&mut random).map_err(|e| refused(e.to_string()))?;
    let initial_sn = u32::from_le_bytes(random) & (params.resolution.frame_sn().max_sn() as u32);
    let n = Negotiated {
        peer_zid: group_zid(&describe),
        peer_whatami: WhatAmI::Peer,
        resolution: params.resolution,
        batch_size: params.batch_size,
        qos: params.qos,
        patch: 1,
        own_lease_ms: params.lease.as_millis() as u64,
        peer_lease_ms: params.lease.as_millis() as u64,
        own_initial_sn: initial_sn,
        peer_initial_sn: 0,
        link_priorities: None,
    };
    let params_join_interval = params.join_interval;
    let members = GroupMembers {
        members: Members::new(params.clone()),
        exprs: MemberExprs::new(),
        events: Vec::new(),
    };
    let group = Arc::new_cyclic(|me| Group {
        me: me.clone(),
        face_zid: n.peer_zid,
        describe: describe.clone(),
        sockets,
        tx: Mutex::new(Transmitter::new(&n, usize::from(params.batch_size))),
        params,
        closed: AtomicBool::new(false),
        joins: Mutex::new(JoinSchedule::new(params_join_interval, Instant::now())),
        stats: TransportStats::default(),
        inner: Arc::downgrade(inner),
        members: Mutex::new(members),
        served: AtomicBool::new(true),
    });
    // The first Join goes out before anything else can be sent, so that members
    // take this node's first data (a `put` right after opening); the next are the links
    // loop's timers.
    let first = Instant::now();
    let next_join = group.join_if_due(first);
    attach(inner, &group)?;
    if let Some(next) = next_join {
        let joins: Arc<dyn Periodic> = group.clone();
        inner.schedule_deadline(next, Timeout::Periodic(Arc::downgrade(&joins)));
    }
    let served: Arc<dyn Served> = group.clone();
    if let Err(e) = crate::transport::serve_socket(served) {
        group.served.store(false, Ordering::Release);
        group.start_close_by(CloseReason::GENERIC, None, &Caller::App);
        inner.remove_face(&*group, &Caller::App);
        return Err(OpenError::Listen {
            endpoint: ep.to_string(),
            reason: format!("cannot read the group: {e}"),
        });
    }
    tracing::info!(
        group = %describe,
        zid = %inner.zid,
        own = %group.sockets.own,
        "member of multicast group"
    );
    Ok(describe)
}

/// Makes `group` a face: routed every publication, introduced nothing.
fn attach(inner: &Arc<Inner>, group: &Arc<Group>) -> Result<(), OpenError> {
    let t: Arc<dyn FaceTransport> = group.clone();
    let everything = OwnedKeyExpr::new("**").expect("a valid key expression");
    let mut guard = inner.lock();
    let st = &mut *guard;
    if st.faces.contains_key(&group.face_zid) {
        return Err(OpenError::Listen {
            endpoint: group.describe.clone(),
            reason: "this session is a member of that group already".into(),
        });
    }
    let mut face = Face::new(t);
    face.initial_declarations_done = true;
    face.gossip_heard = true;
    st.declared
        .subscribers
        .declare(group.face_zid, &mut face.subscribers, Some(1), everything);
    st.faces.insert(group.face_zid, face);
    inner.routes_changed();
    drop(guard);
    inner.changed.notify_all();
    Ok(())
}

impl Group {
    /// Sends one datagram to the group; a full socket drops it (counted).
    fn send_datagram(&self, datagram: &[u8]) -> bool {
        match self.sockets.send_now(datagram) {
            Ok(true) => {
                self.stats.batches_out.fetch_add(1, Ordering::Relaxed);
                self.stats
                    .bytes_out
                    .fetch_add(datagram.len() as u64, Ordering::Relaxed);
                true
            }
            Ok(false) => false,
            Err(e) => {
                tracing::debug!(group = %self.describe, "cannot send to the group: {e}");
                false
            }
        }
    }

    fn send_message(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
    ) -> Result<(), SendError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(SendError::Closed);
        }
        // Without QoS, every message travels at the default priority (as Zenoh's).
        let priority = if self.params.qos {
            priority
        } else {
            Priority::Data
        };
        let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        let mut sent = true;
        match tx.push(msg, priority, reliability)? {
            Pushed::Appended => {}
            Pushed::Full => {
                tx.fragment(msg, priority, reliability, |batch| {
                    sent &= self.send_datagram(batch);
                })?;
            }
        }
        let batch = tx.take_lane(priority);
        if !batch.is_empty() {
            sent &= self.send_datagram(batch);
        }
        if sent {
            Ok(())
        } else {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            self.stats.drops.add(DropReason::Congestion, 1);
            Err(SendError::Dropped)
        }
    }

    /// Sends this node's Join if one is due at `now`; returns when the next is due, or
    /// `None` once the group is closed (the links loop's timer then ends).
    pub(crate) fn join_if_due(&self, now: Instant) -> Option<Instant> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let mut joins = self.joins.lock().unwrap_or_else(|e| e.into_inner());
        if joins.due(now) {
            self.send_join();
            joins.sent(now);
        }
        Some(joins.next())
    }

    /// Sends this node's Join (with the next SNs, under the transmitter's lock so that
    /// no datagram overtakes it).
    fn send_join(&self) {
        let tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        let join = self.params.join(|p, r| tx.next_sn(p, r));
        let mut out = Vec::with_capacity(64);
        if TransportMessage::Join(join).encode(&mut out).is_ok() {
            self.send_datagram(&out);
        }
    }

    fn send_close(&self, reason: CloseReason) {
        let mut out = Vec::with_capacity(8);
        let close = TransportMessage::Close(Close {
            reason,
            session: false,
            unknown: weft_proto::ext::Unknown::new(),
        });
        if close.encode(&mut out).is_ok() {
            let _tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
            self.send_datagram(&out);
        }
    }
}

/// This node's Joins, on the links loop's timers.
impl Periodic for Group {
    fn run_due(&self, now: Instant) -> Option<Instant> {
        self.join_if_due(now)
    }
}

/// What the group's thread keeps of each member beyond its membership: the key
/// expressions it declared, by id.
type MemberExprs = HashMap<ZenohId, HashMap<u16, String>>;

/// The group's socket, served by an I/O thread: what members send is handed to the
/// session, and the members whose lease ended are dropped.
impl Served for Group {
    fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.sockets.receive.as_raw_fd()
    }

    fn on_readable(&self, buf: &mut [u8], max_reads: usize, turn: &Rc<Turn>) -> Readable {
        if self.closed.load(Ordering::Acquire) {
            return Readable::Ended;
        }
        let Some(inner) = self.inner.upgrade() else {
            return Readable::Ended;
        };
        let Some(me) = self.me.upgrade() else {
            return Readable::Ended;
        };
        let caller = Caller::Turn(turn.clone());
        let mut guard = self.members.lock().unwrap_or_else(|e| e.into_inner());
        let m = &mut *guard;
        for _ in 0..max_reads {
            let (n, from) = match self.sockets.receive_now(buf) {
                Ok(Some(got)) => got,
                Ok(None) => return Readable::Drained,
                Err(e) => {
                    tracing::warn!(group = %self.describe, "cannot read the group: {e}");
                    return Readable::Drained;
                }
            };
            if self.sockets.is_own(from) {
                continue;
            }
            self.stats.batches_in.fetch_add(1, Ordering::Relaxed);
            self.stats.bytes_in.fetch_add(n as u64, Ordering::Relaxed);
            let datagram = &buf[..n];
            let batch = ReceivedBatch::new(datagram, true);
            turn.begin_batch();
            let exprs = &mut m.exprs;
            m.members.on_datagram(
                Instant::now(),
                from,
                datagram,
                &mut m.events,
                |zid, incoming| {
                    deliver(&inner, &me, exprs, zid, incoming, &batch, &caller);
                },
            );
            // A group is never paused: what its members send meanwhile would be lost
            // anyway.
            let _ = turn.end_batch();
            tell(self, &mut m.events, &mut m.exprs);
            if turn.hooks_pending() {
                // What was read goes to the hooks before the socket is read again.
                return Readable::More;
            }
        }
        Readable::More
    }

    fn on_timer(&self, now: Instant, _turn: &Rc<Turn>) -> Option<Instant> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let mut guard = self.members.lock().unwrap_or_else(|e| e.into_inner());
        let m = &mut *guard;
        m.members.handle_timeout(now, &mut m.events);
        tell(self, &mut m.events, &mut m.exprs);
        let next = m.members.poll_timeout().unwrap_or(now + CLOSE_CHECK);
        Some(next.min(now + CLOSE_CHECK))
    }

    fn finished(&self) {
        self.served.store(false, Ordering::Release);
    }
}

/// Logs membership changes and forgets what members that left declared.
fn tell(group: &Group, events: &mut Vec<MemberEvent>, exprs: &mut MemberExprs) {
    for e in events.drain(..) {
        match e {
            MemberEvent::Joined { addr, zid, whatami } => tracing::info!(
                group = %group.describe,
                member = %zid,
                whatami = whatami.as_str(),
                from = %addr,
                "multicast member joined"
            ),
            MemberEvent::Left { addr, zid, reason } => {
                exprs.remove(&zid);
                tracing::info!(
                    group = %group.describe,
                    member = %zid,
                    from = %addr,
                    "multicast member left ({reason:?})"
                );
            }
        }
    }
}

/// Hands one member's message to the session, as received on the group's face.
fn deliver(
    inner: &Arc<Inner>,
    group: &Arc<Group>,
    exprs: &mut MemberExprs,
    zid: ZenohId,
    incoming: &Incoming<'_, '_>,
    batch: &ReceivedBatch<'_>,
    caller: &Caller,
) {
    group.stats.messages_in.fetch_add(1, Ordering::Relaxed);
    let t: &dyn FaceTransport = &**group;
    match incoming.message {
        NetworkMessage::Push(push) if push.wire_expr.scope == 0 => {
            inner.dispatch(t, incoming, batch, caller);
        }
        NetworkMessage::Push(push) => {
            let Some(full) = resolve(exprs, zid, &push.wire_expr) else {
                group.stats.discarded.add(DiscardReason::UnknownKeyExpr, 1);
                return;
            };
            let resolved = NetworkMessage::Push(Push {
                wire_expr: WireExpr::key(&full),
                ..push.clone()
            });
            inner.dispatch(
                t,
                &Incoming {
                    message: &resolved,
                    ..*incoming
                },
                batch,
                caller,
            );
        }
        NetworkMessage::Declare(d) => match &d.body {
            Declaration::KeyExpr(k) => {
                if let Some(full) = resolve(exprs, zid, &k.wire_expr) {
                    exprs.entry(zid).or_default().insert(k.id, full);
                }
            }
            Declaration::UndeclareKeyExpr(k) => {
                if let Some(m) = exprs.get_mut(&zid) {
                    m.remove(&k.id);
                }
            }
            _ => group.stats.discarded.add(DiscardReason::NotOnMulticast, 1),
        },
        _ => group.stats.discarded.add(DiscardReason::NotOnMulticast, 1),
    }
}

/// The full key of a member's wire expression.
fn resolve(exprs: &MemberExprs, zid: ZenohId, we: &WireExpr<'_>) -> Option<String> {
    if we.scope == 0 {
        return Some(we.suffix.to_string());
    }
    let prefix = exprs.get(&zid)?.get(&we.scope)?;
    Some(format!("{prefix}{}", we.suffix))
}

impl FaceTransport for Group {
    fn peer_zid(&self) -> ZenohId {
        self.face_zid
    }

    fn peer_whatami(&self) -> WhatAmI {
        WhatAmI::Peer
    }

    fn describe(&self) -> &str {
        &self.describe
    }

    fn send(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        _congestion: CongestionControl,
        _caller: &Caller,
    ) -> Result<(), SendError> {
        self.send_message(msg, priority, reliability)
    }

    fn send_forwarded(
        &self,
        msg: &NetworkMessage<'_>,
        priority: Priority,
        reliability: Reliability,
        _congestion: CongestionControl,
        _caller: &Caller,
    ) -> Result<(), SendError> {
        self.send_message(msg, priority, reliability)
    }

    fn close(&self, reason: CloseReason, caller: &Caller) {
        self.start_close_by(reason, None, caller);
        self.wait_closed(Instant::now() + 2 * CLOSE_CHECK, caller);
    }

    fn start_close_by(&self, reason: CloseReason, _flush_by: Option<Instant>, _caller: &Caller) {
        // Nothing waits to be written: every message leaves when it is sent.
        if !self.closed.swap(true, Ordering::AcqRel) {
            self.send_close(reason);
        }
    }

    fn wait_closed(&self, deadline: Instant, caller: &Caller) {
        if caller.serves_links() {
            // A thread serving links never waits: its I/O thread lets the group go at
            // the group's next timer.
            return;
        }
        while self.served.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn keeps_order(&self) -> bool {
        // Datagrams may be lost.
        false
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn access_control(&self) -> Option<&Arc<crate::acl::Enforcer>> {
        None
    }

    fn set_manual_batching(&self, _on: bool) {}

    fn flush_pending(&self) {}

    fn handle(&self) -> Option<Arc<dyn FaceTransport>> {
        self.me.upgrade().map(|g| g as Arc<dyn FaceTransport>)
    }

    fn transport(&self) -> Option<Arc<crate::transport::Transport>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_face_id_is_stable_and_differs_per_group() {
        let a = group_zid("udp/224.0.0.224:7447");
        assert_eq!(a, group_zid("udp/224.0.0.224:7447"));
        assert_ne!(a, group_zid("udp/224.0.0.224:7448"));
    }

    #[test]
    fn a_member_s_key_expression_ids_are_its_own() {
        let mut exprs = MemberExprs::new();
        let (m1, m2) = (
            ZenohId::from_le_slice(&[1]).unwrap(),
            ZenohId::from_le_slice(&[2]).unwrap(),
        );
        exprs.entry(m1).or_default().insert(5, "demo/a".into());
        exprs.entry(m2).or_default().insert(5, "demo/b".into());
        let we = WireExpr {
            scope: 5,
            suffix: "/x",
            mapping: weft_proto::core::Mapping::Sender,
        };
        assert_eq!(resolve(&exprs, m1, &we).as_deref(), Some("demo/a/x"));
        assert_eq!(resolve(&exprs, m2, &we).as_deref(), Some("demo/b/x"));
        assert_eq!(
            resolve(&exprs, ZenohId::from_le_slice(&[3]).unwrap(), &we),
            None
        );
    }
}
