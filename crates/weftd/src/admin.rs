//! The admin space, answered as zenohd 1.10.2 answers it under `@/<zid>/router/**`:
//!
//! - `@/<zid>/router` (application/json): locators, metadata, plugins, sessions (peer,
//!   whatami, region, links, shm, weight), version and zid; each session also carries
//!   weft's own counters (`counters`, `priority_links`) beside Zenoh's fields.
//! - `@/<zid>/router/{subscriber,publisher,queryable,querier,token}/<ke>`
//!   (application/json): `{"routers":[…],"peers":[…],"clients":[…]}`, the nodes that
//!   declared it as this router knows them (what a router relayed for another router is
//!   listed under that one, the origin its NodeId named).
//! - `@/<zid>/router/linkstate/north` (text/plain): the router mesh as a Graphviz graph;
//!   `…/linkstate/south:0:peer`: the peers connected to it (nodes only, as zenohd).
//! - `@/<zid>/router/route/successor/src/<zid>/dst/<zid>` (application/json): the router
//!   this one forwards to on the spanning tree, towards the destination.
//! - `@/<zid>/router/metrics`: the metrics (module `metrics`), OpenMetrics text, gzipped
//!   unless `compression=false`, without the `#` lines with `descriptors=false` (the same
//!   text REST serves at `/metrics`, for Prometheus).
//! - The plugins weftd runs built in (REST, storages), where zenohd shows the plugins it
//!   loaded: `@/<zid>/router/plugins/<id>` (application/json, the plugin's state),
//!   `@/<zid>/router/status/plugins/<id>/__path__` (text/plain) and the plugin's own
//!   status keys under `@/<zid>/router/status/plugins/<id>/` (application/json): REST's
//!   `version` and `port`, the storage manager's `version` and `storages/<name>`, the
//!   recorder's `version` and `recordings/<name>` (its configuration as given, with its
//!   counters now: `messages`, `bytes`, `files`, `file_bytes`, `errors`, `lost`,
//!   `waited`, `current_file`, `current_file_bytes`, `last_error`).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};
use weft::{AdminInfo, FaceInfo, PutOptions, Query, Queryable, Session, SessionError, WhatAmI};
use weft_keyexpr::KeyExpr;
use weft_record::RecordingStats;

use crate::metrics::parameter;

/// The cost Zenoh gives a link between routers when no weight is configured: every weft
/// link costs the same (the tree is breadth-first), which is what this weight means.
const DEFAULT_LINK_WEIGHT: u16 = 100;

/// What the admin space shows beyond the session's state.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    /// The configuration's `metadata` (null when absent).
    pub(crate) metadata: Value,
    /// The plugins weftd runs built in.
    pub(crate) plugins: Vec<Plugin>,
    /// The storages and recordings, for the metrics.
    pub(crate) plugin_metrics: crate::metrics::PluginMetrics,
}

/// A plugin weftd runs built in (Zenoh's REST plugin and storage manager are libraries
/// zenohd loads; in weftd they are part of the program).
#[derive(Debug, Clone)]
pub(crate) struct Plugin {
    /// Zenoh's id for it: `rest`, `storage_manager`.
    pub(crate) id: &'static str,
    /// Its status keys under `@/<zid>/router/status/plugins/<id>/`, with their values.
    pub(crate) status: Vec<(String, Status)>,
}

/// The value of a plugin's status key.
#[derive(Clone)]
pub(crate) enum Status {
    /// The same whenever asked.
    Fixed(Value),
    /// A recording: its configuration as given, with its counters when asked.
    Recording(Value, Arc<RecordingStats>),
}

impl Status {
    /// The value now.
    fn value(&self) -> Value {
        match self {
            Self::Fixed(v) => v.clone(),
            Self::Recording(config, stats) => {
                let mut value = config.clone();
                if let (Value::Object(out), Value::Object(counters)) =
                    (&mut value, stats.status().json())
                {
                    out.extend(counters);
                }
                value
            }
        }
    }
}

