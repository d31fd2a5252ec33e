//! The receiving state of a multicast group (Zenoh's UDP multicast transport), with time
//! passed in.
//!
//! A group has no handshake. Each member announces itself to the group with a Join at a
//! fixed interval (its ZenohID, role, sequence-number resolution, batch size, lease and
//! the next sequence number of each channel). [`Members`] keeps, per source address, the
//! member that Join described: its own [`Receiver`] (sequence numbers per channel,
//! reassembly), its lease, and when it was last heard.
//!
//! - A datagram from an unknown source is ignored until that source sends a Join; a Join
//!   whose parameters do not match the group's (version, resolution, batch size, QoS) is
//!   ignored, as Eclipse Zenoh ignores it; beyond `max_members` new members are ignored.
//! - A Join from a known member refreshes it: its channels restart at the Join's next
//!   sequence numbers (a member that restarted on the same address resumes at once).
//!   A Join from a known address with another ZenohID or other parameters replaces the
//!   member (told as its leaving, then a new member's joining).
//! - A member not heard for its whole lease is dropped; a Close from it drops it at once.
//!
//! [`JoinSchedule`] says when this node's next Join is due: kept apart from [`Members`], so
//! that a driver may send Joins from a thread that never waits for what members send.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use weft_proto::batch::{BatchItem, BatchReader};
use weft_proto::core::{Priority, Reliability, Resolution, WhatAmI, ZenohId};
use weft_proto::transport::{CloseReason, Join, PrioritySn, TransportMessage};

use crate::establish::Negotiated;
use crate::rx::{Control, Incoming, Receiver, RxError, RxStats};

/// The protocol version members must announce.
pub const VERSION: u8 = 0x09;

/// Zenoh's interval between two Joins (`transport.multicast.join_interval`).
pub const DEFAULT_JOIN_INTERVAL: Duration = Duration::from_millis(2500);

/// The batch size Zenoh announces on a multicast group, and accepts from members.
pub const MULTICAST_BATCH_SIZE: u16 = 8192;

/// What this node is in the group, and what it accepts of other members.
#[derive(Debug, Clone)]
pub struct GroupParams {
    /// This node's id (a Join with it is this node's own, looped back).
    pub zid: ZenohId,
    /// This node's role.
    pub whatami: WhatAmI,
    /// Sequence-number resolution (members must announce the same).
    pub resolution: Resolution,
    /// Batch size (members must announce the same).
    pub batch_size: u16,
    /// This node's lease, announced in its Joins.
    pub lease: Duration,
    /// Time between two Joins of this node.
    pub join_interval: Duration,
    /// Members kept at most; Joins of new members beyond are ignored.
    pub max_members: usize,
    /// Whether QoS is on (members must agree).
    pub qos: bool,
    /// Largest message reassembled from fragments.
    pub max_message: usize,
}

impl GroupParams {
    /// Zenoh's defaults for a peer `zid`: 2.5 s between Joins, 10 s lease, 8192-byte
    /// batches, no QoS, at most 1000 members.
    pub fn new(zid: ZenohId, whatami: WhatAmI) -> Self {
        Self {
            zid,
            whatami,
            resolution: Resolution::DEFAULT,
            batch_size: MULTICAST_BATCH_SIZE,
            lease: Duration::from_secs(10),
            join_interval: DEFAULT_JOIN_INTERVAL,
            max_members: 1000,
            qos: false,
            max_message: 1 << 30,
        }
    }

    /// This node's Join, with the next sequence numbers of its channels: `next(priority,
    /// reliability)`.
    pub fn join(&self, next: impl Fn(Priority, Reliability) -> u32) -> Join<'static> {
        let sns = |p: Priority| PrioritySn {
            reliable: next(p, Reliability::Reliable),
            best_effort: next(p, Reliability::BestEffort),
        };
        Join {
            version: VERSION,
            whatami: self.whatami,
            zid: self.zid,
            resolution: self.resolution,
            batch_size: self.batch_size,
            lease_ms: self.lease.as_millis() as u64,
            // With QoS, the default priority's SNs travel in the extension only.
            next_sn: if self.qos {
                PrioritySn::default()
            } else {
                sns(Priority::Data)
            },
            qos: self.qos.then(|| Priority::ALL.map(sns)),
            shm: None,
            patch: Some(1),
            unknown: weft_proto::ext::Unknown::new(),
        }
    }
}

