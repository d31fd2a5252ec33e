//! Gossip scouting, pure logic: nodes tell the nodes connected to them where the others
//! can be reached, so that peers connected through a router (or through a peer) connect
//! to each other directly.
//!
//! The messages are link-state lists (network OAM 1), the format routers flood for their
//! mesh, with locators. A node sends one to every new neighbour of a role in its gossip
//! target: itself (id, role, locators) and the neighbours it has heard from. When a
//! neighbour first tells where it can be reached (or tells new locators), the news is
//! relayed to the other neighbours; with `multihop`, news of any node is relayed. Every
//! node named with locators, of a role in `autoconnect`, is a node to connect to (the
//! session skips those it is connected or connecting to).
//!
//! No sockets, no clocks: the session feeds link events and received lists, and sends
//! and connects as told.

use std::collections::{BTreeMap, HashMap};

use weft_proto::core::{WhatAmI, WhatAmIMatcher, ZenohId};
use weft_proto::error::EncodeError;
use weft_proto::network::linkstate::{encode_list, LinkState};

use super::link_sn;
use crate::config::{AutoconnectStrategy, GossipConfig};

/// What a list says of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The node.
    pub(crate) zid: ZenohId,
    /// Its role.
    pub(crate) whatami: WhatAmI,
    /// Its sequence number (grows with each change it announces).
    pub(crate) sn: u64,
    /// Where it can be reached, when known.
    pub(crate) locators: Option<Vec<String>>,
    /// Its neighbours, as it announced them: with `multihop`, lists carry the whole
    /// graph (what Zenoh's multihop gossip expects: a node its graph cannot reach from
    /// itself is dropped); otherwise empty, as Zenoh's single-hop lists.
    pub(crate) links: Vec<ZenohId>,
}

/// A neighbour this node gossips with.
#[derive(Debug)]
struct Link {
    whatami: WhatAmI,
    /// The neighbour's local indexes of the nodes it named (a list may name a node by
    /// index alone once the index came with the id).
    psids: HashMap<u64, ZenohId>,
}

/// What a received list asks of the session.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Lists to send, per neighbour.
    pub(crate) sends: Vec<(ZenohId, Vec<Entry>)>,
    /// Nodes to connect to, with their locators.
    pub(crate) connect: Vec<(ZenohId, Vec<String>)>,
}

/// One node's gossip state.
#[derive(Debug)]
pub(crate) struct Gossip {
    own: ZenohId,
    whatami: WhatAmI,
    sn: u64,
    target: WhatAmIMatcher,
    autoconnect: WhatAmIMatcher,
    config: GossipConfig,
    links: BTreeMap<ZenohId, Link>,
    /// The latest news of each node heard of.
    nodes: BTreeMap<ZenohId, Entry>,
    /// This node's index of every node it names in its lists (itself 0).
    psids: HashMap<ZenohId, u64>,
}

impl Gossip {
    /// The gossip state of node `own`, of role `whatami`, configured by `config`.
    pub(crate) fn new(own: ZenohId, whatami: WhatAmI, config: &GossipConfig) -> Self {
        let enabled = config.enabled;
        Self {
            own,
            whatami,
            sn: 1,
            target: if enabled {
                config.target_for(whatami)
            } else {
                WhatAmIMatcher(0)
            },
            autoconnect: if enabled {
                config.autoconnect_for(whatami)
            } else {
                WhatAmIMatcher(0)
            },
            config: config.clone(),
            links: BTreeMap::new(),
            nodes: BTreeMap::new(),
            psids: HashMap::from([(own, 0)]),
        }
    }

    /// A neighbour `zid` of role `whatami` connected; `locators` are where this node can
    /// be reached. Returns the list to send it, if it is a gossip target.
    pub(crate) fn link_up(
        &mut self,
        zid: ZenohId,
        whatami: WhatAmI,
        locators: &[String],
    ) -> Option<Vec<Entry>> {
        self.links.insert(
            zid,
            Link {
                whatami,
                psids: HashMap::new(),
            },
        );
        self.sn += 1;
        if !self.target.matches(whatami) {
            return None;
        }
        let own = self.own_entry(locators);
        let known = self
            .nodes
            .values()
            .filter(|n| n.zid != zid && n.locators.is_some())
            .filter(|n| self.config.multihop || self.links.contains_key(&n.zid))
            .cloned();
        Some(std::iter::once(own).chain(known).collect())
    }