impl std::fmt::Debug for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Fixed(v) => f.debug_tuple("Fixed").field(v).finish(),
            Self::Recording(config, _) => f.debug_tuple("Recording").field(config).finish(),
        }
    }
}

impl Plugin {
    /// Zenoh's REST plugin, serving on `address`.
    pub(crate) fn rest(address: std::net::SocketAddr) -> Self {
        Self {
            id: "rest",
            status: vec![
                (
                    "version".into(),
                    Status::Fixed(Value::from(plugin_version())),
                ),
                (
                    "port".into(),
                    Status::Fixed(json!({ "http_port": address.to_string() })),
                ),
            ],
        }
    }

    /// Zenoh's storage manager, with each storage's configuration as given (`storages`:
    /// the `plugins.storage_manager.storages` object).
    pub(crate) fn storage_manager(storages: Option<&Value>) -> Self {
        let mut status = vec![(
            "version".into(),
            Status::Fixed(Value::from(plugin_version())),
        )];
        if let Some(Value::Object(storages)) = storages {
            status.extend(
                storages.iter().map(|(name, config)| {
                    (format!("storages/{name}"), Status::Fixed(config.clone()))
                }),
            );
        }
        Self {
            id: "storage_manager",
            status,
        }
    }

    /// weft's recorder (`plugins.recorder`), with each recording's configuration as given
    /// (`recordings`: the `plugins.recorder.recordings` object) and counters.
    pub(crate) fn recorder(
        recordings: Option<&Value>,
        stats: &[(String, Arc<RecordingStats>)],
    ) -> Self {
        let mut status = vec![(
            "version".into(),
            Status::Fixed(Value::from(plugin_version())),
        )];
        status.extend(stats.iter().map(|(name, stats)| {
            let config = recordings
                .and_then(|r| r.get(name))
                .cloned()
                .unwrap_or_else(|| json!({}));
            (
                format!("recordings/{name}"),
                Status::Recording(config, stats.clone()),
            )
        }));
        Self {
            id: "recorder",
            status,
        }
    }

    /// Its state, as `@/<zid>/router/plugins/<id>` shows a running plugin's.
    fn state_json(&self) -> Value {
        json!({
            "name": self.id,
            "id": self.id,
            "version": env!("CARGO_PKG_VERSION"),
            "long_version": version(),
            "path": plugin_path(),
            "state": "Started",
            "report": { "level": "Normal" },
        })
    }
}

/// The version a built-in plugin reports (`v<version>`, as Zenoh's plugins).
fn plugin_version() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// Where a built-in plugin's code is: weftd's own program.
fn plugin_path() -> String {
    std::env::current_exe().map_or_else(|_| "weftd".to_string(), |p| p.display().to_string())
}

/// weftd's version, shaped as zenohd's (`v<version>-<tag> built with <rustc>`).
pub(crate) fn version() -> String {
    format!(
        "v{}-weftd built with {}",
        env!("CARGO_PKG_VERSION"),
        env!("WEFTD_RUSTC_VERSION")
    )
}

/// The region Zenoh 1.10.2 places a node of role `whatami` in, seen from a router.
const fn region(whatami: WhatAmI) -> &'static str {
    match whatami {
        WhatAmI::Router => "north",
        WhatAmI::Peer => "south:0:peer",
        WhatAmI::Client => "south:0:client",
    }
}

/// Whether the mesh holds a link between this router and `peer`.
fn meshed(a: &AdminInfo, peer: weft::ZenohId) -> bool {
    a.mesh
        .as_ref()
        .is_some_and(|m| m.links.contains(&(a.zid.min(peer), a.zid.max(peer))))
}

