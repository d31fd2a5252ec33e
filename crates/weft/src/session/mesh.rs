//! The router mesh: which links between routers carry routed traffic.
//!
//! Routers flood link-state lists (network OAM 1): every router announces its own
//! neighbouring routers under a growing sequence number and relays what it learns, so that
//! each one ends with the same graph of the mesh. From that graph every router derives the
//! same spanning tree: breadth-first from the smallest ZenohId of the component, each node
//! attached to its smallest-id neighbour one level closer to the root. An edge counts only
//! when both of its ends list it, so a dead router's stale list cannot keep it in the
//! tree.
//!
//! Declarations and data follow the tree's links only. A tree has no cycles, so every
//! sample reaches every subscriber exactly once and nothing loops, whatever the topology;
//! when a router or a link dies, the graph changes, every router computes the new tree,
//! and the links that joined it start carrying the routes (failover).
//!
//! Every router this one names in its lists keeps one index (psid) for as long as it is
//! named: the lists give the index with the id, and a declaration forwarded to another
//! router names the router it comes from by that index (the NodeId extension), which the
//! receiver resolves through the lists it was given on that link.
//!
//! What a list says of a router is believed within bounds (`link_sn`): a neighbour's own
//! entry only from the neighbour itself, on its own session (whatever the number: it may
//! have restarted), never from a relay; another router's when its number is above the
//! one known, within a window, and below a ceiling no honest router reaches; this
//! router's own number, seen higher in someone's list, is announced above only within
//! the window. So a liar claiming a real router's state under 2^64 − 1 changes nothing.
//!
//! This module is pure: no sockets, no clocks. The session feeds it link events and
//! received lists and asks which neighbours are on the tree.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use weft_proto::core::{WhatAmI, ZenohId};
use weft_proto::network::linkstate::LinkState;

use super::link_sn;

/// What one router announced about itself.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Node {
    sn: u64,
    links: BTreeSet<ZenohId>,
    /// Where it can be reached, when a list said so (gossip).
    locators: Option<Vec<String>>,
}

/// What applying a list did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Applied {
    /// The graph changed.
    pub(crate) changed: bool,
    /// Entries refused as lies or nonsense: a number at or above the ceiling, or a jump
    /// beyond the window (a neighbour's state relayed by another is ignored, not counted).
    pub(crate) refused: usize,
}

/// What an entry of a received list is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Newer than what is known: believed.
    News,
    /// Known already, or older, or not the sender's to tell: ignored.
    Old,
    /// A number no honest router gives: ignored and counted.
    Refused,
}

/// Whose locators this router's lists carry (`scouting.gossip`): nobody's (gossip off, or
/// routers are not a gossip target), its own and its neighbours' (single hop), or those of
/// every router it knows (`multihop`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SharedLocators {
    /// No locators.
    Nobody,
    /// Its own and its neighbours'.
    Neighbours,
    /// Every router's.
    Everyone,
}

/// One router's view of the mesh.
#[derive(Debug)]
pub(crate) struct Mesh {
    own: ZenohId,
    own_sn: u64,
    /// Routers linked to this one right now.
    neighbours: BTreeSet<ZenohId>,
    /// Other routers, as their latest announcements describe them.
    nodes: BTreeMap<ZenohId, Node>,
    /// Per neighbour, its local indexes (psid) of the nodes it told us about: a list may
    /// name a node by index alone once the index was given with its id.
    psids: HashMap<ZenohId, HashMap<u64, ZenohId>>,
    /// Routers whose lists brought news with locators since [`Mesh::take_reachable`].
    reachable: BTreeSet<ZenohId>,
    /// This router's index (psid) of every other router its lists name (itself is 0).
    index: HashMap<ZenohId, u16>,
    /// The index the next newly named router gets (indexes are not reused while there
    /// are unused ones above: a declaration in flight keeps naming the router it named).
    next_index: u16,
    /// Neighbours whose lists had entries refused since their link came up (told once).
    refusing: BTreeSet<ZenohId>,
}