/// When this node's Joins are due: the first at once, then one per interval.
#[derive(Debug, Clone, Copy)]
pub struct JoinSchedule {
    interval: Duration,
    next: Instant,
}

impl JoinSchedule {
    /// A schedule whose first Join is due at `now`.
    pub fn new(interval: Duration, now: Instant) -> Self {
        Self {
            interval,
            next: now,
        }
    }

    /// When the next Join is due.
    pub const fn next(&self) -> Instant {
        self.next
    }

    /// Whether a Join is due at `now`.
    pub fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// A Join was sent at `now`: the next is due an interval later.
    pub fn sent(&mut self, now: Instant) {
        self.next = now + self.interval;
    }
}

/// Why a member left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftReason {
    /// Not heard for its whole lease.
    Expired,
    /// It sent a Close.
    Closed(CloseReason),
    /// A Join from its address described another member.
    Replaced,
}

/// A change in the group's membership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberEvent {
    /// A member joined.
    Joined {
        /// Where its datagrams come from.
        addr: SocketAddr,
        /// Its id.
        zid: ZenohId,
        /// Its role.
        whatami: WhatAmI,
    },
    /// A member left.
    Left {
        /// Where its datagrams came from.
        addr: SocketAddr,
        /// Its id.
        zid: ZenohId,
        /// Why.
        reason: LeftReason,
    },
}

/// Datagrams ignored, by reason; none of them ends the group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupDrops {
    /// Data from a source that sent no Join yet.
    pub unknown_source: u64,
    /// Joins refused: another version, resolution, batch size or QoS.
    pub incompatible_join: u64,
    /// Joins of new members beyond `max_members`.
    pub too_many_members: u64,
    /// This node's own datagrams, looped back.
    pub own: u64,
    /// Datagrams that broke the protocol (undecodable, a priority without QoS...).
    pub malformed: u64,
}

/// One member of the group, as its Join described it.
pub struct Member {
    /// Its id.
    pub zid: ZenohId,
    /// Its role.
    pub whatami: WhatAmI,
    /// Its lease: it is dropped after this long unheard.
    pub lease: Duration,
    /// Its batch size.
    pub batch_size: u16,
    /// Its resolution.
    pub resolution: Resolution,
    /// Whether it uses QoS.
    pub qos: bool,
    /// When a datagram last came from it.
    pub last_heard: Instant,
    receiver: Receiver,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("zid", &self.zid)
            .field("whatami", &self.whatami)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

impl Member {
    fn new(join: &Join<'_>, max_message: usize, now: Instant) -> Self {
        let n = Negotiated {
            peer_zid: join.zid,
            peer_whatami: join.whatami,
            resolution: join.resolution,
            batch_size: join.batch_size,
            qos: join.qos.is_some(),
            patch: join.patch.unwrap_or(0).min(1),
            own_lease_ms: 0,
            peer_lease_ms: join.lease_ms,
            own_initial_sn: 0,
            peer_initial_sn: join.next_sn.reliable,
            link_priorities: None,
        };
        let mut m = Self {
            zid: join.zid,
            whatami: join.whatami,
            lease: Duration::from_millis(join.lease_ms),
            batch_size: join.batch_size,
            resolution: join.resolution,
            qos: join.qos.is_some(),
            last_heard: now,
            receiver: Receiver::new(&n, max_message),
        };
        m.sync(join);
        m
    }

    /// Restarts its channels at the Join's next sequence numbers.
    fn sync(&mut self, join: &Join<'_>) {
        let mut set = |p: Priority, sn: &PrioritySn| {
            self.receiver.sync(p, Reliability::Reliable, sn.reliable);
            self.receiver
                .sync(p, Reliability::BestEffort, sn.best_effort);
        };
        match &join.qos {
            Some(sns) => {
                for (p, sn) in Priority::ALL.iter().zip(sns) {
                    set(*p, sn);
                }
            }
            None => set(Priority::Data, &join.next_sn),
        }
    }

