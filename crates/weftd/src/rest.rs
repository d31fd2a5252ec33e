//! The REST interface, with the paths, methods and answers of Zenoh's REST plugin:
//!
//! - `GET` or `POST /KEYEXPR[?parameters]` queries the key expression (a `POST`'s body is
//!   the query's payload, its Content-Type the payload's encoding) and answers the replies
//!   as JSON, as HTML (`Accept: text/html`), or the first reply's bytes alone (`_raw` among
//!   the parameters);
//! - the same with `Accept: text/event-stream` subscribes: the samples arrive as
//!   Server-Sent Events until the client goes;
//! - `PUT` or `PATCH /KEY` publishes the body (its Content-Type is the encoding), `DELETE
//!   /KEY` deletes;
//! - `@/local/...` is the router's own admin space, `@/<zid>/...`.
//!
//! `GET /` is weftd's status page, and `GET /@/status.json` the snapshot it polls (module
//! `status`; the plugin has nothing there).
//!
//! A query's replies are answered within bounded memory (module `replies`): all at once
//! while they fit in 8 MiB, streamed beyond.

mod replies;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};
use weft::{
    Consolidation, GetOptions, PutOptions, Reply, Sample, SampleKind, Session, SessionError,
    Timestamp,
};

use crate::http::{CommonHeaders, Limits, Request, Response};

/// Headers on every response, as the plugin's CORS layer sends them: any web page may
/// read the answers, and caches know that a preflight's answer depends on what it asked.
const COMMON_HEADERS: CommonHeaders = &[
    ("Access-Control-Allow-Origin", "*"),
    (
        "Vary",
        "origin, access-control-request-method, access-control-request-headers",
    ),
];

/// The methods served on a key expression, as a CORS preflight is answered.
const CORS_METHODS: &str = "GET,POST,PUT,PATCH,DELETE";

/// Samples waiting for one Server-Sent Events client, at most; beyond, new samples are
/// dropped (and counted) rather than held.
const SSE_QUEUE: usize = 256;

/// Payload bytes waiting for one Server-Sent Events client, at most (one sample is
/// always taken when none waits, whatever its size).
const SSE_QUEUE_BYTES: usize = 16 << 20;

/// Serves REST on `address` until the process ends, within the default [`Limits`]:
/// request line 8 KiB, headers 64 KiB, body 64 MiB (413 beyond, nothing stored), 10 s
/// idle, 64 connections at once, served by one thread with the handlers on a bounded
/// pool (module `http`). Every interface (`[::]`) falls back to every IPv4 interface
/// where IPv6 is off.
pub(crate) fn serve(
    session: Session,
    address: SocketAddr,
    plugins: crate::metrics::PluginMetrics,
) -> Result<(), String> {
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
    // The status page's clock starts with the server.
    crate::status::uptime_ms();
    let handler: crate::http::Handler = Arc::new(move |r: &Request| handle(&session, &plugins, r));
    crate::http::serve(listener, Limits::default(), handler, COMMON_HEADERS)
        .map_err(|e| e.to_string())
}

/// Why a request is refused before it reaches the session.
#[derive(Debug)]
enum RestError {
    /// The path is not UTF-8 once percent-decoded (400).
    PathNotUtf8,
    /// The path is not a key expression (400).
    KeyExpr(weft_keyexpr::KeyExprError),
    /// The session refused the operation: 400 for a key it cannot take, 500 otherwise.
    Session(SessionError),
}

impl fmt::Display for RestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PathNotUtf8 => f.write_str("the path is not UTF-8 once percent-decoded"),
            Self::KeyExpr(e) => write!(f, "{e}"),
            Self::Session(e) => write!(f, "{e}"),
        }
    }
}

impl RestError {
    fn response(&self) -> Response {
        let status = match self {
            Self::PathNotUtf8 | Self::KeyExpr(_) => 400,
            Self::Session(SessionError::KeyExpr(_) | SessionError::Wildcard(_)) => 400,
            Self::Session(_) => 500,
        };
        Response::text(status, &self.to_string())
    }
}

/// What a query is answered with, from the request's `Accept` header and parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accept {
    /// A subscription, as Server-Sent Events.
    EventStream,
    /// The first reply's bytes.
    Raw,
    /// An HTML definition list.
    Html,
    /// A JSON array.
    Json,
}

