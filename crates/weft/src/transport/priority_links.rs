//! Links reserved for a range of priorities, beside a node's main transport.
//!
//! A node may open, besides its session with a peer, links reserved for some priorities
//! (an endpoint with `?prio=START-END`, announced in the QoSLink extension). Each such
//! link is a transport of its own (its own lanes, sequence numbers, writer, reader and
//! lease), attached to the main transport: a message of a priority it covers is sent on
//! it, and what it receives is handed to the session as if the main transport had
//! received it. Real-time messages on a link of their own are not queued behind bulk
//! data in the kernel's buffers or behind the reader thread that decodes it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, RwLock};

use weft_proto::core::Priority;

use super::Transport;

/// The priority links of one main transport.
#[derive(Default)]
pub(super) struct PriorityLinks {
    /// Bit `p` set: priority `p` has a link (checked before taking the lock).
    covered: AtomicU8,
    /// The link of each priority.
    by_priority: RwLock<[Option<Arc<Transport>>; 8]>,
}

fn bit(p: Priority) -> u8 {
    1 << p.to_u8()
}

/// How many priorities a link covers (a narrower link wins a priority).
fn width(link: &Transport) -> u8 {
    link.negotiated()
        .link_priorities
        .map_or(8, |(start, end)| end.to_u8() - start.to_u8() + 1)
}

impl PriorityLinks {
    /// The link reserved for `priority`, if any is attached and open.
    pub(super) fn for_priority(&self, priority: Priority) -> Option<Arc<Transport>> {
        if self.covered.load(Ordering::Acquire) & bit(priority) == 0 {
            return None;
        }
        let links = self.by_priority.read().unwrap_or_else(|e| e.into_inner());
        links[usize::from(priority.to_u8())]
            .as_ref()
            .filter(|l| !l.is_closed())
            .cloned()
    }

    /// Attaches `link` for the priorities of its range that no narrower (or equally
    /// narrow) open link covers; returns whether it took any, and the links it took
    /// every priority from (to be closed: nothing would be sent on them any more).
    pub(super) fn attach(&self, link: &Arc<Transport>) -> (bool, Vec<Arc<Transport>>) {
        let Some((start, end)) = link.negotiated().link_priorities else {
            return (false, Vec::new());
        };
        let mut links = self.by_priority.write().unwrap_or_else(|e| e.into_inner());
        let mut displaced: Vec<Arc<Transport>> = Vec::new();
        for p in start.to_u8()..=end.to_u8() {
            let slot = &mut links[usize::from(p)];
            let keep_current = slot
                .as_ref()
                .is_some_and(|cur| !cur.is_closed() && width(cur) <= width(link));
            if !keep_current {
                displaced.extend(slot.replace(link.clone()));
            }
        }
        let took = links.iter().flatten().any(|l| Arc::ptr_eq(l, link));
        displaced.retain(|d| !links.iter().flatten().any(|l| Arc::ptr_eq(l, d)));
        self.covered.store(mask(&links), Ordering::Release);
        (took, displaced)
    }

    /// Detaches `link` wherever it is attached.
    pub(super) fn detach(&self, link: &Arc<Transport>) {
        let mut links = self.by_priority.write().unwrap_or_else(|e| e.into_inner());
        for slot in links.iter_mut() {
            if slot.as_ref().is_some_and(|cur| Arc::ptr_eq(cur, link)) {
                *slot = None;
            }
        }
        self.covered.store(mask(&links), Ordering::Release);
    }

    /// Every attached link, once each.
    pub(super) fn all(&self) -> Vec<Arc<Transport>> {
        let links = self.by_priority.read().unwrap_or_else(|e| e.into_inner());
        let mut all: Vec<Arc<Transport>> = Vec::new();
        for link in links.iter().flatten() {
            if !all.iter().any(|l| Arc::ptr_eq(l, link)) {
                all.push(link.clone());
            }
        }
        all
    }

    /// Detaches every link and returns them, once each.
    pub(super) fn take_all(&self) -> Vec<Arc<Transport>> {
        let mut links = self.by_priority.write().unwrap_or_else(|e| e.into_inner());
        self.covered.store(0, Ordering::Release);
        let mut all: Vec<Arc<Transport>> = Vec::new();
        for link in links.iter_mut().filter_map(Option::take) {
            if !all.iter().any(|l| Arc::ptr_eq(l, &link)) {
                all.push(link);
            }
        }
        all
    }
}

fn mask(links: &[Option<Arc<Transport>>; 8]) -> u8 {
    links
        .iter()
        .enumerate()
        .filter(|(_, l)| l.is_some())
        .fold(0, |m, (i, _)| m | 1 << i)
}