    /// Whether `join` describes this member as it is (same id and parameters).
    fn same_as(&self, join: &Join<'_>) -> bool {
        self.zid == join.zid
            && self.whatami == join.whatami
            && self.resolution == join.resolution
            && self.batch_size == join.batch_size
            && self.qos == join.qos.is_some()
            && self.lease == Duration::from_millis(join.lease_ms)
    }

    /// Losses its receiver noticed.
    pub fn rx_stats(&self) -> RxStats {
        self.receiver.stats()
    }
}

/// The members of one group, by the address their datagrams come from.
#[derive(Debug)]
pub struct Members {
    params: GroupParams,
    members: HashMap<SocketAddr, Member>,
    drops: GroupDrops,
}

impl Members {
    /// An empty group.
    pub fn new(params: GroupParams) -> Self {
        Self {
            params,
            members: HashMap::new(),
            drops: GroupDrops::default(),
        }
    }

    /// What this node is in the group.
    pub const fn params(&self) -> &GroupParams {
        &self.params
    }

    /// The members, by address.
    pub fn iter(&self) -> impl Iterator<Item = (&SocketAddr, &Member)> {
        self.members.iter()
    }

    /// The member sending from `addr`.
    pub fn get(&self, addr: &SocketAddr) -> Option<&Member> {
        self.members.get(addr)
    }

    /// How many members are known.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether no member is known.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Datagrams ignored so far.
    pub const fn drops(&self) -> GroupDrops {
        self.drops
    }

    /// When the first member's lease ends, if there is a member.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.members.values().map(|m| m.last_heard + m.lease).min()
    }

    /// Drops the members not heard for their whole lease by `now`, telling `events`.
    pub fn handle_timeout(&mut self, now: Instant, events: &mut Vec<MemberEvent>) {
        let expired: Vec<SocketAddr> = self
            .members
            .iter()
            .filter(|(_, m)| now >= m.last_heard + m.lease)
            .map(|(a, _)| *a)
            .collect();
        for addr in expired {
            self.remove(addr, LeftReason::Expired, events);
        }
    }

    fn remove(&mut self, addr: SocketAddr, reason: LeftReason, events: &mut Vec<MemberEvent>) {
        if let Some(m) = self.members.remove(&addr) {
            events.push(MemberEvent::Left {
                addr,
                zid: m.zid,
                reason,
            });
        }
    }

    /// Takes one datagram from `from` received at `now`: Joins change the membership
    /// (told in `events`), a known member's network messages go to `deliver` in order,
    /// with the member's id.
    pub fn on_datagram<F>(
        &mut self,
        now: Instant,
        from: SocketAddr,
        datagram: &[u8],
        events: &mut Vec<MemberEvent>,
        mut deliver: F,
    ) where
        F: FnMut(ZenohId, &Incoming<'_, '_>),
    {
        let first = BatchReader::new(datagram).next();
        if let Some(Ok(BatchItem::Transport(TransportMessage::Join(join)))) = first {
            self.on_join(now, from, &join, events);
            return;
        }
        let Some(member) = self.members.get_mut(&from) else {
            self.drops.unknown_source += 1;
            return;
        };
        member.last_heard = now;
        let zid = member.zid;
        match member
            .receiver
            .on_batch(datagram, |incoming| deliver(zid, incoming))
        {
            Ok(Control::Alive) => {}
            Ok(Control::Closed { reason, .. }) => {
                self.remove(from, LeftReason::Closed(reason), events);
            }
            Err(RxError::Unexpected(_) | RxError::Decode(_))
            | Err(RxError::PriorityWithoutQos(_) | RxError::SnOutOfRange(_)) => {
                // A member's broken datagram is dropped; the member stays (its next
                // Join or lease decides).
                self.drops.malformed += 1;
            }
        }
    }