impl Mesh {
    /// A mesh of one router. `first_sn` should grow across restarts (e.g. a clock), so that
    /// a router restarting with the same id is believed over its former self.
    pub(crate) fn new(own: ZenohId, first_sn: u64) -> Self {
        Self {
            own,
            own_sn: first_sn.max(1),
            neighbours: BTreeSet::new(),
            nodes: BTreeMap::new(),
            psids: HashMap::new(),
            reachable: BTreeSet::new(),
            index: HashMap::new(),
            next_index: 1,
            refusing: BTreeSet::new(),
        }
    }

    /// The routers this router's lists name: every router known, its neighbours, and
    /// every router a known one links to (not itself).
    fn named(&self) -> BTreeSet<ZenohId> {
        let mut named: BTreeSet<ZenohId> = self.nodes.keys().copied().collect();
        named.extend(self.neighbours.iter().copied());
        for n in self.nodes.values() {
            named.extend(n.links.iter().copied());
        }
        named.remove(&self.own);
        named
    }

    /// Gives an index to every router newly named and frees those of routers no longer
    /// named.
    fn reindex(&mut self) {
        let named = self.named();
        self.index.retain(|z, _| named.contains(z));
        for zid in named {
            if self.index.contains_key(&zid) {
                continue;
            }
            let free = if self.next_index == u16::MAX {
                // Wrapped: the smallest index no named router holds.
                let used: BTreeSet<u16> = self.index.values().copied().collect();
                (1..u16::MAX).find(|i| !used.contains(i))
            } else {
                let i = self.next_index;
                self.next_index += 1;
                Some(i)
            };
            match free {
                Some(i) => {
                    self.index.insert(zid, i);
                }
                None => tracing::warn!("no router index left for {zid}"),
            }
        }
    }

    /// The node id that names `zid` in this router's lists: 0 for itself, `None` for a
    /// router the lists do not name.
    pub(crate) fn node_id(&self, zid: ZenohId) -> Option<u16> {
        if zid == self.own {
            Some(0)
        } else {
            self.index.get(&zid).copied()
        }
    }

    /// The router that the neighbour `from` names `node_id` in the lists it sent on its
    /// link: the router a declaration it forwarded comes from. A neighbour always names
    /// itself 0, also before its first list.
    pub(crate) fn origin(&self, from: ZenohId, node_id: u16) -> Option<ZenohId> {
        match self
            .psids
            .get(&from)
            .and_then(|p| p.get(&u64::from(node_id)))
        {
            Some(zid) => Some(*zid),
            None if node_id == 0 => Some(from),
            None => None,
        }
    }

    /// Whether `zid` is this router or one of its component.
    pub(crate) fn reaches(&self, zid: ZenohId) -> bool {
        zid == self.own || self.nodes.contains_key(&zid) || self.neighbours.contains(&zid)
    }

    /// A link to the router `zid` came up.
    pub(crate) fn link_up(&mut self, zid: ZenohId) {
        if self.neighbours.insert(zid) {
            self.own_sn += 1;
            self.reindex();
        }
    }

    /// The link to the router `zid` went down.
    pub(crate) fn link_down(&mut self, zid: ZenohId) {
        self.psids.remove(&zid);
        self.refusing.remove(&zid);
        if self.neighbours.remove(&zid) {
            self.own_sn += 1;
            self.prune();
        }
    }

