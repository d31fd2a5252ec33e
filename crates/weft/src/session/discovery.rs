//! The session's side of multicast scouting: answering Scouts, a client finding a router
//! when it has no endpoint to connect to, and nodes connecting to the nodes they
//! discover (`scouting.multicast.autoconnect`).

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_proto::core::{WhatAmI, ZenohId};

use super::{Inner, OpenError};
use crate::config::Config;
use crate::endpoint::Endpoint;
use crate::scouting::message::should_connect;
use crate::scouting::responder::{Identity, Responder};
use crate::scouting::{self, Hello, Scouter};
use crate::transport::Caller;

/// The endpoints of a Hello that weft can connect to.
fn endpoints(hello: &Hello) -> Vec<Endpoint> {
    hello
        .locators
        .iter()
        .filter_map(|l| l.parse::<Endpoint>().ok())
        .collect()
}

/// Client mode without `connect.endpoints`: scouts for `scouting.timeout` and returns the
/// locators of the first node it autoconnects to (a router or a peer by default).
pub(crate) fn find_router(config: &Config, zid: ZenohId) -> Result<Vec<Endpoint>, OpenError> {
    if !config.multicast_scouting {
        return Err(OpenError::NothingToConnect);
    }
    let what = config.scouting.autoconnect_for(config.mode);
    let mut found = Vec::new();
    scouting::scout_with(what, config, config.scouting.timeout, |hello| {
        let eps = endpoints(hello);
        if should_connect(zid, what, hello) && !eps.is_empty() {
            // The locators are what the Hello said: escaped, the first few.
            let locators: Vec<String> = hello
                .locators
                .iter()
                .take(8)
                .map(|l| crate::printable(l).to_string())
                .collect();
            tracing::info!(
                "scouting: found {} {} at [{}]",
                hello.whatami,
                hello.zid,
                locators.join(", ")
            );
            found = eps;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .map_err(|e| OpenError::Scouting(e.to_string()))?;
    if found.is_empty() {
        return Err(OpenError::NothingFound {
            timeout: config.scouting.timeout,
        });
    }
    Ok(found)
}

/// Whether this session scouts periodically to connect to what it discovers.
pub(crate) fn autoconnects(config: &Config) -> bool {
    config.multicast_scouting
        && config.mode != WhatAmI::Client
        && config.scouting.autoconnect_for(config.mode).0 != 0
}

/// Starts answering Scouts and, for routers and peers, autoconnecting, as configured.
/// Scouting failures (no multicast route, for instance) are logged, not fatal: the
/// session works without it.
pub(crate) fn start(inner: &Arc<Inner>) {
    let config = &inner.config;
    if !config.multicast_scouting {
        return;
    }
    let Some(links) = inner.links.get() else {
        tracing::error!("scouting: no links loop to scout on");
        return;
    };
    if config.scouting.answers_scouts() {
        let me = Identity {
            zid: inner.zid,
            whatami: config.mode,
        };
        match Responder::open(&config.scouting, me) {
            Ok(responder) => {
                links.answer_scouts(inner, responder);
                tracing::debug!("scouting: answering Scouts on {}", config.scouting.address);
            }
            Err(e) => tracing::warn!(
                "scouting: cannot answer Scouts on {}: {e}",
                config.scouting.address
            ),
        }
    }
    if autoconnects(config) {
        let what = config.scouting.autoconnect_for(config.mode);
        let scouter = Scouter::open(what, &config.scouting, None).and_then(|s| {
            s.set_nonblocking()
                .map_err(crate::scouting::ScoutError::Socket)?;
            Ok(s)
        });
        match scouter {
            Ok(scouter) => links.autoconnect(inner, scouter, consider),
            Err(e) => tracing::warn!("scouting: cannot scout: {e}"),
        }
    }
}

/// Connects to a discovered node if this session autoconnects to it and is neither
/// connected to it nor connecting to it already.
fn consider(inner: &Arc<Inner>, hello: &Hello) {
    let what = inner.config.scouting.autoconnect_for(inner.config.mode);
    if !should_connect(inner.zid, what, hello) {
        return;
    }
    connect_discovered(
        inner,
        hello.zid,
        endpoints(hello),
        "scouting",
        Duration::ZERO,
    );
}

/// Opens a session to `zid`, discovered (by `how`: scouting or gossip) at `eps`, on the
/// links loop, unless this session is connected or connecting to it already;
/// after `jitter` at most, a random pause, so that two nodes told of each other at the
/// same time rarely connect to each other at the same time.
pub(crate) fn connect_discovered(
    inner: &Arc<Inner>,
    zid: ZenohId,
    eps: Vec<Endpoint>,
    how: &'static str,
    jitter: Duration,
) {
    if eps.is_empty() || zid == inner.zid || inner.lock().faces.contains_key(&zid) {
        return;
    }
    {
        let mut connecting = inner
            .autoconnecting
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !connecting.insert(zid) {
            return;
        }
    }
    let start = Instant::now() + random_below(jitter);
    match inner.links.get() {
        Some(links) => links.connect_once(inner, zid, eps.into(), how, start),
        None => no_longer_connecting(inner, zid),
    }
}

/// A session to `zid`, discovered by `how`, was opened: kept unless it leads elsewhere or
/// this session connected to the node meanwhile by another way.
pub(super) fn connected(
    inner: &Arc<Inner>,
    zid: ZenohId,
    how: &'static str,
    pending: crate::transport::Pending,
    caller: &Caller,
) {
    if pending.transport().peer_zid() != zid {
        // The locators led elsewhere: keep nothing.
        tracing::debug!("{how}: {} is not {zid}", pending.transport().describe());
        pending
            .transport()
            .close(weft_proto::transport::CloseReason::GENERIC, caller);
    } else {
        // Two peers or two routers: the session keeps one of two transports by a rule
        // both ends apply alike (`Inner::add_face`); otherwise the first one stays.
        let mutual = both_may_connect(inner.config.mode, pending.transport().peer_whatami());
        if !mutual && inner.lock().faces.contains_key(&zid) {
            // Connected meanwhile by another way (its own connect, a configured
            // endpoint): one session per node.
            pending
                .transport()
                .close(weft_proto::transport::CloseReason::GENERIC, caller);
        } else {
            tracing::info!("{how}: connected to {zid}");
            inner.adopt(pending, true, caller);
        }
    }
    no_longer_connecting(inner, zid);
}

/// `zid` is no longer being connected to (connected, refused, or given up): a later
/// discovery may try again, and whoever waits for connections looks again.
pub(super) fn no_longer_connecting(inner: &Inner, zid: ZenohId) {
    inner
        .autoconnecting
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&zid);
    inner.changed.notify_all();
}

/// A random duration shorter than `bound` (zero for a zero bound).
fn random_below(bound: Duration) -> Duration {
    let nanos = bound.as_nanos() as u64;
    if nanos == 0 {
        return Duration::ZERO;
    }
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return Duration::ZERO;
    }
    Duration::from_nanos(u64::from_le_bytes(bytes) % nanos)
}

/// Whether a node of role `mode` and one of role `other` may both connect to each other
/// (two peers, or two routers, that learn of each other): their duplicate sessions are
/// then settled by a rule both apply alike.
pub(crate) fn both_may_connect(mode: WhatAmI, other: WhatAmI) -> bool {
    mode == other && mode != WhatAmI::Client
}