/// As the plugin decides: only the first media type of `Accept` counts (its parameters
/// left out, compared exactly); an event stream goes before `_raw`, which goes before HTML.
fn accept(header: Option<&str>, parameters: &str) -> Accept {
    let first = header.and_then(|h| h.split(',').next()?.split(';').next());
    match first {
        Some("text/event-stream") => Accept::EventStream,
        _ if has_parameter(parameters, "_raw") => Accept::Raw,
        Some("text/html") => Accept::Html,
        _ => Accept::Json,
    }
}

/// Whether the selector parameters (`a=1&b&c=2`, not percent-decoded, as Zenoh reads
/// them) name `key`, with any value or none.
fn has_parameter(parameters: &str, key: &str) -> bool {
    parameters
        .split('&')
        .any(|p| p.split_once('=').map_or(p, |(k, _)| k) == key)
}

/// The key expression a path names: percent-decoded, `@/local` (alone or followed by `/`)
/// standing for `@/<zid>`.
fn path_key(path: &str, zid: &str) -> Result<String, RestError> {
    // A `%` not followed by two hexadecimal digits stays as is.
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| RestError::PathNotUtf8)?
        .into_owned();
    Ok(match decoded.strip_prefix("@/local") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("@/{zid}{rest}"),
        _ => decoded,
    })
}

/// The JSON of one value, as the plugin shows it: `null` when empty; parsed for
/// `application/json`, `text/json` and `text/json5` (base64 when it does not parse); a
/// string for `text/plain` and `zenoh/string` (base64 when not UTF-8); base64 for any
/// other encoding. Encodings compare whole: with a schema (`text/plain;charset=utf-8`),
/// the value is base64, as in the plugin.
fn value_json(payload: &[u8], encoding: &str) -> Value {
    if payload.is_empty() {
        return Value::Null;
    }
    match encoding {
        "application/json" | "text/json" | "text/json5" => serde_json::from_slice(payload)
            .unwrap_or_else(|_| Value::String(STANDARD.encode(payload))),
        "text/plain" | "zenoh/string" => match std::str::from_utf8(payload) {
            Ok(text) => Value::String(text.to_owned()),
            Err(_) => Value::String(STANDARD.encode(payload)),
        },
        _ => Value::String(STANDARD.encode(payload)),
    }
}

/// A timestamp as Zenoh writes it: the 64-bit time in decimal, `/`, the clock's id.
fn timestamp_text(t: &Timestamp) -> String {
    format!("{}/{}", t.time, t.id)
}

/// One sample as JSON: `{"key", "value", "encoding", "timestamp"}`.
fn sample_json(key: &str, payload: &[u8], encoding: &str, timestamp: Option<String>) -> Value {
    json!({
        "key": key,
        "value": value_json(payload, encoding),
        "encoding": encoding,
        "timestamp": timestamp,
    })
}

/// One reply as JSON; an error is keyed `ERROR`, with no timestamp.
fn reply_json(reply: &Reply) -> Value {
    match &reply.result {
        Ok(s) => sample_json(
            &s.key_expr,
            &s.payload,
            &s.encoding,
            s.timestamp.as_ref().map(timestamp_text),
        ),
        Err(e) => sample_json("ERROR", &e.payload, &e.encoding, None),
    }
}

/// One sample as a Server-Sent Event: `event: PUT|DELETE`, its JSON as `data`.
fn sse_event(sample: &Sample) -> String {
    let kind = match sample.kind {
        SampleKind::Put => "PUT",
        SampleKind::Delete => "DELETE",
    };
    let data = sample_json(
        &sample.key_expr,
        &sample.payload,
        &sample.encoding,
        sample.timestamp.as_ref().map(timestamp_text),
    );
    // JSON text has no line break: one `data` line holds it.
    format!("event: {kind}\ndata: {data}\n\n")
}