    /// Applies a list received from the neighbour `from`. Returns whether the graph
    /// changed (then the tree may have changed, and the news must be relayed).
    #[cfg(test)]
    pub(crate) fn apply(&mut self, from: ZenohId, list: &[LinkState<'_>]) -> bool {
        self.apply_counting(from, list).changed
    }

    /// [`Mesh::apply`], also saying how many entries were refused as implausible.
    pub(crate) fn apply_counting(&mut self, from: ZenohId, list: &[LinkState<'_>]) -> Applied {
        let psids = self.psids.entry(from).or_default();
        for entry in list {
            if let Some(zid) = entry.zid {
                psids.insert(entry.psid, zid);
            }
        }
        let psids = &self.psids[&from];
        let mut updates = Vec::new();
        for entry in list {
            let Some(zid) = psids.get(&entry.psid).copied() else {
                continue;
            };
            // Links to nodes the sender never named are dropped.
            let links: BTreeSet<ZenohId> = entry
                .links
                .iter()
                .filter_map(|p| psids.get(p).copied())
                .filter(|z| *z != zid)
                .collect();
            let locators = entry
                .locators
                .as_ref()
                .map(|l| l.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
            updates.push((zid, entry.sn, links, locators));
        }
        let mut changed = false;
        let mut refused = 0;
        for (zid, sn, links, locators) in updates {
            if zid == self.own {
                // Someone remembers a former life of ours: announce above it, unless the
                // number is beyond any we could have used.
                if sn > self.own_sn {
                    if link_sn::is_news(sn, Some(self.own_sn)) {
                        self.own_sn = sn + 1;
                        changed = true;
                    } else {
                        refused += 1;
                    }
                }
                continue;
            }
            match self.judge(from, zid, sn) {
                Verdict::News => {}
                Verdict::Old => continue,
                Verdict::Refused => {
                    refused += 1;
                    continue;
                }
            }
            // A list without locators keeps those known.
            let known = self.nodes.get(&zid);
            let locators = locators.or_else(|| known.and_then(|n| n.locators.clone()));
            if locators.is_some() {
                self.reachable.insert(zid);
            }
            self.nodes.insert(
                zid,
                Node {
                    sn,
                    links,
                    locators,
                },
            );
            changed = true;
        }
        if changed {
            self.prune();
        }
        Applied { changed, refused }
    }

    /// Notes that a list from `from` had entries refused; true the first time since its
    /// link came up (to be told once, not for every list a liar sends).
    pub(crate) fn note_refusal(&mut self, from: ZenohId) -> bool {
        self.refusing.insert(from)
    }

    /// Whether the entry of the router `zid` (not this one) under `sn`, in a list from
    /// the neighbour `from`, is news.
    fn judge(&self, from: ZenohId, zid: ZenohId, sn: u64) -> Verdict {
        let known = self.nodes.get(&zid).map(|n| n.sn);
        if !link_sn::plausible(sn) {
            Verdict::Refused
        } else if zid == from {
            // A neighbour speaking for itself on its own session: any other number is
            // its latest (it may have restarted lower).
            if known == Some(sn) {
                Verdict::Old
            } else {
                Verdict::News
            }
        } else if self.neighbours.contains(&zid) {
            // A neighbour's state comes from the neighbour, never from a relay.
            Verdict::Old
        } else if link_sn::is_news(sn, known) {
            Verdict::News
        } else if known.is_some_and(|k| sn > k) {
            // Above the known number, beyond the window.
            Verdict::Refused
        } else {
            Verdict::Old
        }
    }

    /// The routers heard of with locators (new, or with newer news) since the last call,
    /// and where they can be reached: the candidates for gossip's autoconnection.
    pub(crate) fn take_reachable(&mut self) -> Vec<(ZenohId, Vec<String>)> {
        std::mem::take(&mut self.reachable)
            .into_iter()
            .filter_map(|zid| {
                let locators = self.nodes.get(&zid)?.locators.clone()?;
                Some((zid, locators))
            })
            .collect()
    }

    /// The links of `zid` as far as this view knows.
    fn links_of(&self, zid: ZenohId) -> Option<&BTreeSet<ZenohId>> {
        if zid == self.own {
            Some(&self.neighbours)
        } else {
            self.nodes.get(&zid).map(|n| &n.links)
        }
    }

    /// Whether both ends of `a`–`b` list the link.
    fn confirmed(&self, a: ZenohId, b: ZenohId) -> bool {
        self.links_of(a).is_some_and(|l| l.contains(&b))
            && self.links_of(b).is_some_and(|l| l.contains(&a))
    }

    /// The confirmed neighbours of `zid`.
    fn edges(&self, zid: ZenohId) -> impl Iterator<Item = ZenohId> + '_ {
        self.links_of(zid)
            .into_iter()
            .flatten()
            .copied()
            .filter(move |n| self.confirmed(zid, *n))
    }

    /// Breadth-first distances from `start` over confirmed edges (the component of
    /// `start`).
    fn distances(&self, start: ZenohId) -> BTreeMap<ZenohId, usize> {
        let mut dist = BTreeMap::from([(start, 0)]);
        let mut queue = VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            let d = dist[&n];
            for m in self.edges(n) {
                if let std::collections::btree_map::Entry::Vacant(e) = dist.entry(m) {
                    e.insert(d + 1);
                    queue.push_back(m);
                }
            }
        }
        dist
    }

    /// Forgets the routers this one cannot reach: their announcements are history (a
    /// router restarted with the same id is then believed at once).
    fn prune(&mut self) {
        let reachable = self.distances(self.own);
        self.nodes.retain(|zid, _| reachable.contains_key(zid));
        self.reindex();
    }

    /// The parent of every node of this router's component on the spanning tree (the
    /// root has none).
    fn parents(&self) -> BTreeMap<ZenohId, ZenohId> {
        let component = self.distances(self.own);
        let Some(root) = component.keys().next().copied() else {
            return BTreeMap::new();
        };
        let depth = self.distances(root);
        // The parent of a node: its smallest neighbour one level closer to the root.
        depth
            .iter()
            .filter(|(_, d)| **d > 0)
            .filter_map(|(n, d)| {
                self.edges(*n)
                    .filter(|m| depth.get(m) == Some(&(d - 1)))
                    .min()
                    .map(|p| (*n, p))
            })
            .collect()
    }

    /// The neighbours whose links are on the spanning tree.
    pub(crate) fn tree_neighbours(&self) -> BTreeSet<ZenohId> {
        let parents = self.parents();
        let mut tree = BTreeSet::new();
        if let Some(p) = parents.get(&self.own) {
            tree.insert(*p);
        }
        for n in self.edges(self.own) {
            if parents.get(&n) == Some(&self.own) {
                tree.insert(n);
            }
        }
        tree
    }

    /// The routers of this router's component, itself first, then by id.
    pub(crate) fn routers(&self) -> Vec<ZenohId> {
        let mut others: Vec<ZenohId> = self.distances(self.own).into_keys().collect();
        others.retain(|z| *z != self.own);
        std::iter::once(self.own).chain(others).collect()
    }

    /// The links of the component that both ends list, each once (smaller id first).
    pub(crate) fn confirmed_links(&self) -> Vec<(ZenohId, ZenohId)> {
        let routers = self.routers();
        let mut links = Vec::new();
        for a in &routers {
            for b in self.edges(*a) {
                if *a < b {
                    links.push((*a, b));
                }
            }
        }
        links
    }

    /// For every other router of the component, the neighbour on the spanning tree that
    /// leads to it: where this router sends what travels the tree towards it.
    pub(crate) fn next_hops(&self) -> BTreeMap<ZenohId, ZenohId> {
        let parents = self.parents();
        let mut adjacent: BTreeMap<ZenohId, Vec<ZenohId>> = BTreeMap::new();
        for (child, parent) in &parents {
            adjacent.entry(*child).or_default().push(*parent);
            adjacent.entry(*parent).or_default().push(*child);
        }
        let mut hops = BTreeMap::new();
        let mut queue: VecDeque<(ZenohId, ZenohId)> = adjacent
            .get(&self.own)
            .into_iter()
            .flatten()
            .map(|n| (*n, *n))
            .collect();
        while let Some((node, via)) = queue.pop_front() {
            if node == self.own || hops.contains_key(&node) {
                continue;
            }
            hops.insert(node, via);
            for next in adjacent.get(&node).into_iter().flatten() {
                queue.push_back((*next, via));
            }
        }
        hops
    }

    /// The list this router announces, without locators.
    #[cfg(test)]
    pub(crate) fn announcement(&self) -> Vec<LinkState<'static>> {
        self.announcement_sharing(&[], SharedLocators::Nobody)
            .into_iter()
            .map(|l| LinkState {
                psid: l.psid,
                sn: l.sn,
                zid: l.zid,
                whatami: l.whatami,
                locators: None,
                links: l.links,
                weights: l.weights,
                gateway: l.gateway,
            })
            .collect()
    }