    fn on_join(
        &mut self,
        now: Instant,
        from: SocketAddr,
        join: &Join<'_>,
        events: &mut Vec<MemberEvent>,
    ) {
        if join.zid == self.params.zid {
            self.drops.own += 1;
            return;
        }
        let compatible = join.version == VERSION
            && join.resolution == self.params.resolution
            && join.batch_size == self.params.batch_size
            && join.qos.is_some() == self.params.qos;
        if let Some(member) = self.members.get_mut(&from) {
            if compatible && member.same_as(join) {
                member.last_heard = now;
                member.sync(join);
                return;
            }
            self.remove(from, LeftReason::Replaced, events);
        }
        if !compatible {
            self.drops.incompatible_join += 1;
            return;
        }
        if self.members.len() >= self.params.max_members {
            self.drops.too_many_members += 1;
            return;
        }
        self.members
            .insert(from, Member::new(join, self.params.max_message, now));
        events.push(MemberEvent::Joined {
            addr: from,
            zid: join.zid,
            whatami: join.whatami,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_proto::core::WireExpr;
    use weft_proto::network::{NetworkMessage, Push};
    use weft_proto::transport::{Close, FrameHeader};
    use weft_proto::zenoh::{PushBody, Put};

    fn zid(n: u8) -> ZenohId {
        ZenohId::from_le_slice(&[n, 0xab]).unwrap()
    }

    fn addr(n: u8) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, n], 40000 + u16::from(n)))
    }

    fn params() -> GroupParams {
        GroupParams::new(zid(1), WhatAmI::Peer)
    }

    fn join_batch(p: &GroupParams, reliable: u32, best_effort: u32) -> Vec<u8> {
        let join = p.join(|_, r| match r {
            Reliability::Reliable => reliable,
            Reliability::BestEffort => best_effort,
        });
        let mut out = Vec::new();
        join.encode(&mut out).unwrap();
        out
    }

    fn member_params(n: u8) -> GroupParams {
        GroupParams::new(zid(n), WhatAmI::Peer)
    }

    /// A datagram with one Frame at `sn` holding a Put on `key`.
    fn data(sn: u32, reliability: Reliability, key: &str) -> Vec<u8> {
        let mut out = Vec::new();
        FrameHeader::new(reliability, Priority::Data, sn)
            .encode(&mut out)
            .unwrap();
        let msg =
            NetworkMessage::Push(Push::new(WireExpr::key(key), PushBody::Put(Put::new(b"v"))));
        msg.encode(&mut out).unwrap();
        out
    }

    /// Feeds a datagram; returns the keys delivered, with their member.
    fn feed(
        g: &mut Members,
        now: Instant,
        from: SocketAddr,
        d: &[u8],
        events: &mut Vec<MemberEvent>,
    ) -> Vec<(ZenohId, String)> {
        let mut got = Vec::new();
        g.on_datagram(now, from, d, events, |z, inc| {
            if let NetworkMessage::Push(p) = inc.message {
                got.push((z, p.wire_expr.suffix.to_string()));
            }
        });
        got
    }

    #[test]
    fn data_before_a_join_is_ignored_and_a_join_makes_a_member() {
        let t0 = Instant::now();
        let mut g = Members::new(params());
        let mut ev = Vec::new();
        assert!(feed(
            &mut g,
            t0,
            addr(2),
            &data(5, Reliability::Reliable, "a"),
            &mut ev
        )
        .is_empty());
        assert_eq!(g.drops().unknown_source, 1);
        feed(
            &mut g,
            t0,
            addr(2),
            &join_batch(&member_params(2), 5, 9),
            &mut ev,
        );
        assert_eq!(
            ev,
            [MemberEvent::Joined {
                addr: addr(2),
                zid: zid(2),
                whatami: WhatAmI::Peer
            }]
        );
        let got = feed(
            &mut g,
            t0,
            addr(2),
            &data(5, Reliability::Reliable, "a"),
            &mut ev,
        );
        assert_eq!(got, [(zid(2), "a".to_string())]);
        // Best effort follows its own next SN.
        let got = feed(
            &mut g,
            t0,
            addr(2),
            &data(9, Reliability::BestEffort, "b"),
            &mut ev,
        );
        assert_eq!(got, [(zid(2), "b".to_string())]);
    }

    #[test]
    fn each_member_has_its_own_sequence_numbers() {
        let t0 = Instant::now();
        let mut g = Members::new(params());
        let mut ev = Vec::new();
        feed(
            &mut g,
            t0,
            addr(2),
            &join_batch(&member_params(2), 100, 0),
            &mut ev,
        );
        feed(
            &mut g,
            t0,
            addr(3),
            &join_batch(&member_params(3), 7, 0),
            &mut ev,
        );
        assert_eq!(g.len(), 2);
        let r = Reliability::Reliable;
        assert_eq!(
            feed(&mut g, t0, addr(2), &data(100, r, "x"), &mut ev).len(),
            1
        );
        assert_eq!(
            feed(&mut g, t0, addr(3), &data(7, r, "y"), &mut ev).len(),
            1
        );
        // A duplicate of member 2's frame is stale; member 3's next is in order.
        assert!(feed(&mut g, t0, addr(2), &data(100, r, "x"), &mut ev).is_empty());
        assert_eq!(
            feed(&mut g, t0, addr(3), &data(8, r, "y"), &mut ev).len(),
            1
        );
        assert_eq!(g.get(&addr(2)).unwrap().rx_stats().stale, 1);
        assert_eq!(g.get(&addr(3)).unwrap().rx_stats().stale, 0);
    }

    #[test]
    fn a_member_unheard_for_its_lease_is_dropped_and_may_join_again() {
        let t0 = Instant::now();
        let mut g = Members::new(params());
        let mut ev = Vec::new();
        let mut p2 = member_params(2);
        p2.lease = Duration::from_secs(3);
        feed(&mut g, t0, addr(2), &join_batch(&p2, 0, 0), &mut ev);
        ev.clear();
        assert_eq!(g.poll_timeout(), Some(t0 + Duration::from_secs(3)));
        // Heard at 2 s: alive until 5 s.
        feed(
            &mut g,
            t0 + Duration::from_secs(2),
            addr(2),
            &data(0, Reliability::Reliable, "a"),
            &mut ev,
        );
        g.handle_timeout(t0 + Duration::from_millis(4999), &mut ev);
        assert!(ev.is_empty());
        g.handle_timeout(t0 + Duration::from_secs(5), &mut ev);
        assert_eq!(
            ev,
            [MemberEvent::Left {
                addr: addr(2),
                zid: zid(2),
                reason: LeftReason::Expired
            }]
        );
        assert!(g.is_empty());
        ev.clear();
        // Its data is ignored until it joins again.
        let t6 = t0 + Duration::from_secs(6);
        assert!(feed(
            &mut g,
            t6,
            addr(2),
            &data(1, Reliability::Reliable, "a"),
            &mut ev
        )
        .is_empty());
        feed(&mut g, t6, addr(2), &join_batch(&p2, 1, 0), &mut ev);
        assert_eq!(g.len(), 1);
        assert_eq!(
            feed(
                &mut g,
                t6,
                addr(2),
                &data(1, Reliability::Reliable, "a"),
                &mut ev
            )
            .len(),
            1
        );
    }

    #[test]
    fn a_join_resynchronises_a_member_and_another_zid_replaces_it() {
        let t0 = Instant::now();
        let mut g = Members::new(params());
        let mut ev = Vec::new();
        let r = Reliability::Reliable;
        feed(
            &mut g,
            t0,
            addr(2),
            &join_batch(&member_params(2), 50, 0),
            &mut ev,
        );
        assert_eq!(
            feed(&mut g, t0, addr(2), &data(50, r, "a"), &mut ev).len(),
            1
        );
        // The member restarted with the same id and address: its new SNs are taken from
        // its Join, without a leave.
        ev.clear();
        feed(
            &mut g,
            t0,
            addr(2),
            &join_batch(&member_params(2), 3, 0),
            &mut ev,
        );
        assert!(ev.is_empty());
        assert_eq!(
            feed(&mut g, t0, addr(2), &data(3, r, "b"), &mut ev).len(),
            1
        );
        // Another node on that address: the old member leaves, the new one joins.
        feed(
            &mut g,
            t0,
            addr(2),
            &join_batch(&member_params(9), 0, 0),
            &mut ev,
        );
        assert_eq!(
            ev,
            [
                MemberEvent::Left {
                    addr: addr(2),
                    zid: zid(2),
                    reason: LeftReason::Replaced
                },
                MemberEvent::Joined {
                    addr: addr(2),
                    zid: zid(9),
                    whatami: WhatAmI::Peer
                }
            ]
        );
        assert_eq!(
            feed(&mut g, t0, addr(2), &data(0, r, "c"), &mut ev),
            [(zid(9), "c".to_string())]
        );
    }

    #[test]
    fn incompatible_own_and_surplus_joins_are_ignored() {
        let t0 = Instant::now();
        let mut p = params();
        p.max_members = 1;
        let mut g = Members::new(p);
        let mut ev = Vec::new();
        let mut other_batch = member_params(2);
        other_batch.batch_size = 65535;
        feed(
            &mut g,
            t0,
            addr(2),
            &join_batch(&other_batch, 0, 0),
            &mut ev,
        );
        let mut with_qos = member_params(3);
        with_qos.qos = true;
        feed(&mut g, t0, addr(3), &join_batch(&with_qos, 0, 0), &mut ev);
        assert_eq!(g.drops().incompatible_join, 2);
        feed(&mut g, t0, addr(1), &join_batch(&params(), 0, 0), &mut ev);
        assert_eq!(g.drops().own, 1);
        feed(
            &mut g,
            t0,
            addr(4),
            &join_batch(&member_params(4), 0, 0),
            &mut ev,
        );
        feed(
            &mut g,
            t0,
            addr(5),
            &join_batch(&member_params(5), 0, 0),
            &mut ev,
        );
        assert_eq!(g.len(), 1);
        assert_eq!(g.drops().too_many_members, 1);
    }

    #[test]
    fn a_close_drops_the_member_at_once() {
        let t0 = Instant::now();
        let mut g = Members::new(params());
        let mut ev = Vec::new();
        feed(
            &mut g,
            t0,
            addr(2),
            &join_batch(&member_params(2), 0, 0),
            &mut ev,
        );
        ev.clear();
        let mut close = Vec::new();
        TransportMessage::Close(Close {
            reason: CloseReason::GENERIC,
            session: false,
            unknown: weft_proto::ext::Unknown::new(),
        })
        .encode(&mut close)
        .unwrap();
        feed(&mut g, t0, addr(2), &close, &mut ev);
        assert_eq!(
            ev,
            [MemberEvent::Left {
                addr: addr(2),
                zid: zid(2),
                reason: LeftReason::Closed(CloseReason::GENERIC)
            }]
        );
    }

    #[test]
    fn the_join_carries_the_next_sns_and_qos_ones_in_its_extension() {
        let mut p = params();
        let j = p.join(|_, r| if r.is_reliable() { 4 } else { 8 });
        assert_eq!(
            j.next_sn,
            PrioritySn {
                reliable: 4,
                best_effort: 8
            }
        );
        assert!(j.qos.is_none());
        assert_eq!(j.batch_size, 8192);
        assert_eq!(j.lease_ms, 10_000);
        p.qos = true;
        let j = p.join(|pr, _| u32::from(pr.to_u8()));
        assert_eq!(
            j.qos.unwrap()[7],
            PrioritySn {
                reliable: 7,
                best_effort: 7
            }
        );
    }

    #[test]
    fn joins_are_due_at_once_then_every_interval() {
        let t0 = Instant::now();
        let mut j = JoinSchedule::new(DEFAULT_JOIN_INTERVAL, t0);
        assert!(j.due(t0));
        j.sent(t0);
        assert!(!j.due(t0 + Duration::from_millis(2499)));
        assert_eq!(j.next(), t0 + DEFAULT_JOIN_INTERVAL);
        assert!(j.due(t0 + DEFAULT_JOIN_INTERVAL));
    }
}