/// One session as `@/<zid>/router` lists it.
fn session_json(a: &AdminInfo, f: &FaceInfo) -> Value {
    let mut links = vec![json!({ "dst": f.link, "src": f.local_link })];
    links.extend(
        f.priority_links
            .iter()
            .map(|l| json!({ "dst": l.link, "src": l.local_link })),
    );
    let weight = if f.whatami == WhatAmI::Router && meshed(a, f.zid) {
        json!({ "actual_weight": DEFAULT_LINK_WEIGHT, "dst_weight": null, "src_weight": null })
    } else {
        Value::Null
    };
    let priority_links: Vec<Value> = f
        .priority_links
        .iter()
        .map(|l| {
            json!({
                "link": l.link,
                "priorities": format!("{}-{}", l.priorities.0, l.priorities.1),
                "batches_in": l.batches_in,
                "batches_out": l.batches_out,
                "bytes_in": l.bytes_in,
                "bytes_out": l.bytes_out,
            })
        })
        .collect();
    json!({
        "links": links,
        "peer": f.zid.to_string(),
        "region": region(f.whatami),
        "shm": false,
        "weight": weight,
        "whatami": f.whatami.as_str(),
        "counters": {
            "batches_in": f.batches_in,
            "batches_out": f.batches_out,
            "bytes_in": f.bytes_in,
            "bytes_out": f.bytes_out,
            "messages_in": f.messages_in,
            "dropped": f.dropped,
            "drops": f.drops.iter().map(|(r, n)| (r.to_string(), Value::from(*n))).collect::<serde_json::Map<_, _>>(),
            "denied": f.denied,
            "discarded": f.discarded.iter().map(|(r, n)| (r.to_string(), Value::from(*n))).collect::<serde_json::Map<_, _>>(),
            "subscriptions": f.subscriber_traffic.iter().map(|t| json!({
                "key_expr": t.key_expr,
                "messages": t.messages,
                "bytes": t.bytes,
                "dropped": t.dropped,
            })).collect::<Vec<_>>(),
            "publications": f.publisher_traffic.iter().map(|t| json!({
                "key_expr": t.key_expr,
                "messages": t.messages,
                "bytes": t.bytes,
            })).collect::<Vec<_>>(),
        },
        "priority_links": priority_links,
    })
}

/// The router's description, `@/<zid>/router`.
pub(crate) fn router_json(a: &AdminInfo, context: &Context) -> Value {
    let sessions: Vec<Value> = a.faces.iter().map(|f| session_json(a, f)).collect();
    let plugins: serde_json::Map<String, Value> = context
        .plugins
        .iter()
        .map(|p| {
            (
                p.id.to_string(),
                json!({ "name": p.id, "path": plugin_path() }),
            )
        })
        .collect();
    json!({
        "locators": a.locators,
        "metadata": context.metadata,
        "plugins": plugins,
        "sessions": sessions,
        "version": version(),
        "zid": a.zid.to_string(),
        "whatami": a.mode.as_str(),
    })
}

/// The kinds of declaration the admin space lists, by key segment.
const KINDS: [&str; 5] = ["subscriber", "publisher", "queryable", "querier", "token"];

/// Who declared one key expression: ZenohIDs by role.
#[derive(Debug, Default)]
struct Sources {
    routers: Vec<String>,
    peers: Vec<String>,
    clients: Vec<String>,
}

impl Sources {
    fn add(&mut self, whatami: WhatAmI, zid: String) {
        let list = match whatami {
            WhatAmI::Router => &mut self.routers,
            WhatAmI::Peer => &mut self.peers,
            WhatAmI::Client => &mut self.clients,
        };
        if !list.contains(&zid) {
            list.push(zid);
            list.sort();
        }
    }

    fn json(&self) -> Value {
        json!({ "routers": self.routers, "peers": self.peers, "clients": self.clients })
    }
}