    /// What this node says of itself: its role, sequence number, `locators`, and with
    /// `multihop` its neighbours.
    fn own_entry(&self, locators: &[String]) -> Entry {
        Entry {
            zid: self.own,
            whatami: self.whatami,
            sn: self.sn,
            locators: Some(locators.to_vec()),
            links: if self.config.multihop {
                self.links.keys().copied().collect()
            } else {
                Vec::new()
            },
        }
    }

    /// With `multihop`, after its neighbours changed: what this node now says of itself
    /// (`locators` are where it is reached), for each neighbour gossiped to but `except`
    /// (who got a whole list). Nothing without `multihop`: single-hop lists do not carry
    /// the graph.
    pub(crate) fn own_news(
        &self,
        except: Option<ZenohId>,
        locators: &[String],
    ) -> Vec<(ZenohId, Vec<Entry>)> {
        if !self.config.multihop {
            return Vec::new();
        }
        let own = self.own_entry(locators);
        self.links
            .iter()
            .filter(|(zid, link)| Some(**zid) != except && self.target.matches(link.whatami))
            .map(|(zid, _)| (*zid, vec![own.clone()]))
            .collect()
    }

    /// The neighbour `zid` went away: what it said of itself is forgotten.
    pub(crate) fn link_down(&mut self, zid: ZenohId) {
        if self.links.remove(&zid).is_some() {
            self.nodes.remove(&zid);
            self.sn += 1;
        }
    }