/// The headers of a raw answer in `encoding`: a `;content-encoding=X` part of it becomes
/// a Content-Encoding header; the rest is the Content-Type when it reads as a media type
/// (`application/octet-stream` otherwise).
fn raw_headers(encoding: &str) -> Vec<(&'static str, String)> {
    let mut headers = Vec::new();
    let mut content_type = encoding.to_owned();
    if let Some(part) = encoding
        .split(';')
        .find(|p| p.trim_start().starts_with("content-encoding="))
    {
        if let Some((_, coding)) = part.split_once('=') {
            headers.push(("Content-Encoding", coding.trim().to_owned()));
        }
        content_type = content_type.replacen(&format!(";{part}"), "", 1);
    }
    let content_type = if is_media_type(&content_type) {
        content_type
    } else {
        "application/octet-stream".to_owned()
    };
    headers.insert(0, ("Content-Type", content_type));
    headers
}

/// Whether `text` is `type/subtype` followed by `;name=value` parameters, as HTTP takes a
/// Content-Type.
fn is_media_type(text: &str) -> bool {
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    let mut parts = text.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    let Some((kind, subtype)) = essence.split_once('/') else {
        return false;
    };
    token(kind)
        && token(subtype)
        && parts.all(|p| {
            p.trim().split_once('=').is_some_and(|(n, v)| {
                token(n) && !v.is_empty() && v.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
            })
        })
}

/// One reply as an entry of the plugin's HTML, a definition list of keys (`ERROR` for an
/// error) and payloads as text. Unlike the plugin, weft escapes `&`, `<` and `>`: a
/// payload is shown, never run as markup by the browser reading it.
fn html_item(reply: &Reply) -> String {
    let (key, payload) = match &reply.result {
        Ok(s) => (&*s.key_expr, &s.payload[..]),
        Err(e) => ("ERROR", &e.payload[..]),
    };
    format!(
        "<dt>{}</dt>\n<dd>{}</dd>\n",
        escape(key),
        escape(&String::from_utf8_lossy(payload))
    )
}

fn handle(
    session: &Session,
    plugins: &crate::metrics::PluginMetrics,
    request: &Request,
) -> Response {
    let target = origin_form(&request.target);
    let target = target.strip_prefix('/').unwrap_or(target);
    let (path, parameters) = target.split_once('?').unwrap_or((target, ""));
    let method = request.method.as_str();
    if method == "OPTIONS" {
        return options(request);
    }
    if path.is_empty() {
        return match method {
            "GET" | "HEAD" => Response::new(200, "text/html; charset=utf-8", crate::status::PAGE),
            _ => Response::empty(404),
        };
    }
    if path == "@/status.json" && matches!(method, "GET" | "HEAD") {
        // The status page's snapshot (no ZenohID is `status.json`: no admin key is hidden).
        let snapshot = crate::status::snapshot(
            &session.admin(),
            &plugins.storages,
            crate::status::uptime_ms(),
        );
        return Response::new(200, "application/json", snapshot.to_string())
            .with_header("Cache-Control", "no-store");
    }
    if path == "metrics" && matches!(method, "GET" | "HEAD") {
        // For Prometheus: the admin space's metrics, plain. (A key `metrics` at the top
        // level is not queried through REST.)
        let text =
            crate::metrics::metrics_text(&session.admin(), session.query_stats(), plugins, true);
        return Response::new(200, crate::metrics::METRICS_ENCODING, text);
    }
    if !matches!(method, "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE") {
        return Response::empty(405).with_header("Allow", "GET,HEAD,POST,PUT,PATCH,DELETE");
    }
    let key = match key_expr(session, path) {
        Ok(k) => k,
        Err(e) => return e.response(),
    };
    let encoding = request.header("content-type").unwrap_or_default();
    match method {
        "PUT" | "PATCH" => {
            let options = PutOptions {
                encoding: encoding.to_owned(),
                congestion_control: weft::CongestionControl::Block,
                ..PutOptions::default()
            };
            published(session.put(&key, &request.body, &options))
        }
        "DELETE" => published(session.delete(&key, &PutOptions::default())),
        _ => match accept(request.header("accept"), parameters) {
            Accept::EventStream => subscribe(session, &key),
            how => query(session, how, &key, parameters, encoding, &request.body),
        },
    }
}