/// Every key expression declared as `kind`, with who declared it (a router's declaration
/// made for another router under that one, as its NodeId named it). This router counts as
/// a source of its own declarations and of what it declares to the mesh for its clients
/// and peers (subscribers, queryables, tokens), as zenohd does; `skip` is the admin
/// space's own queryable, which zenohd does not list either.
fn declarations(a: &AdminInfo, kind: &str, skip: &str) -> BTreeMap<String, Sources> {
    let mut out: BTreeMap<String, Sources> = BTreeMap::new();
    let own = a.zid.to_string();
    let own_list: &[String] = match kind {
        "subscriber" => &a.subscribers,
        "publisher" => &a.publishers,
        "queryable" => &a.queryables,
        "token" => &a.tokens,
        _ => &[],
    };
    for key in own_list.iter().filter(|k| k.as_str() != skip) {
        out.entry(key.clone())
            .or_default()
            .add(WhatAmI::Router, own.clone());
    }
    let redeclared = matches!(kind, "subscriber" | "queryable" | "token");
    for f in &a.faces {
        let list = match kind {
            "subscriber" => &f.subscribers,
            "publisher" => &f.publishers,
            "queryable" => &f.queryables,
            "querier" => &f.queriers,
            _ => &f.tokens,
        };
        // What a router declared for another router is listed under that router.
        let mut own_keys: Vec<&String> = list.iter().collect();
        for r in f.relayed.iter().filter(|r| r.kind == kind) {
            if let Some(i) = own_keys.iter().position(|k| **k == r.key_expr) {
                own_keys.remove(i);
            }
            out.entry(r.key_expr.clone())
                .or_default()
                .add(WhatAmI::Router, r.origin.to_string());
        }
        for key in own_keys {
            let sources = out.entry(key.clone()).or_default();
            sources.add(f.whatami, f.zid.to_string());
            if redeclared && f.whatami != WhatAmI::Router {
                sources.add(WhatAmI::Router, own.clone());
            }
        }
    }
    out
}

/// The router mesh as Graphviz, as zenohd prints it: this router is node 0.
pub(crate) fn linkstate_dot(mesh: &weft::MeshInfo) -> String {
    let mut out = String::from("graph {\n");
    let index: BTreeMap<weft::ZenohId, usize> = mesh
        .routers
        .iter()
        .enumerate()
        .map(|(i, z)| (*z, i))
        .collect();
    for (i, zid) in mesh.routers.iter().enumerate() {
        out.push_str(&format!("    {i} [ label = \"{zid}\" ]\n"));
    }
    for (a, b) in &mesh.links {
        if let (Some(a), Some(b)) = (index.get(a), index.get(b)) {
            let (hi, lo) = (a.max(b), a.min(b));
            out.push_str(&format!(
                "    {hi} -- {lo} [ label = \"{DEFAULT_LINK_WEIGHT}\" ]\n"
            ));
        }
    }
    out.push_str("}\n");
    out
}

/// The peers connected to this router as Graphviz, as zenohd prints its peers' graph
/// (`linkstate/south:0:peer`): this router as node 0, then each peer; no edges (zenohd
/// 1.10.2 shows none there either).
pub(crate) fn peers_dot(a: &AdminInfo) -> String {
    let mut out = format!("graph {{\n    0 [ label = \"{}\" ]\n", a.zid);
    let mut peers: Vec<String> = a
        .faces
        .iter()
        .filter(|f| f.whatami == WhatAmI::Peer)
        .map(|f| f.zid.to_string())
        .collect();
    peers.sort();
    peers.dedup();
    for (i, zid) in peers.iter().enumerate() {
        out.push_str(&format!("    {} [ label = \"{zid}\" ]\n", i + 1));
    }
    out.push_str("}\n");
    out
}

