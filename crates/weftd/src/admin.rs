//! The admin space: `@/<zid>/router` (the router, its sessions and counters) and
//! `@/<zid>/router/subscribers|queryables|tokens`, answered as JSON to any query that
//! intersects them (e.g. `@/*/router/**`).

use serde_json::{json, Value};
use weft::{AdminInfo, PutOptions, Queryable, Session, SessionError};

/// The router's description.
pub(crate) fn router_json(a: &AdminInfo) -> Value {
    let sessions: Vec<Value> = a
        .faces
        .iter()
        .map(|f| {
            let mut links = vec![f.link.clone()];
            links.extend(f.priority_links.iter().map(|l| l.link.clone()));
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
                "zid": f.zid.to_string(),
                "whatami": f.whatami.as_str(),
                "links": links,
                "priority_links": priority_links,
                "counters": {
                    "batches_in": f.batches_in,
                    "batches_out": f.batches_out,
                    "bytes_in": f.bytes_in,
                    "bytes_out": f.bytes_out,
                    "messages_in": f.messages_in,
                    "dropped": f.dropped,
                    "denied": f.denied,
                },
            })
        })
        .collect();
    json!({
        "zid": a.zid.to_string(),
        "version": env!("CARGO_PKG_VERSION"),
        "whatami": a.mode.as_str(),
        "locators": a.locators,
        "sessions": sessions,
    })
}

/// What is declared, by kind: every face's and the router's own.
fn declared(a: &AdminInfo, kind: &str) -> Value {
    let mut out = Vec::new();
    let own = match kind {
        "subscribers" => &a.subscribers,
        "queryables" => &a.queryables,
        _ => &a.tokens,
    };
    for k in own {
        out.push(json!({ "key_expr": k, "zid": a.zid.to_string() }));
    }
    for f in &a.faces {
        let list = match kind {
            "subscribers" => &f.subscribers,
            "queryables" => &f.queryables,
            _ => &f.tokens,
        };
        for k in list {
            out.push(json!({ "key_expr": k, "zid": f.zid.to_string() }));
        }
    }
    Value::from(out)
}

/// Declares the admin space's queryable.
pub(crate) fn declare(session: &Session) -> Result<Queryable, SessionError> {
    let base = format!("@/{}/router", session.zid());
    let handle = session.clone();
    session.declare_queryable(&format!("{base}/**"), true, move |q| {
        let Ok(asked) = weft_keyexpr::KeyExpr::new(q.key_expr()) else {
            return;
        };
        let info = handle.admin();
        let options = PutOptions {
            encoding: "application/json".into(),
            ..PutOptions::default()
        };
        let entries = [
            (base.clone(), router_json(&info)),
            (
                format!("{base}/subscribers"),
                declared(&info, "subscribers"),
            ),
            (format!("{base}/queryables"), declared(&info, "queryables")),
            (format!("{base}/tokens"), declared(&info, "tokens")),
        ];
        for (key, value) in entries {
            if weft_keyexpr::KeyExpr::new(&key).is_ok_and(|k| k.intersects(asked)) {
                let _ = q.reply(&key, value.to_string().as_bytes(), &options);
            }
        }
    })
}