/// The path and query of a request target: an absolute-form target
/// (`http://host:port/demo/a`, as sent to a proxy) loses its scheme and authority.
fn origin_form(target: &str) -> &str {
    let Some(rest) = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("https://"))
    else {
        return target;
    };
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// The key expression of `path`, checked.
fn key_expr(session: &Session, path: &str) -> Result<String, RestError> {
    let key = path_key(path, &session.zid().to_string())?;
    weft_keyexpr::KeyExpr::new(&key).map_err(RestError::KeyExpr)?;
    Ok(key)
}

/// A put's or delete's answer: 200 with an empty body.
fn published(result: Result<(), SessionError>) -> Response {
    match result {
        Ok(()) => Response::empty(200),
        Err(e) => RestError::Session(e).response(),
    }
}

/// `OPTIONS`, on any path, is a CORS preflight, as the plugin's CORS layer takes it: 200,
/// every method served allowed, and (unlike the plugin, which allows none) the request
/// headers it asks for.
fn options(request: &Request) -> Response {
    let mut response =
        Response::empty(200).with_header("Access-Control-Allow-Methods", CORS_METHODS);
    if let Some(asked) = request.header("access-control-request-headers") {
        response = response.with_header("Access-Control-Allow-Headers", asked);
    }
    response
}

/// A get on `key` with `parameters`, answered `how`.
fn query(
    session: &Session,
    how: Accept,
    key: &str,
    parameters: &str,
    encoding: &str,
    body: &[u8],
) -> Response {
    // Replies for a time range are all kept, as the plugin asks; else the latest per
    // key. The consolidation is done here (module `replies`), within bounded memory: the
    // session passes every reply on as it comes.
    let latest = !has_parameter(parameters, "_time");
    let options = GetOptions {
        consolidation: Consolidation::None,
        payload: (!body.is_empty()).then(|| (body.to_vec(), encoding.to_owned())),
        ..GetOptions::default()
    };
    let selector: Cow<'_, str> = if parameters.is_empty() {
        key.into()
    } else {
        format!("{key}?{parameters}").into()
    };
    // The session's queries_default_timeout bounds the wait.
    let replies = match session.get_paced(&selector, &options, replies::PACED_BYTES) {
        Ok(r) => r,
        Err(e) => return RestError::Session(e).response(),
    };
    let consolidator = replies::Consolidator::new(latest);
    match how {
        Accept::Raw => match first_reply(replies, consolidator) {
            Some(reply) => {
                let (payload, encoding) = match reply.result {
                    Ok(s) => (s.payload.to_vec(), s.encoding.into_owned()),
                    Err(e) => (e.payload, e.encoding),
                };
                let mut response = Response::empty(200);
                for (name, value) in raw_headers(&encoding) {
                    response = response.with_header(name, &value);
                }
                response.body = crate::http::Body::Full(payload);
                response
            }
            None => Response::empty(200),
        },
        Accept::Html => replies::answer(replies, consolidator, replies::Form::Html),
        _ => replies::answer(replies, consolidator, replies::Form::Json),
    }
}

/// The first reply of a query once consolidated, if any (the query is then given up).
fn first_reply(
    replies: weft::PacedReplies,
    mut consolidator: replies::Consolidator,
) -> Option<Reply> {
    let mut out = Vec::new();
    while out.is_empty() {
        match replies.recv() {
            Ok(reply) => consolidator.take(reply, &mut out),
            Err(_) => {
                consolidator.finish(&mut out);
                break;
            }
        }
    }
    out.into_iter().next()
}

/// The samples waiting for one Server-Sent Events client: at most [`SSE_QUEUE`] samples
/// and [`SSE_QUEUE_BYTES`] payload bytes; what comes beyond is dropped and counted, so a
/// client that reads slowly never makes weftd hold more, nor delays the router.
#[derive(Default)]
struct EventQueue {
    waiting: Mutex<Waiting>,
    dropped: AtomicU64,
}

/// The samples queued, their payload bytes, and the stream to wake for the next one.
#[derive(Default)]
struct Waiting {
    samples: VecDeque<Sample>,
    bytes: usize,
    reader: Option<Waker>,
}