    /// The list this router announces: itself (index 0) and every router it knows, each
    /// with its sequence number and links, by this list's own indexes; with the locators
    /// `shared` says (its own are `own_locators`).
    pub(crate) fn announcement_sharing<'a>(
        &'a self,
        own_locators: &'a [String],
        shared: SharedLocators,
    ) -> Vec<LinkState<'a>> {
        // Every node named, including neighbours not yet heard from, by its own index.
        let named = self.named();
        let index = |zid: &ZenohId| u64::from(self.node_id(*zid).unwrap_or(0));
        let shares = |zid: ZenohId| match shared {
            SharedLocators::Nobody => false,
            SharedLocators::Neighbours => zid == self.own || self.neighbours.contains(&zid),
            SharedLocators::Everyone => true,
        };
        let entry =
            |zid: ZenohId, sn: u64, links: &BTreeSet<ZenohId>, locators: Option<&'a [String]>| {
                LinkState {
                    psid: index(&zid),
                    sn,
                    zid: Some(zid),
                    whatami: Some(WhatAmI::Router),
                    locators: locators
                        .filter(|l| !l.is_empty() && shares(zid))
                        .map(|l| l.iter().map(String::as_str).collect()),
                    links: links.iter().map(index).collect(),
                    weights: None,
                    gateway: false,
                }
            };
        let empty = BTreeSet::new();
        std::iter::once(entry(
            self.own,
            self.own_sn,
            &self.neighbours,
            Some(own_locators),
        ))
        .chain(named.iter().map(|z| match self.nodes.get(z) {
            Some(n) => entry(*z, n.sn, &n.links, n.locators.as_deref()),
            None => entry(*z, 0, &empty, None),
        }))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn z(v: u128) -> ZenohId {
        ZenohId::new(v).unwrap()
    }

    /// Routers `ids` with the links `edges`, each having flooded until nothing changes.
    fn converge(ids: &[u128], edges: &[(u128, u128)]) -> BTreeMap<u128, Mesh> {
        let mut meshes: BTreeMap<u128, Mesh> =
            ids.iter().map(|i| (*i, Mesh::new(z(*i), 1))).collect();
        for (a, b) in edges {
            meshes.get_mut(a).unwrap().link_up(z(*b));
            meshes.get_mut(b).unwrap().link_up(z(*a));
        }
        flood(&mut meshes, edges);
        meshes
    }

    /// Every router sends its announcement to its neighbours until no list changes anything.
    fn flood(meshes: &mut BTreeMap<u128, Mesh>, edges: &[(u128, u128)]) {
        for _ in 0..50 {
            let mut changed = false;
            let lists: Vec<(u128, Vec<LinkState<'static>>)> =
                meshes.iter().map(|(i, m)| (*i, m.announcement())).collect();
            for (from, list) in &lists {
                for (a, b) in edges {
                    let to = if a == from {
                        b
                    } else if b == from {
                        a
                    } else {
                        continue;
                    };
                    if let Some(m) = meshes.get_mut(to) {
                        changed |= m.apply(z(*from), list);
                    }
                }
            }
            if !changed {
                return;
            }
        }
        panic!("flooding did not settle");
    }

    /// The tree's edges as every router sees its own part of it; asserts they agree.
    fn tree(meshes: &BTreeMap<u128, Mesh>) -> BTreeSet<(u128, u128)> {
        let mut edges = BTreeSet::new();
        for (i, m) in meshes {
            for n in m.tree_neighbours() {
                let n = n.to_u128();
                assert!(
                    meshes[&n].tree_neighbours().contains(&z(*i)),
                    "{i} thinks {n} is on the tree, {n} does not"
                );
                edges.insert((*i.min(&n), *i.max(&n)));
            }
        }
        edges
    }

    #[test]
    fn next_hops_follow_the_tree() {
        // A square 1-2-3-4-1: the tree drops 3-4 (4 hangs off 1), so 3 reaches 4 via 2.
        let meshes = converge(&[1, 2, 3, 4], &[(1, 2), (2, 3), (3, 4), (4, 1)]);
        let hops = meshes[&3].next_hops();
        assert_eq!(hops[&z(4)], z(2));
        assert_eq!(hops[&z(1)], z(2));
        assert_eq!(hops[&z(2)], z(2));
        assert_eq!(meshes[&3].routers()[0], z(3));
        assert_eq!(meshes[&3].confirmed_links().len(), 4);
    }

    #[test]
    fn a_line_is_its_own_tree() {
        let m = converge(&[1, 2, 3], &[(1, 2), (2, 3)]);
        assert_eq!(tree(&m), BTreeSet::from([(1, 2), (2, 3)]));
    }

    #[test]
    fn a_triangle_loses_one_edge() {
        let m = converge(&[1, 2, 3], &[(1, 2), (2, 3), (1, 3)]);
        assert_eq!(tree(&m), BTreeSet::from([(1, 2), (1, 3)]));
    }

    #[test]
    fn a_ring_of_five_becomes_a_spanning_tree() {
        let edges = [(1, 2), (2, 3), (3, 4), (4, 5), (5, 1)];
        let m = converge(&[1, 2, 3, 4, 5], &edges);
        let t = tree(&m);
        assert_eq!(t.len(), 4, "a spanning tree of 5 nodes has 4 edges: {t:?}");
        // Every router is on it.
        let on: BTreeSet<u128> = t.iter().flat_map(|(a, b)| [*a, *b]).collect();
        assert_eq!(on, BTreeSet::from([1, 2, 3, 4, 5]));
    }

    #[test]
    fn the_tree_heals_when_a_router_of_a_cycle_dies() {
        let edges = [(1, 2), (2, 3), (3, 4), (4, 1)];
        let mut m = converge(&[1, 2, 3, 4], &edges);
        assert_eq!(tree(&m), BTreeSet::from([(1, 2), (1, 4), (2, 3)]));
        // Router 1, the root, dies: its neighbours see their links go down.
        m.remove(&1);
        m.get_mut(&2).unwrap().link_down(z(1));
        m.get_mut(&4).unwrap().link_down(z(1));
        let left = [(2, 3), (3, 4)];
        flood(&mut m, &left);
        assert_eq!(tree(&m), BTreeSet::from([(2, 3), (3, 4)]));
        // The dead router is forgotten everywhere.
        for mesh in m.values() {
            assert!(!mesh.nodes.contains_key(&z(1)));
        }
    }

    #[test]
    fn a_one_sided_link_is_not_used() {
        let mut a = Mesh::new(z(1), 1);
        a.link_up(z(2));
        // 2 has announced nothing yet: the link is not confirmed.
        assert!(a.tree_neighbours().is_empty());
        let mut b = Mesh::new(z(2), 1);
        b.link_up(z(1));
        assert!(a.apply(z(2), &b.announcement()));
        assert_eq!(a.tree_neighbours(), BTreeSet::from([z(2)]));
    }

    #[test]
    fn old_news_changes_nothing() {
        let mut a = Mesh::new(z(1), 1);
        let mut b = Mesh::new(z(2), 1);
        a.link_up(z(2));
        b.link_up(z(1));
        let first = b.announcement();
        assert!(a.apply(z(2), &first));
        assert!(!a.apply(z(2), &first), "the same list twice is no news");
    }

    #[test]
    fn entries_named_by_index_alone_resolve_through_earlier_lists() {
        let mut a = Mesh::new(z(1), 1);
        a.link_up(z(2));
        let full = LinkState {
            psid: 0,
            sn: 5,
            zid: Some(z(2)),
            whatami: Some(WhatAmI::Router),
            locators: None,
            links: vec![1],
            weights: None,
            gateway: false,
        };
        let me = LinkState {
            psid: 1,
            sn: 0,
            zid: Some(z(1)),
            ..full.clone()
        };
        assert!(a.apply(
            z(2),
            &[
                full.clone(),
                LinkState {
                    links: vec![0],
                    ..me
                }
            ]
        ));
        // Later, the neighbour names itself by its index only.
        let short = LinkState {
            zid: None,
            sn: 6,
            ..full
        };
        assert!(a.apply(z(2), &[short]));
        assert_eq!(a.nodes[&z(2)].sn, 6);
    }

    #[test]
    fn a_router_keeps_its_index_while_it_is_named() {
        // 5 - 9 in a line, then 7 joins 9: 9 keeps its index although 7 sorts first.
        let mut m = converge(&[5, 9], &[(5, 9)]);
        let nine = m[&5].node_id(z(9)).unwrap();
        assert_eq!(
            m[&5].node_id(z(5)),
            Some(0),
            "a router is 0 in its own lists"
        );
        m.insert(7, Mesh::new(z(7), 1));
        m.get_mut(&9).unwrap().link_up(z(7));
        m.get_mut(&7).unwrap().link_up(z(9));
        flood(&mut m, &[(5, 9), (9, 7)]);
        assert_eq!(m[&5].node_id(z(9)), Some(nine));
        let seven = m[&5].node_id(z(7)).unwrap();
        assert!(seven != nine && seven != 0);
        // The lists give each router under its index.
        let list = m[&5].announcement();
        assert!(list
            .iter()
            .any(|l| l.zid == Some(z(9)) && l.psid == u64::from(nine)));
        // 7 leaves: its index is freed and not given to the next newcomer.
        m.get_mut(&9).unwrap().link_down(z(7));
        m.remove(&7);
        flood(&mut m, &[(5, 9)]);
        assert_eq!(m[&5].node_id(z(7)), None);
        m.get_mut(&5).unwrap().link_up(z(3));
        assert!(m[&5].node_id(z(3)).is_some_and(|i| i != seven));
    }

    #[test]
    fn a_node_id_names_a_router_through_the_senders_lists() {
        // 1 - 2 - 3: 1 resolves 2's index of 3; index 0 is 2 itself, even before any list.
        let m = converge(&[1, 2, 3], &[(1, 2), (2, 3)]);
        let three = m[&2].node_id(z(3)).unwrap();
        assert_eq!(m[&1].origin(z(2), three), Some(z(3)));
        assert_eq!(m[&1].origin(z(2), 0), Some(z(2)));
        assert_eq!(m[&1].origin(z(2), 999), None);
        assert_eq!(Mesh::new(z(1), 1).origin(z(2), 0), Some(z(2)));
        assert!(m[&1].reaches(z(3)));
    }

    #[test]
    fn a_restarted_router_announces_above_its_former_self() {
        let mut a = Mesh::new(z(1), 1);
        a.link_up(z(2));
        let remembered = LinkState {
            psid: 3,
            sn: 99,
            zid: Some(z(1)),
            whatami: Some(WhatAmI::Router),
            locators: None,
            links: Vec::new(),
            weights: None,
            gateway: false,
        };
        assert!(a.apply(z(2), &[remembered]));
        assert!(a.announcement()[0].sn > 99);
    }

    /// An entry of router `zid` under `sn`, with index `psid` and `links` by index.
    fn claim(psid: u64, zid: u128, sn: u64, links: Vec<u64>) -> LinkState<'static> {
        LinkState {
            psid,
            sn,
            zid: Some(z(zid)),
            whatami: Some(WhatAmI::Router),
            locators: None,
            links,
            weights: None,
            gateway: false,
        }
    }

    #[test]
    fn a_liar_cannot_speak_for_a_neighbour_nor_push_a_router_past_the_ceiling() {
        // 1 - 2 meshed; 9 is a liar linked to 1.
        let mut m = converge(&[1, 2], &[(1, 2)]);
        let one = m.get_mut(&1).unwrap();
        one.link_up(z(9));
        let own_sn = one.own_sn;
        let lie = [
            claim(0, 9, 1, vec![1]),
            claim(1, 1, u64::MAX, Vec::new()),
            claim(2, 2, u64::MAX, Vec::new()),
        ];
        let applied = one.apply_counting(z(9), &lie);
        assert_eq!(applied.refused, 2, "both numbers are beyond any router's");
        assert_eq!(one.own_sn, own_sn, "its own number does not move");
        assert_eq!(one.nodes[&z(2)].links, BTreeSet::from([z(1)]));
        assert!(one.tree_neighbours().contains(&z(2)));
        assert!(one.note_refusal(z(9)), "told once");
        assert!(!one.note_refusal(z(9)));
        // Plausible numbers do not let it speak for the neighbour 2 either.
        let sn2 = one.nodes[&z(2)].sn;
        let plausible = [claim(0, 9, 2, vec![1]), claim(2, 2, sn2 + 1, Vec::new())];
        assert_eq!(one.apply_counting(z(9), &plausible).refused, 0);
        assert_eq!(
            one.nodes[&z(2)].sn,
            sn2,
            "a neighbour's state comes from it"
        );
        assert!(one.tree_neighbours().contains(&z(2)));
    }

    #[test]
    fn relayed_numbers_are_believed_within_the_window_only() {
        // 1 - 2 - 3: 1 hears of 3 through 2.
        let mut m = converge(&[1, 2, 3], &[(1, 2), (2, 3)]);
        let one = m.get_mut(&1).unwrap();
        let three = one.nodes[&z(3)].sn;
        let two = one.nodes[&z(2)].sn;
        let relay = |sn| {
            [
                claim(0, 2, two, vec![1, 2]),
                claim(1, 1, 0, Vec::new()),
                claim(2, 3, sn, vec![0]),
            ]
        };
        let beyond = one.apply_counting(z(2), &relay(three + link_sn::WINDOW + 1));
        assert_eq!((beyond.changed, beyond.refused), (false, 1));
        assert_eq!(one.nodes[&z(3)].sn, three);
        assert!(one.apply(z(2), &relay(three + link_sn::WINDOW)));
        assert_eq!(one.nodes[&z(3)].sn, three + link_sn::WINDOW);
    }

    #[test]
    fn a_neighbour_that_restarted_lower_is_believed_on_its_own_link() {
        let mut a = Mesh::new(z(1), 1);
        a.link_up(z(2));
        let mut b = Mesh::new(z(2), 1000);
        b.link_up(z(1));
        assert!(a.apply(z(2), &b.announcement()));
        // 2 restarts from a lower number and links to 1 again: its own lists say so.
        let mut b = Mesh::new(z(2), 5);
        b.link_up(z(1));
        assert!(a.apply(z(2), &b.announcement()));
        assert_eq!(a.nodes[&z(2)].sn, 6);
        assert_eq!(a.tree_neighbours(), BTreeSet::from([z(2)]));
        // The same list again is no news.
        assert!(!a.apply(z(2), &b.announcement()));
    }

    #[test]
    fn locators_travel_as_shared_and_reachable_routers_are_told_once() {
        // 1 - 2 - 3 in a line; 2 tells 1 of 3 (its neighbour).
        let mut two = Mesh::new(z(2), 1);
        two.link_up(z(1));
        two.link_up(z(3));
        let mut three = Mesh::new(z(3), 1);
        three.link_up(z(2));
        let at_3 = vec!["tcp/127.0.0.1:7003".to_string()];
        assert!(two.apply(
            z(3),
            &three.announcement_sharing(&at_3, SharedLocators::Neighbours)
        ));
        assert_eq!(two.take_reachable(), vec![(z(3), at_3.clone())]);
        assert!(two.take_reachable().is_empty(), "told once");

        let at_2 = vec!["tcp/127.0.0.1:7002".to_string()];
        let locators_in = |list: &[LinkState<'_>], zid: ZenohId| {
            list.iter()
                .find(|l| l.zid == Some(zid))
                .and_then(|l| l.locators.clone())
                .map(|l| l.into_iter().map(str::to_owned).collect::<Vec<_>>())
        };
        let single = two.announcement_sharing(&at_2, SharedLocators::Neighbours);
        assert_eq!(locators_in(&single, z(2)), Some(at_2.clone()));
        assert_eq!(locators_in(&single, z(3)), Some(at_3.clone()));
        assert_eq!(
            locators_in(
                &two.announcement_sharing(&at_2, SharedLocators::Nobody),
                z(3)
            ),
            None
        );

        // 1 learns where 3 is; a later list without locators keeps them.
        let mut one = Mesh::new(z(1), 1);
        one.link_up(z(2));
        assert!(one.apply(z(2), &single));
        let mut reachable = one.take_reachable();
        reachable.sort();
        assert_eq!(reachable, vec![(z(2), at_2.clone()), (z(3), at_3.clone())]);
        two.link_down(z(3));
        two.link_up(z(3));
        assert!(one.apply(z(2), &two.announcement()));
        assert_eq!(one.nodes[&z(3)].locators, Some(at_3));

        // A router two hops away is not a neighbour of 1: its locators go on only with
        // multihop.
        let from_one = one.announcement_sharing(&[], SharedLocators::Neighbours);
        assert_eq!(locators_in(&from_one, z(3)), None);
        let from_one = one.announcement_sharing(&[], SharedLocators::Everyone);
        assert!(locators_in(&from_one, z(3)).is_some());
    }
}