/// Answers one query on the admin space.
fn answer(session: &Session, context: &Context, base: &str, q: &Query) {
    let Ok(asked) = KeyExpr::new(q.key_expr()) else {
        return;
    };
    if let Some(key) = explained_key(q.key_expr(), &session.zid().to_string()) {
        answer_explain(session, q, base, key);
        return;
    }
    let wanted = |key: &str| KeyExpr::new(key).is_ok_and(|k| k.intersects(asked));
    let info = session.admin();
    let json_options = PutOptions {
        encoding: "application/json".into(),
        ..PutOptions::default()
    };
    if wanted(base) {
        let _ = q.reply(
            base,
            router_json(&info, context).to_string().as_bytes(),
            &json_options,
        );
    }
    let metrics = format!("{base}/metrics");
    if wanted(&metrics) {
        let (payload, encoding) = crate::metrics::metrics_reply(
            &info,
            session.query_stats(),
            &context.plugin_metrics,
            q.parameters(),
        );
        let options = PutOptions {
            encoding,
            ..PutOptions::default()
        };
        let _ = q.reply(&metrics, &payload, &options);
    }
    answer_plugins(context, base, q, &wanted);
    let own_queryable = format!("{base}/**");
    for kind in KINDS {
        if !wanted(&format!("{base}/{kind}/**")) {
            continue;
        }
        for (key, sources) in declarations(&info, kind, &own_queryable) {
            let reply_key = format!("{base}/{kind}/{key}");
            if wanted(&reply_key) {
                let _ = q.reply_key_expr(
                    &reply_key,
                    sources.json().to_string().as_bytes(),
                    &json_options,
                );
            }
        }
    }
    let Some(mesh) = &info.mesh else {
        return;
    };
    let linkstate = format!("{base}/linkstate/north");
    if wanted(&linkstate) {
        let options = PutOptions {
            encoding: "text/plain".into(),
            ..PutOptions::default()
        };
        let _ = q.reply(&linkstate, linkstate_dot(mesh).as_bytes(), &options);
    }
    let peers = format!("{base}/linkstate/south:0:peer");
    if wanted(&peers) {
        let options = PutOptions {
            encoding: "text/plain".into(),
            ..PutOptions::default()
        };
        let _ = q.reply(&peers, peers_dot(&info).as_bytes(), &options);
    }
    if wanted(&format!("{base}/route/successor/**")) {
        for src in &mesh.routers {
            for (dst, via) in &mesh.next_hops {
                let key = format!("{base}/route/successor/src/{src}/dst/{dst}");
                if wanted(&key) {
                    let value = Value::from(via.to_string()).to_string();
                    let _ = q.reply(&key, value.as_bytes(), &json_options);
                }
            }
        }
    }
}

/// Answers `@/<zid>/router/explain/<key>[?from=<zid>]`: how a put on the concrete `key`
/// would be routed (see [`explanation_json`]). Wildcard keys are not explained (there is
/// no one route to tell): nothing is answered for them, nor for an unknown `from`.
fn answer_explain(session: &Session, q: &Query, base: &str, key: &str) {
    let from = match parameter(q.parameters(), "from") {
        Some(zid) => match zid.parse::<weft::ZenohId>() {
            Ok(zid) => Some(zid),
            Err(_) => {
                let _ = q.reply_err(
                    format!("from={zid}: not a ZenohID").as_bytes(),
                    "text/plain",
                );
                return;
            }
        },
        None => None,
    };
    match session.explain_put(key, from) {
        Ok(explanation) => {
            let options = PutOptions {
                encoding: "application/json".into(),
                ..PutOptions::default()
            };
            let body = explanation_json(&explanation).to_string();
            let _ = q.reply(&format!("{base}/explain/{key}"), body.as_bytes(), &options);
        }
        Err(e) => {
            let _ = q.reply_err(e.to_string().as_bytes(), "text/plain");
        }
    }
}

/// The key a query asks a route explanation for: `@/<zid or *>/router/explain/<key>`,
/// `<key>` concrete.
fn explained_key<'q>(asked: &'q str, zid: &str) -> Option<&'q str> {
    let rest = asked.strip_prefix("@/")?;
    let (node, rest) = rest.split_once('/')?;
    let key = rest.strip_prefix("router/explain/")?;
    let concrete = !key.split('/').any(|c| c.contains('*') || c.contains('$'));
    ((node == zid || node == "*") && concrete).then_some(key)
}

