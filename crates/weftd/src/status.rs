//! The status page: a static HTML page (`status_page.html`, inline CSS and script, no
//! other asset) served at `GET /` on the REST port, and the JSON snapshot it polls every
//! second at `GET /@/status.json`: weftd's identity, its sessions with their cumulative
//! counters, drops by reason and what weftd forwarded for each of their subscribers' key
//! expressions (the router's own counters: nothing is subscribed to watch), the router
//! mesh and the storages. The page turns successive counter readings into rates, timed by
//! the snapshot's own clock.

use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::{json, Map, Value};
use weft::{AdminInfo, FaceInfo};

use crate::metrics::StorageMetrics;

/// The page, served as is.
pub(crate) const PAGE: &str = include_str!("status_page.html");

/// Milliseconds since weftd began serving REST, on a clock that never goes back: what the page
/// divides counter differences by.
pub(crate) fn uptime_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// One session: its node, link, cumulative counters, drops by reason, and what weftd
/// forwarded to it for each key expression it subscribed to (router mode; cumulative while
/// the subscription lives).
fn session_json(f: &FaceInfo) -> Value {
    let drops: Map<String, Value> = f
        .drops
        .iter()
        .map(|(reason, n)| ((*reason).to_owned(), Value::from(*n)))
        .collect();
    json!({
        "zid": f.zid.to_string(),
        "whatami": f.whatami.as_str(),
        "link": f.link,
        "messages_in": f.messages_in,
        "batches_in": f.batches_in,
        "batches_out": f.batches_out,
        "bytes_in": f.bytes_in,
        "bytes_out": f.bytes_out,
        "drops": drops,
        "denied": f.denied,
        "subscriptions": f
            .subscriber_traffic
            .iter()
            .map(|t| json!({
                "key_expr": t.key_expr,
                "messages": t.messages,
                "bytes": t.bytes,
                "dropped": t.dropped,
            }))
            .collect::<Vec<_>>(),
    })
}

/// The mesh: the routers weftd reaches (itself included) and the links between them.
/// A weftd that is no router, or knows no mesh, has only itself.
fn mesh_json(a: &AdminInfo) -> Value {
    let own = a.zid.to_string();
    match &a.mesh {
        Some(mesh) => json!({
            "routers": mesh.routers.iter().map(ToString::to_string).collect::<Vec<_>>(),
            "links": mesh
                .links
                .iter()
                .map(|(x, y)| json!([x.to_string(), y.to_string()]))
                .collect::<Vec<_>>(),
        }),
        None => json!({ "routers": [own], "links": [] }),
    }
}

/// One storage: its name, key expression, what it holds and writes.
fn storage_json(s: &StorageMetrics) -> Value {
    json!({
        "name": s.name,
        "key_expr": s.key_expr,
        "keys": s.stats.keys.load(Ordering::Relaxed),
        "bytes": s.stats.bytes.load(Ordering::Relaxed),
        "writes": s.stats.writes.load(Ordering::Relaxed),
        "errors": s.stats.errors.load(Ordering::Relaxed),
    })
}

