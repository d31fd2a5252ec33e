//! The REST interface, compatible with Zenoh's REST plugin paths and JSON:
//! `GET /KEYEXPR[?params]` answers with the replies of a get, `PUT /KEY` publishes the body
//! (its Content-Type is the encoding), `DELETE /KEY` deletes; `GET /` is a page showing the
//! router's sessions and counters, refreshing itself.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::sync::Arc;

use serde_json::{json, Value};
use weft::{GetOptions, PutOptions, Session};

use crate::http::{Limits, Request, Response};

/// Serves REST on `address` until the process ends, within the default [`Limits`]:
/// request line 8 KiB, headers 64 KiB, body 64 MiB (413 beyond, nothing stored), 10 s
/// idle, 64 connections at once, each served on its own thread. Every interface (`[::]`)
/// falls back to every IPv4 interface where IPv6 is off.
pub(crate) fn serve(session: Session, address: SocketAddr) -> Result<(), String> {
    let listener = TcpListener::bind(address)
        .or_else(|e| {
            if address.ip() == IpAddr::V6(Ipv6Addr::UNSPECIFIED) {
                TcpListener::bind((Ipv4Addr::UNSPECIFIED, address.port()))
            } else {
                Err(e)
            }
        })
        .map_err(|e| format!("REST address {address}: {e}"))?;
    tracing::info!(
        "REST on http://{} ({})",
        listener.local_addr().unwrap_or(address),
        if address.ip().is_loopback() {
            "this machine only"
        } else {
            "reachable from the network: anyone who can reach it can put and delete"
        }
    );
    let handler: crate::http::Handler = Arc::new(move |r: &Request| handle(&session, r));
    crate::http::serve(listener, Limits::default(), handler).map_err(|e| e.to_string())
}

/// The JSON of one value, as Zenoh's REST plugin shows it: JSON payloads embedded,
/// text as a string, anything else in base64.
fn value_json(payload: &[u8], encoding: &str) -> Value {
    let text = std::str::from_utf8(payload);
    if encoding.starts_with("application/json") || encoding.starts_with("text/json") {
        if let Ok(v) = serde_json::from_slice::<Value>(payload) {
            return v;
        }
    }
    match text {
        Ok(t) => Value::from(t),
        Err(_) => Value::from(base64(payload)),
    }
}

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| char::from(b).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn json_response(value: &Value) -> Response {
    Response::new(200, "application/json", value.to_string())
}

fn handle(session: &Session, request: &Request) -> Response {
    let path = request.target.trim_start_matches('/');
    if path.is_empty() && request.method == "GET" {
        return Response::new(200, "text/html; charset=utf-8", page(session));
    }
    let (key, params) = match path.split_once('?') {
        Some((k, p)) => (percent_decode(k), p.to_string()),
        None => (percent_decode(path), String::new()),
    };
    match request.method.as_str() {
        "GET" => {
            let selector = if params.is_empty() {
                key
            } else {
                format!("{key}?{}", percent_decode(&params))
            };
            // The session's queries_default_timeout bounds the wait.
            let replies = match session.get(&selector, &GetOptions::default()) {
                Ok(r) => r,
                Err(e) => return Response::text(400, &e.to_string()),
            };
            let list: Vec<Value> = replies
                .iter()
                .filter_map(|r| r.result.ok())
                .map(|s| {
                    json!({
                        "key": &*s.key_expr,
                        "value": value_json(&s.payload, &s.encoding),
                        "encoding": s.encoding,
                        "timestamp": s.timestamp.map(|t| t.to_string()),
                    })
                })
                .collect();
            json_response(&Value::from(list))
        }
        "PUT" | "POST" => {
            let options = PutOptions {
                encoding: request
                    .header("content-type")
                    .unwrap_or_default()
                    .to_string(),
                congestion_control: weft::CongestionControl::Block,
                ..PutOptions::default()
            };
            match session.put(&key, &request.body, &options) {
                Ok(()) => Response::text(200, ""),
                Err(e) => Response::text(400, &e.to_string()),
            }
        }
        "DELETE" => match session.delete(&key, &PutOptions::default()) {
            Ok(()) => Response::text(200, ""),
            Err(e) => Response::text(400, &e.to_string()),
        },
        _ => Response::text(405, "GET, PUT or DELETE"),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The status page.
fn page(session: &Session) -> String {
    let a = session.admin();
    let mut rows = String::new();
    for f in &a.faces {
        rows.push_str(&format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            f.zid,
            f.whatami,
            escape(&f.link),
            f.messages_in,
            f.bytes_in,
            f.batches_out,
            f.bytes_out,
            f.dropped
        ));
    }
    format!(
        "<!doctype html><html><head><meta charset=utf-8><meta http-equiv=refresh content=2>\
         <title>weftd {zid}</title><style>body{{font-family:sans-serif;margin:2em}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px}}</style></head>\
         <body><h1>weftd</h1><p>zid <code>{zid}</code>, listening on {locators}</p>\
         <h2>Sessions ({n})</h2><table><tr><th>zid</th><th>role</th><th>link</th><th>messages in</th>\
         <th>bytes in</th><th>batches out</th><th>bytes out</th><th>dropped</th></tr>{rows}</table>\
         <p>{subs} subscriber(s), {qs} queryable(s), {ts} token(s) of its own.</p></body></html>",
        zid = a.zid,
        locators = escape(&a.locators.join(", ")),
        n = a.faces.len(),
        subs = a.subscribers.len(),
        qs = a.queryables.len(),
        ts = a.tokens.len(),
    )
}