impl EventQueue {
    /// Queues `sample`, or drops it when the queue is full. Never waits.
    fn push(&self, sample: &Sample) {
        let Ok(mut waiting) = self.waiting.lock() else {
            return;
        };
        let size = sample.payload.len();
        let fits = waiting.samples.is_empty()
            || (waiting.samples.len() < SSE_QUEUE && waiting.bytes + size <= SSE_QUEUE_BYTES);
        if !fits {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        waiting.samples.push_back(sample.clone());
        waiting.bytes += size;
        let reader = waiting.reader.take();
        drop(waiting);
        if let Some(reader) = reader {
            reader.wake();
        }
    }

    /// The next sample; when none waits, `cx` is woken when one comes.
    fn poll_pop(&self, cx: &mut Context<'_>) -> Poll<Sample> {
        let Ok(mut waiting) = self.waiting.lock() else {
            return Poll::Pending;
        };
        match waiting.samples.pop_front() {
            Some(sample) => {
                waiting.bytes -= sample.payload.len();
                Poll::Ready(sample)
            }
            None => {
                waiting.reader = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// A subscription's samples as Server-Sent Events, for as long as its client stays (the
/// subscriber goes with it).
struct Events {
    queue: Arc<EventQueue>,
    subscriber: Option<weft::Subscriber>,
    key: String,
}

impl crate::http::Stream for Events {
    fn poll_part(&mut self, cx: &mut Context<'_>) -> Poll<Option<Vec<u8>>> {
        self.queue
            .poll_pop(cx)
            .map(|sample| Some(sse_event(&sample).into_bytes()))
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        let dropped = self.queue.dropped.load(Ordering::Relaxed);
        if dropped > 0 {
            tracing::warn!(
                "REST: {dropped} sample(s) on {} dropped for an event-stream client that did \
                 not keep up",
                weft::printable(&self.key)
            );
        }
        // Undeclaring talks to the session: not on the HTTP thread.
        if let (Some(subscriber), Ok(runtime)) = (
            self.subscriber.take(),
            tokio::runtime::Handle::try_current(),
        ) {
            runtime.spawn_blocking(move || drop(subscriber));
        }
    }
}

/// A subscription on `key`, answered as Server-Sent Events.
fn subscribe(session: &Session, key: &str) -> Response {
    let queue = Arc::new(EventQueue::default());
    let pushed = queue.clone();
    let subscriber = match session.declare_subscriber(key, move |s| pushed.push(s)) {
        Ok(s) => s,
        Err(e) => return RestError::Session(e).response(),
    };
    let events = Events {
        queue,
        subscriber: Some(subscriber),
        key: key.to_owned(),
    };
    Response::stream(200, "text/event-stream", Box::new(events))
        .with_header("Cache-Control", "no-cache")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_render_per_encoding_as_the_plugin_does() {
        assert_eq!(value_json(b"", "application/json"), Value::Null);
        assert_eq!(value_json(b"", "zenoh/bytes"), Value::Null);
        assert_eq!(
            value_json(br#"{"a": [1, 2]}"#, "application/json"),
            json!({ "a": [1, 2] })
        );
        assert_eq!(value_json(b"3.5", "text/json"), json!(3.5));
        assert_eq!(value_json(b"\"s\"", "text/json5"), json!("s"));
        // Not JSON after all: base64.
        assert_eq!(value_json(b"{oops", "application/json"), json!("e29vcHM="));
        assert_eq!(value_json(b"hello", "text/plain"), json!("hello"));
        assert_eq!(value_json(b"hello", "zenoh/string"), json!("hello"));
        assert_eq!(value_json(&[0xff, 0xfe], "text/plain"), json!("//4="));
        // Everything else, and an encoding with a schema, is base64.
        assert_eq!(value_json(b"hello", "zenoh/bytes"), json!("aGVsbG8="));
        assert_eq!(
            value_json(b"hello", "application/octet-stream"),
            json!("aGVsbG8=")
        );
        assert_eq!(
            value_json(b"hello", "text/plain;charset=utf-8"),
            json!("aGVsbG8=")
        );
    }

    #[test]
    fn samples_are_json_objects_in_the_plugins_field_order() {
        let v = sample_json("a/b", b"x", "text/plain", Some("1/2".into()));
        assert_eq!(
            v.to_string(),
            r#"{"key":"a/b","value":"x","encoding":"text/plain","timestamp":"1/2"}"#
        );
        let t = Timestamp {
            time: 7_386_690_599_959_157_260,
            id: "33".parse().unwrap(),
        };
        assert_eq!(timestamp_text(&t), "7386690599959157260/33");
    }

    #[test]
    fn only_the_first_accept_item_counts() {
        let a = |h: Option<&str>, p: &str| accept(h, p);
        assert_eq!(a(Some("text/event-stream"), ""), Accept::EventStream);
        assert_eq!(a(Some("text/event-stream"), "_raw"), Accept::EventStream);
        assert_eq!(
            a(Some("text/event-stream;q=1, text/html"), ""),
            Accept::EventStream
        );
        assert_eq!(a(Some("text/html, text/event-stream"), ""), Accept::Html);
        assert_eq!(a(Some("text/html; charset=utf-8"), ""), Accept::Html);
        assert_eq!(a(Some("text/html"), "x=1&_raw=true"), Accept::Raw);
        assert_eq!(a(None, "_raw"), Accept::Raw);
        assert_eq!(a(None, "_raw=false"), Accept::Raw);
        assert_eq!(a(None, "_rawness=1"), Accept::Json);
        assert_eq!(a(Some("application/json"), ""), Accept::Json);
        assert_eq!(a(Some("*/*"), ""), Accept::Json);
        assert_eq!(a(None, ""), Accept::Json);
        // Compared exactly, as the plugin does.
        assert_eq!(a(Some(" text/html"), ""), Accept::Json);
    }

    #[test]
    fn events_are_framed_as_server_sent_events() {
        let sample = Sample {
            key_expr: "demo/a".into(),
            kind: SampleKind::Put,
            payload: b"hi".to_vec().into(),
            encoding: "text/plain".into(),
            timestamp: None,
            attachment: None,
            priority: weft::Priority::default(),
            congestion_control: weft::CongestionControl::default(),
            express: false,
            source_info: None,
        };
        assert_eq!(
            sse_event(&sample),
            "event: PUT\ndata: {\"key\":\"demo/a\",\"value\":\"hi\",\"encoding\":\"text/plain\",\"timestamp\":null}\n\n"
        );
        let deleted = Sample {
            kind: SampleKind::Delete,
            payload: Vec::new().into(),
            encoding: "zenoh/bytes".into(),
            ..sample
        };
        assert_eq!(
            sse_event(&deleted),
            "event: DELETE\ndata: {\"key\":\"demo/a\",\"value\":null,\"encoding\":\"zenoh/bytes\",\"timestamp\":null}\n\n"
        );
    }

    #[test]
    fn at_local_is_the_routers_own_id() {
        let k = |p: &str| path_key(p, "a1b2").unwrap();
        assert_eq!(k("@/local"), "@/a1b2");
        assert_eq!(k("@/local/router"), "@/a1b2/router");
        assert_eq!(k("@/local/**"), "@/a1b2/**");
        assert_eq!(k("@/localhost/x"), "@/localhost/x");
        assert_eq!(k("demo/@/local"), "demo/@/local");
        assert_eq!(k("%40/local/router"), "@/a1b2/router");
        assert_eq!(k("demo/a%20b"), "demo/a b");
        assert_eq!(k("demo/100%"), "demo/100%");
        assert!(matches!(
            path_key("demo/%ff", "a1b2"),
            Err(RestError::PathNotUtf8)
        ));
    }

    #[test]
    fn raw_answers_take_their_encoding_as_content_type() {
        let h = |e: &str| raw_headers(e);
        assert_eq!(
            h("text/plain"),
            [("Content-Type", "text/plain".to_string())]
        );
        assert_eq!(
            h("text/plain;charset=utf-8"),
            [("Content-Type", "text/plain;charset=utf-8".to_string())]
        );
        assert_eq!(
            h("application/openmetrics-text; version=1.0.0; charset=utf-8;content-encoding=gzip"),
            [
                (
                    "Content-Type",
                    "application/openmetrics-text; version=1.0.0; charset=utf-8".to_string()
                ),
                ("Content-Encoding", "gzip".to_string())
            ]
        );
        // Not a media type: the default of bytes.
        assert_eq!(
            h("my_encoding"),
            [("Content-Type", "application/octet-stream".to_string())]
        );
        assert_eq!(
            h("a/b\r\nX-Injected: 1"),
            [("Content-Type", "application/octet-stream".to_string())]
        );
    }

    #[test]
    fn html_lists_keys_and_payloads_escaped() {
        let ok = |key: &str, payload: &[u8]| Reply {
            result: Ok(Sample {
                key_expr: key.into(),
                kind: SampleKind::Put,
                payload: payload.to_vec().into(),
                encoding: "zenoh/bytes".into(),
                timestamp: None,
                attachment: None,
                priority: weft::Priority::default(),
                congestion_control: weft::CongestionControl::default(),
                express: false,
                source_info: None,
            }),
            replier_id: None,
        };
        let err = Reply {
            result: Err(weft::ReplyError {
                payload: b"no".to_vec(),
                encoding: "text/plain".into(),
            }),
            replier_id: None,
        };
        let html = |replies: &[Reply]| replies.iter().map(html_item).collect::<String>();
        assert_eq!(
            html(&[ok("test/query", b"reply"), ok("a/b", b"<b>&"), err]),
            "<dt>test/query</dt>\n<dd>reply</dd>\n<dt>a/b</dt>\n<dd>&lt;b&gt;&amp;</dd>\n<dt>ERROR</dt>\n<dd>no</dd>\n"
        );
    }

    fn sample(payload: usize) -> Sample {
        Sample {
            key_expr: "q/a".into(),
            kind: SampleKind::Put,
            payload: vec![0u8; payload].into(),
            encoding: "zenoh/bytes".into(),
            timestamp: None,
            attachment: None,
            priority: weft::Priority::default(),
            congestion_control: weft::CongestionControl::default(),
            express: false,
            source_info: None,
        }
    }

    #[test]
    fn an_event_queue_holds_a_bounded_count_and_size_and_counts_the_rest() {
        let q = EventQueue::default();
        let mut cx = Context::from_waker(Waker::noop());
        let mut pop = || match q.poll_pop(&mut cx) {
            Poll::Ready(sample) => Some(sample),
            Poll::Pending => None,
        };
        for _ in 0..SSE_QUEUE + 10 {
            q.push(&sample(1));
        }
        assert_eq!(q.dropped.load(Ordering::Relaxed), 10);
        for _ in 0..SSE_QUEUE {
            assert!(pop().is_some());
        }
        assert!(pop().is_none());
        // One sample over the byte bound is taken when nothing waits, not a second.
        q.push(&sample(SSE_QUEUE_BYTES + 1));
        q.push(&sample(1));
        assert_eq!(q.dropped.load(Ordering::Relaxed), 11);
        assert_eq!(pop().unwrap().payload.len(), SSE_QUEUE_BYTES + 1);
        q.push(&sample(SSE_QUEUE_BYTES / 2));
        q.push(&sample(SSE_QUEUE_BYTES / 2));
        q.push(&sample(1));
        assert_eq!(q.dropped.load(Ordering::Relaxed), 12);
    }

    #[test]
    fn a_waiting_event_stream_is_woken_by_the_next_sample() {
        struct Flag(std::sync::atomic::AtomicBool);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let flag = Arc::new(Flag(false.into()));
        let waker = Waker::from(flag.clone());
        let q = EventQueue::default();
        assert!(q.poll_pop(&mut Context::from_waker(&waker)).is_pending());
        q.push(&sample(3));
        assert!(flag.0.load(Ordering::SeqCst));
        assert!(q.poll_pop(&mut Context::from_waker(&waker)).is_ready());
    }

    #[test]
    fn absolute_targets_lose_their_scheme_and_authority() {
        assert_eq!(origin_form("/demo/a?x"), "/demo/a?x");
        assert_eq!(origin_form("http://h:8000/demo/a?x"), "/demo/a?x");
        assert_eq!(origin_form("https://h"), "/");
        assert_eq!(origin_form("*"), "*");
    }

    #[test]
    fn parameters_are_found_by_key() {
        assert!(has_parameter("_time=[..]", "_time"));
        assert!(has_parameter("a=1&_time", "_time"));
        assert!(!has_parameter("a=_time", "_time"));
        assert!(!has_parameter("", "_time"));
    }
}