/// A route explanation as JSON: the key, where the put comes from, this router's own
/// matching subscriptions, and per connected node whether it receives the put and why.
pub(crate) fn explanation_json(e: &weft::RouteExplanation) -> Value {
    let faces: Vec<Value> = e
        .faces
        .iter()
        .map(|f| {
            json!({
                "zid": f.zid.to_string(),
                "whatami": f.whatami.as_str(),
                "link": f.link,
                "receives": f.receives,
                "matching": f.matching,
                "why": f.why,
                "congestion_drops": f.congestion_drops,
            })
        })
        .collect();
    json!({
        "key": e.key,
        "from": e.from.map(|z| z.to_string()),
        "local": e.local,
        "faces": faces,
    })
}

/// Answers on the built-in plugins' keys.
fn answer_plugins(context: &Context, base: &str, q: &Query, wanted: &dyn Fn(&str) -> bool) {
    let json_options = PutOptions {
        encoding: "application/json".into(),
        ..PutOptions::default()
    };
    for plugin in &context.plugins {
        let state = format!("{base}/plugins/{}", plugin.id);
        if wanted(&state) {
            let _ = q.reply(
                &state,
                plugin.state_json().to_string().as_bytes(),
                &json_options,
            );
        }
        let status = format!("{base}/status/plugins/{}", plugin.id);
        if !wanted(&format!("{status}/**")) {
            continue;
        }
        let path = format!("{status}/__path__");
        if wanted(&path) {
            let options = PutOptions {
                encoding: "text/plain".into(),
                ..PutOptions::default()
            };
            let _ = q.reply(&path, plugin_path().as_bytes(), &options);
        }
        for (suffix, value) in &plugin.status {
            let key = format!("{status}/{suffix}");
            if wanted(&key) {
                let _ = q.reply(&key, value.value().to_string().as_bytes(), &json_options);
            }
        }
    }
}

/// Declares the admin space's queryable, `@/<zid>/router/**` (which includes
/// `@/<zid>/router` itself).
pub(crate) fn declare(session: &Session, context: Context) -> Result<Queryable, SessionError> {
    let base = format!("@/{}/router", session.zid());
    let handle = session.clone();
    session.declare_queryable(&format!("{base}/**"), true, move |q| {
        answer(&handle, &context, &base, &q);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zid(v: u128) -> weft::ZenohId {
        weft::ZenohId::new(v).unwrap()
    }

    #[test]
    fn explanations_are_asked_for_one_concrete_key_of_this_router() {
        assert_eq!(
            explained_key("@/ab/router/explain/demo/a", "ab"),
            Some("demo/a")
        );
        assert_eq!(
            explained_key("@/*/router/explain/demo/a", "ab"),
            Some("demo/a")
        );
        assert_eq!(explained_key("@/cd/router/explain/demo/a", "ab"), None);
        assert_eq!(explained_key("@/ab/router/explain/demo/*", "ab"), None);
        assert_eq!(explained_key("@/ab/router/explain/**", "ab"), None);
        assert_eq!(explained_key("@/ab/router/subscriber/x", "ab"), None);
    }

    #[test]
    fn the_mesh_prints_as_zenohd_prints_it() {
        let mesh = weft::MeshInfo {
            routers: vec![zid(0xaa01), zid(0xbb02)],
            links: vec![(zid(0xaa01), zid(0xbb02))],
            next_hops: vec![(zid(0xbb02), zid(0xbb02))],
        };
        assert_eq!(
            linkstate_dot(&mesh),
            "graph {\n    0 [ label = \"aa01\" ]\n    1 [ label = \"bb02\" ]\n    \
             1 -- 0 [ label = \"100\" ]\n}\n"
        );
    }
}