    /// A list received from the neighbour `from`.
    pub(crate) fn apply(&mut self, from: ZenohId, list: &[LinkState<'_>]) -> Outcome {
        let Some(link) = self.links.get_mut(&from) else {
            return Outcome::default();
        };
        // Ids first: an entry's links may name nodes the list names later.
        for ls in list {
            if let Some(zid) = ls.zid {
                link.psids.insert(ls.psid, zid);
            }
        }
        let mut named = Vec::new();
        for ls in list {
            let Some(zid) = link.psids.get(&ls.psid).copied() else {
                continue;
            };
            // Zero: a node named only as someone's neighbour, nothing said of it.
            if zid == self.own || ls.sn == 0 {
                continue;
            }
            named.push(Entry {
                zid,
                // A list that does not say is about a router.
                whatami: ls.whatami.unwrap_or(WhatAmI::Router),
                sn: ls.sn,
                locators: ls
                    .locators
                    .as_ref()
                    .map(|l| l.iter().map(ToString::to_string).collect()),
                links: ls
                    .links
                    .iter()
                    .filter_map(|p| link.psids.get(p).copied())
                    .collect(),
            });
        }
        let mut outcome = Outcome::default();
        let mut relayed = Vec::new();
        for entry in named {
            if self.learn(&entry, entry.zid == from)
                && (self.config.multihop || self.links.contains_key(&entry.zid))
            {
                relayed.push(entry.clone());
            }
            if let Some(locators) = entry.locators.filter(|l| !l.is_empty()) {
                if self.wants(entry.zid, entry.whatami) {
                    outcome.connect.push((entry.zid, locators));
                }
            }
        }
        if !relayed.is_empty() {
            for (zid, link) in &self.links {
                if *zid == from || !self.target.matches(link.whatami) {
                    continue;
                }
                let list: Vec<Entry> = relayed.iter().filter(|e| e.zid != *zid).cloned().collect();
                if !list.is_empty() {
                    outcome.sends.push((*zid, list));
                }
            }
        }
        outcome
    }

    /// Records what `entry` says (`direct`: the node says it of itself, on its own
    /// session, which is believed whatever its number, a restart's lower one included);
    /// returns whether it tells where a node is reached anew. A relayed number is news
    /// only within bounds (`link_sn`): a liar's 2^64 − 1 would stop every later truth.
    fn learn(&mut self, entry: &Entry, direct: bool) -> bool {
        if !link_sn::plausible(entry.sn) {
            return false;
        }
        match self.nodes.get_mut(&entry.zid) {
            None => {
                self.nodes.insert(entry.zid, entry.clone());
                entry.locators.is_some()
            }
            Some(known)
                if (direct && entry.sn != known.sn)
                    || link_sn::is_news(entry.sn, Some(known.sn)) =>
            {
                known.sn = entry.sn;
                known.whatami = entry.whatami;
                known.links.clone_from(&entry.links);
                if entry.locators.is_some() && known.locators != entry.locators {
                    known.locators.clone_from(&entry.locators);
                    true
                } else {
                    false
                }
            }
            Some(_) => false,
        }
    }

    /// Whether this node connects to `zid`, of role `whatami`, when it learns of it.
    pub(crate) fn wants(&self, zid: ZenohId, whatami: WhatAmI) -> bool {
        self.autoconnect.matches(whatami)
            && !self.links.contains_key(&zid)
            && match self.config.strategy_to(whatami) {
                AutoconnectStrategy::Always => true,
                AutoconnectStrategy::GreaterZid => self.own.to_u128() > zid.to_u128(),
            }
    }

    /// The body of the network OAM carrying `entries`; a node their links name that
    /// they do not describe is named too (sequence number 0, nothing said of it), so that
    /// the receiver can resolve the index.
    pub(crate) fn encode(&mut self, entries: &[Entry]) -> Result<Vec<u8>, EncodeError> {
        let described: Vec<ZenohId> = entries.iter().map(|e| e.zid).collect();
        let mut only_named: Vec<ZenohId> = entries
            .iter()
            .flat_map(|e| e.links.iter().copied())
            .filter(|z| !described.contains(z))
            .collect();
        only_named.sort_unstable();
        only_named.dedup();
        for zid in described.iter().chain(&only_named) {
            let next = self.psids.len() as u64;
            self.psids.entry(*zid).or_insert(next);
        }
        let list: Vec<LinkState<'_>> = entries
            .iter()
            .map(|e| LinkState {
                psid: self.psids[&e.zid],
                sn: e.sn,
                zid: Some(e.zid),
                whatami: Some(e.whatami),
                locators: e
                    .locators
                    .as_ref()
                    .map(|l| l.iter().map(String::as_str).collect()),
                links: e.links.iter().map(|z| self.psids[z]).collect(),
                weights: None,
                gateway: false,
            })
            .chain(only_named.iter().map(|z| LinkState {
                psid: self.psids[z],
                sn: 0,
                zid: Some(*z),
                whatami: None,
                locators: None,
                links: Vec::new(),
                weights: None,
                gateway: false,
            }))
            .collect();
        let mut body = Vec::new();
        encode_list(&list, &mut body)?;
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_proto::network::linkstate::decode_list;

    fn z(v: u128) -> ZenohId {
        ZenohId::new(v).unwrap()
    }

    fn node(v: u128, whatami: WhatAmI) -> Gossip {
        Gossip::new(z(v), whatami, &GossipConfig::default())
    }

    fn locs(port: u16) -> Vec<String> {
        vec![format!("tcp/127.0.0.1:{port}")]
    }

    /// What `from` sends to `to` on connecting, as `to` receives it.
    fn hello(from: &mut Gossip, to: &mut Gossip, port: u16) -> Outcome {
        if !to.links.contains_key(&from.own) {
            to.link_up(from.own, from.whatami, &[]);
        }
        let list = from.link_up(to.own, to.whatami, &locs(port)).unwrap();
        let body = from.encode(&list).unwrap();
        to.apply(from.own, &decode_list(&body).unwrap())
    }

    #[test]
    fn a_router_tells_each_peer_where_the_others_are() {
        let mut router = node(1, WhatAmI::Router);
        let mut a = node(2, WhatAmI::Peer);
        let mut b = node(3, WhatAmI::Peer);
        // a connects to the router and introduces itself.
        let out = hello(&mut a, &mut router, 7002);
        // No one else to tell yet; a router does not connect to peers.
        assert_eq!(out, Outcome::default());
        // b connects: the router's first list to b names a.
        let out = hello(&mut router, &mut b, 7447);
        assert_eq!(out.connect, vec![(a.own, locs(7002))]);
        // b introduces itself: the router relays it to a, who connects to b too.
        let out = hello(&mut b, &mut router, 7003);
        assert!(out.connect.is_empty());
        assert_eq!(out.sends.len(), 1);
        let (to, list) = &out.sends[0];
        assert_eq!(*to, a.own);
        assert_eq!(list[0].zid, b.own);
        assert_eq!(list[0].locators.as_ref(), Some(&locs(7003)));
        let body = router.encode(list).unwrap();
        let out = a.apply(router.own, &decode_list(&body).unwrap());
        assert_eq!(out.connect, vec![(b.own, locs(7003))]);
    }

    #[test]
    fn old_news_is_not_relayed_again() {
        let mut router = node(1, WhatAmI::Router);
        let mut a = node(2, WhatAmI::Peer);
        router.link_up(z(3), WhatAmI::Peer, &locs(7447));
        router.link_up(a.own, WhatAmI::Peer, &locs(7447));
        let list = a.link_up(router.own, WhatAmI::Router, &locs(7002)).unwrap();
        let body = a.encode(&list).unwrap();
        let decoded = decode_list(&body).unwrap();
        assert_eq!(router.apply(a.own, &decoded).sends.len(), 1);
        assert!(router.apply(a.own, &decoded).sends.is_empty());
    }

    #[test]
    fn a_relayed_poison_number_is_refused_and_a_node_speaks_for_itself() {
        let config = GossipConfig {
            multihop: true,
            ..GossipConfig::default()
        };
        let mut m = Gossip::new(z(1), WhatAmI::Router, &config);
        m.link_up(z(2), WhatAmI::Peer, &[]);
        m.link_up(z(3), WhatAmI::Peer, &[]);
        let entry = |zid: u128, sn: u64| LinkState {
            psid: 4,
            sn,
            zid: Some(z(zid)),
            whatami: Some(WhatAmI::Peer),
            locators: Some(vec!["tcp/127.0.0.1:9"]),
            links: Vec::new(),
            weights: None,
            gateway: false,
        };
        // 2 relays 9 under 2^64 - 1: refused, so 9's real number is believed after.
        assert_eq!(m.apply(z(2), &[entry(9, u64::MAX)]), Outcome::default());
        assert!(!m.nodes.contains_key(&z(9)));
        assert_eq!(m.apply(z(2), &[entry(9, 5)]).sends.len(), 1);
        // A jump beyond the window of the number known is refused too.
        let jump = 5 + link_sn::WINDOW + 1;
        assert!(m.apply(z(2), &[entry(9, jump)]).sends.is_empty());
        assert_eq!(m.nodes[&z(9)].sn, 5);
        // 3 speaking for itself is believed, a restart's lower number included.
        m.apply(z(3), &[entry(3, 10)]);
        m.apply(z(3), &[entry(3, 2)]);
        assert_eq!(m.nodes[&z(3)].sn, 2);
    }

    #[test]
    fn single_hop_relays_only_what_neighbours_say_of_themselves() {
        let mut r = node(1, WhatAmI::Router);
        r.link_up(z(2), WhatAmI::Peer, &[]);
        r.link_up(z(3), WhatAmI::Peer, &[]);
        // 2 names a node 9 the router is not connected to: not relayed.
        let far = LinkState {
            psid: 4,
            sn: 1,
            zid: Some(z(9)),
            whatami: Some(WhatAmI::Peer),
            locators: Some(vec!["tcp/127.0.0.1:9"]),
            links: Vec::new(),
            weights: None,
            gateway: false,
        };
        assert!(r.apply(z(2), core::slice::from_ref(&far)).sends.is_empty());
        // With multihop it is.
        let config = GossipConfig {
            multihop: true,
            ..GossipConfig::default()
        };
        let mut m = Gossip::new(z(1), WhatAmI::Router, &config);
        m.link_up(z(2), WhatAmI::Peer, &[]);
        m.link_up(z(3), WhatAmI::Peer, &[]);
        let out = m.apply(z(2), &[far]);
        assert_eq!(out.sends.len(), 1);
        assert_eq!(out.sends[0].0, z(3));
    }

    #[test]
    fn disabled_gossip_sends_nothing_and_connects_to_nothing() {
        let config = GossipConfig {
            enabled: false,
            ..GossipConfig::default()
        };
        let mut p = Gossip::new(z(5), WhatAmI::Peer, &config);
        assert!(p.link_up(z(1), WhatAmI::Router, &locs(1)).is_none());
        let mut r = node(1, WhatAmI::Router);
        r.link_up(z(7), WhatAmI::Peer, &[]);
        let list = r.link_up(z(5), WhatAmI::Peer, &[]).unwrap();
        let mut with_neighbour = list.clone();
        with_neighbour.push(Entry {
            zid: z(7),
            whatami: WhatAmI::Peer,
            sn: 2,
            locators: Some(locs(7)),
            links: Vec::new(),
        });
        let body = r.encode(&with_neighbour).unwrap();
        let out = p.apply(z(1), &decode_list(&body).unwrap());
        assert!(out.connect.is_empty());
    }

    #[test]
    fn greater_zid_connects_only_from_the_greater_side() {
        let config = GossipConfig {
            strategy: [AutoconnectStrategy::GreaterZid; 3],
            ..GossipConfig::default()
        };
        let small = Gossip::new(z(2), WhatAmI::Peer, &config);
        let big = Gossip::new(z(9), WhatAmI::Peer, &config);
        assert!(!small.wants(z(9), WhatAmI::Peer));
        assert!(big.wants(z(2), WhatAmI::Peer));
    }

    #[test]
    fn clients_are_never_gossiped_to() {
        let mut p = node(5, WhatAmI::Peer);
        assert!(p.link_up(z(1), WhatAmI::Client, &locs(1)).is_none());
        let mut c = node(6, WhatAmI::Client);
        assert!(c.link_up(z(1), WhatAmI::Router, &locs(1)).is_none());
    }

    #[test]
    fn multihop_lists_carry_the_graph_and_name_every_node_they_link() {
        let config = GossipConfig {
            multihop: true,
            ..GossipConfig::default()
        };
        // 1 - 2 - 3 in a line, 2 in the middle.
        let mut two = Gossip::new(z(2), WhatAmI::Peer, &config);
        let mut one = Gossip::new(z(1), WhatAmI::Peer, &config);
        let mut three = Gossip::new(z(3), WhatAmI::Peer, &config);
        two.link_up(z(1), WhatAmI::Peer, &locs(7002));
        one.link_up(z(2), WhatAmI::Peer, &locs(7001));
        // 3 connects to 2: 2's list to 3 says 2 links 1 and 3, and names 1 for it.
        three.link_up(z(2), WhatAmI::Peer, &locs(7003));
        let list = two.link_up(z(3), WhatAmI::Peer, &locs(7002)).unwrap();
        assert_eq!(list[0].zid, z(2));
        let mut links = list[0].links.clone();
        links.sort();
        assert_eq!(links, [z(1), z(3)]);
        let decoded = decode_list(&two.encode(&list).unwrap())
            .unwrap()
            .into_iter()
            .map(|l| (l.zid, l.sn))
            .collect::<Vec<_>>();
        assert!(
            decoded.contains(&(Some(z(1)), 0)),
            "1 is named: {decoded:?}"
        );
        // 2's other neighbour, 1, is told of 2's new links.
        let news = two.own_news(Some(z(3)), &locs(7002));
        assert_eq!(news.len(), 1);
        assert_eq!(news[0].0, z(1));
        assert!(news[0].1[0].links.contains(&z(3)));
        // 3 tells 2 where it is, with its links; 2 relays it to 1 (a neighbour's news),
        // and 1 learns 3's links.
        let from_three = three.link_up(z(9), WhatAmI::Peer, &locs(7003)).unwrap();
        let out = two.apply(
            z(3),
            &decode_list(&three.encode(&from_three).unwrap()).unwrap(),
        );
        let (to, relayed) = out.sends.iter().find(|(to, _)| *to == z(1)).unwrap();
        assert_eq!(*to, z(1));
        let body = two.encode(relayed).unwrap();
        one.apply(z(2), &decode_list(&body).unwrap());
        let mut known = one.nodes[&z(3)].links.clone();
        known.sort();
        assert_eq!(known, [z(2), z(9)]);
        // Without multihop, nothing of the graph travels.
        let mut single = node(4, WhatAmI::Peer);
        let list = single.link_up(z(5), WhatAmI::Peer, &locs(7004)).unwrap();
        assert!(list[0].links.is_empty());
        assert!(single.own_news(None, &locs(7004)).is_empty());
    }
}