/// The snapshot the page polls, taken at `time_ms` (see [`uptime_ms`]).
pub(crate) fn snapshot(a: &AdminInfo, storages: &[StorageMetrics], time_ms: u64) -> Value {
    json!({
        "zid": a.zid.to_string(),
        "whatami": a.mode.as_str(),
        "version": crate::admin::version(),
        "locators": a.locators,
        "time_ms": time_ms,
        "sessions": a.faces.iter().map(session_json).collect::<Vec<_>>(),
        "own": {
            "subscribers": a.subscribers.len(),
            "queryables": a.queryables.len(),
            "tokens": a.tokens.len(),
        },
        "mesh": mesh_json(a),
        "storages": storages.iter().map(storage_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use weft::WhatAmI;

    fn zid(v: u128) -> weft::ZenohId {
        weft::ZenohId::new(v).unwrap()
    }

    fn face(id: u128, whatami: WhatAmI) -> FaceInfo {
        FaceInfo {
            zid: zid(id),
            whatami,
            link: "tcp/127.0.0.1:40000".into(),
            batches_in: 3,
            batches_out: 4,
            bytes_in: 300,
            bytes_out: 400,
            messages_in: 5,
            dropped: 2,
            drops: vec![("congestion", 2), ("closed", 0), ("unqueueable", 0)],
            denied: 0,
            discarded: Vec::new(),
            subscribers: Vec::new(),
            queryables: Vec::new(),
            tokens: Vec::new(),
            publishers: Vec::new(),
            queriers: Vec::new(),
            relayed: Vec::new(),
            local_link: "tcp/127.0.0.1:7447".into(),
            priority_links: Vec::new(),
            subscriber_traffic: Vec::new(),
            publisher_traffic: Vec::new(),
            qos: true,
            batch_size: u16::MAX,
        }
    }

    #[test]
    fn the_snapshot_holds_sessions_subscriptions_mesh_and_storages() {
        let mut client = face(0xc1, WhatAmI::Client);
        client.subscriber_traffic = vec![
            weft::DeclarationTraffic {
                key_expr: "robot/<arm>/**".into(),
                messages: 10,
                bytes: 250,
                dropped: 1,
            },
            weft::DeclarationTraffic {
                key_expr: "robot/leg".into(),
                ..Default::default()
            },
        ];
        let info = AdminInfo {
            zid: zid(0xaa),
            mode: WhatAmI::Router,
            locators: vec!["tcp/127.0.0.1:7447".into()],
            faces: vec![client, face(0xbb, WhatAmI::Router)],
            subscribers: vec!["**".into()],
            queryables: Vec::new(),
            tokens: Vec::new(),
            publishers: Vec::new(),
            refused: Vec::new(),
            mesh: Some(weft::MeshInfo {
                routers: vec![zid(0xaa), zid(0xbb)],
                links: vec![(zid(0xaa), zid(0xbb))],
                next_hops: vec![(zid(0xbb), zid(0xbb))],
            }),
        };
        let stats = Arc::new(weft_storage::StorageStats::default());
        stats.keys.store(2, Ordering::Relaxed);
        stats.bytes.store(17, Ordering::Relaxed);
        let storages = [StorageMetrics {
            name: "demo".into(),
            key_expr: "demo/**".into(),
            stats,
        }];
        let s = snapshot(&info, &storages, 1234);
        assert_eq!(s["zid"], "aa");
        assert_eq!(s["whatami"], "router");
        assert_eq!(s["time_ms"], 1234);
        assert_eq!(s["own"]["subscribers"], 1);
        let client = &s["sessions"][0];
        assert_eq!(client["zid"], "c1");
        assert_eq!(client["whatami"], "client");
        assert_eq!(client["link"], "tcp/127.0.0.1:40000");
        assert_eq!(
            (client["messages_in"].as_u64(), client["bytes_out"].as_u64()),
            (Some(5), Some(400))
        );
        assert_eq!(
            client["drops"],
            json!({ "congestion": 2, "closed": 0, "unqueueable": 0 })
        );
        // Key expressions as they are (the page escapes them), idle subscriptions too.
        assert_eq!(
            client["subscriptions"],
            json!([
                { "key_expr": "robot/<arm>/**", "messages": 10, "bytes": 250, "dropped": 1 },
                { "key_expr": "robot/leg", "messages": 0, "bytes": 0, "dropped": 0 },
            ])
        );
        assert_eq!(s["sessions"][1]["whatami"], "router");
        assert_eq!(s["sessions"][1]["subscriptions"], json!([]));
        assert_eq!(
            s["mesh"],
            json!({ "routers": ["aa", "bb"], "links": [["aa", "bb"]] })
        );
        assert_eq!(
            s["storages"],
            json!([{ "name": "demo", "key_expr": "demo/**", "keys": 2, "bytes": 17, "writes": 0, "errors": 0 }])
        );
    }

    #[test]
    fn without_a_mesh_the_graph_is_weftd_alone() {
        let info = AdminInfo {
            zid: zid(0xaa),
            mode: WhatAmI::Peer,
            locators: Vec::new(),
            faces: Vec::new(),
            subscribers: Vec::new(),
            queryables: Vec::new(),
            tokens: Vec::new(),
            publishers: Vec::new(),
            refused: Vec::new(),
            mesh: None,
        };
        let s = snapshot(&info, &[], 0);
        assert_eq!(s["mesh"], json!({ "routers": ["aa"], "links": [] }));
    }

    #[test]
    fn the_page_stands_alone_and_fills_itself() {
        // No external asset: nothing is fetched but the snapshot.
        for external in ["src=", "href=", "@import", "url("] {
            assert!(!PAGE.contains(external), "{external}");
        }
        assert!(PAGE.contains("/@/status.json"));
        // Everything shown is set as text, never parsed as markup.
        assert!(!PAGE.contains("innerHTML"));
        assert!(!PAGE.contains("http-equiv"));
    }
}
