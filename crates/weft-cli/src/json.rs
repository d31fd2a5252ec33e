//! Decoded messages as JSON objects: a `"type"` field with the message's name as the
//! specification writes it, then its fields; nested messages are nested objects.
//!
//! Fields at their default value are left out, so an object shows what the bytes say.

use serde_json::{json, Map, Value};
use weft_proto::core::{Encoding, NetworkQos, Timestamp, WireExpr};
use weft_proto::ext::{ExtBody, Extension};
use weft_proto::network::{
    linkstate, Declaration, Declare, Interest, InterestMode, InterestOptions, NetworkMessage,
    NetworkOam, Push, Request, Response, ResponseBody, ResponseFinal,
};
use weft_proto::scouting::ScoutingMessage;
use weft_proto::transport::{Fragment, FrameHeader, Init, Join, Open, TransportMessage};
use weft_proto::zenoh::{Consolidation, Del, Err, PushBody, Put, Query, Reply, SourceInfo};

/// How much of the bytes to show.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Largest payload shown whole; longer ones are cut (with `"truncated": true`).
    pub payload_limit: usize,
}

impl Default for Style {
    fn default() -> Self {
        Self { payload_limit: 256 }
    }
}

/// Lowercase hexadecimal of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn obj(kind: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), Value::from(kind));
    m
}

/// Bytes as text when they are UTF-8, else hex; cut at the style's limit.
fn bytes_fields(m: &mut Map<String, Value>, name: &str, bytes: &[u8], style: Style) {
    let shown = &bytes[..bytes.len().min(style.payload_limit)];
    // Cutting may split a UTF-8 sequence: judge validity on the whole value.
    match std::str::from_utf8(bytes) {
        Ok(_) => {
            let text = String::from_utf8_lossy(shown);
            m.insert(name.into(), Value::from(text.trim_end_matches('\u{fffd}')));
        }
        Err(_) => {
            m.insert(format!("{name}_hex"), Value::from(hex(shown)));
        }
    }
    if shown.len() < bytes.len() {
        m.insert(format!("{name}_len"), Value::from(bytes.len()));
        m.insert("truncated".into(), Value::from(true));
    }
}

fn text_or_hex(bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(s) => Value::from(s),
        Err(_) => json!({ "hex": hex(bytes) }),
    }
}

/// A timestamp: its time in UTC, the raw NTP64 value and the clock's id.
pub fn timestamp(ts: &Timestamp) -> Value {
    json!({
        "time": ts.utc().to_string(),
        "ntp64": ts.time,
        "id": ts.id.to_string(),
    })
}

fn wire_expr(we: &WireExpr<'_>) -> Value {
    let mut m = Map::new();
    m.insert("scope".into(), Value::from(we.scope));
    if !we.suffix.is_empty() {
        m.insert("suffix".into(), Value::from(we.suffix));
    }
    m.insert(
        "mapping".into(),
        Value::from(if we.mapping.is_sender() {
            "sender"
        } else {
            "receiver"
        }),
    );
    Value::Object(m)
}

fn encoding(e: &Encoding<'_>) -> Value {
    Value::from(e.to_string())
}

fn qos(q: NetworkQos) -> Value {
    let congestion = match q.congestion_control() {
        weft_proto::core::CongestionControl::Drop => "drop",
        weft_proto::core::CongestionControl::Block => "block",
        weft_proto::core::CongestionControl::BlockFirst => "block_first",
    };
    let mut m = Map::new();
    m.insert("priority".into(), Value::from(q.priority().as_str()));
    m.insert("congestion_control".into(), Value::from(congestion));
    if q.is_express() {
        m.insert("express".into(), Value::from(true));
    }
    Value::Object(m)
}

fn ext_body(b: &ExtBody<'_>) -> Value {
    match b {
        ExtBody::Unit => Value::Null,
        ExtBody::Z64(v) => Value::from(*v),
        ExtBody::ZBuf(bytes) => Value::from(hex(bytes)),
    }
}

fn unknown(m: &mut Map<String, Value>, exts: &[Extension<'_>]) {
    if exts.is_empty() {
        return;
    }
    let list: Vec<Value> = exts
        .iter()
        .map(|e| json!({ "id": format!("{:#04x}", e.id), "value": ext_body(&e.body) }))
        .collect();
    m.insert("unknown_extensions".into(), Value::from(list));
}

fn opt_bytes(m: &mut Map<String, Value>, name: &str, v: Option<&[u8]>) {
    if let Some(b) = v {
        m.insert(name.into(), Value::from(hex(b)));
    }
}

fn flag(m: &mut Map<String, Value>, name: &str, v: bool) {
    if v {
        m.insert(name.into(), Value::from(true));
    }
}

fn source_info(m: &mut Map<String, Value>, si: &Option<SourceInfo>) {
    if let Some(si) = si {
        m.insert(
            "source_info".into(),
            json!({ "zid": si.zid.to_string(), "eid": si.eid, "sn": si.sn }),
        );
    }
}

fn net_common(
    m: &mut Map<String, Value>,
    q: NetworkQos,
    ts: &Option<Timestamp>,
    node_id: u16,
    default_qos: NetworkQos,
) {
    if q != default_qos {
        m.insert("qos".into(), qos(q));
    }
    if let Some(ts) = ts {
        m.insert("timestamp".into(), timestamp(ts));
    }
    if node_id != 0 {
        m.insert("node_id".into(), Value::from(node_id));
    }
}

/// A Put.
pub fn put(p: &Put<'_>, style: Style) -> Value {
    let mut m = obj("Put");
    if let Some(ts) = &p.timestamp {
        m.insert("timestamp".into(), timestamp(ts));
    }
    if !p.encoding.is_default() {
        m.insert("encoding".into(), encoding(&p.encoding));
    }
    source_info(&mut m, &p.source_info);
    flag(&mut m, "shm", p.shm);
    if let Some(att) = p.attachment {
        m.insert("attachment".into(), text_or_hex(att));
    }
    unknown(&mut m, &p.unknown);
    bytes_fields(&mut m, "payload", p.payload, style);
    Value::Object(m)
}

/// A Del.
pub fn del(d: &Del<'_>) -> Value {
    let mut m = obj("Del");
    if let Some(ts) = &d.timestamp {
        m.insert("timestamp".into(), timestamp(ts));
    }
    source_info(&mut m, &d.source_info);
    if let Some(att) = d.attachment {
        m.insert("attachment".into(), text_or_hex(att));
    }
    unknown(&mut m, &d.unknown);
    Value::Object(m)
}

fn push_body(b: &PushBody<'_>, style: Style) -> Value {
    match b {
        PushBody::Put(p) => put(p, style),
        PushBody::Del(d) => del(d),
    }
}

fn consolidation(m: &mut Map<String, Value>, c: Consolidation) {
    if c != Consolidation::Auto {
        m.insert("consolidation".into(), Value::from(c.as_str()));
    }
}

/// A Query.
pub fn query(q: &Query<'_>, style: Style) -> Value {
    let mut m = obj("Query");
    consolidation(&mut m, q.consolidation);
    if !q.parameters.is_empty() {
        m.insert("parameters".into(), Value::from(q.parameters));
    }
    source_info(&mut m, &q.source_info);
    if let Some(body) = &q.body {
        let mut b = Map::new();
        if !body.encoding.is_default() {
            b.insert("encoding".into(), encoding(&body.encoding));
        }
        bytes_fields(&mut b, "payload", body.payload, style);
        m.insert("body".into(), Value::Object(b));
    }
    if let Some(att) = q.attachment {
        m.insert("attachment".into(), text_or_hex(att));
    }
    unknown(&mut m, &q.unknown);
    Value::Object(m)
}

fn reply(r: &Reply<'_>, style: Style) -> Value {
    let mut m = obj("Reply");
    consolidation(&mut m, r.consolidation);
    unknown(&mut m, &r.unknown);
    m.insert("body".into(), push_body(&r.body, style));
    Value::Object(m)
}

fn err(e: &Err<'_>, style: Style) -> Value {
    let mut m = obj("Err");
    if !e.encoding.is_default() {
        m.insert("encoding".into(), encoding(&e.encoding));
    }
    source_info(&mut m, &e.source_info);
    flag(&mut m, "shm", e.shm);
    unknown(&mut m, &e.unknown);
    bytes_fields(&mut m, "payload", e.payload, style);
    Value::Object(m)
}

fn push(p: &Push<'_>, style: Style) -> Value {
    let mut m = obj("Push");
    m.insert("key".into(), wire_expr(&p.wire_expr));
    net_common(&mut m, p.qos, &p.timestamp, p.node_id, NetworkQos::DEFAULT);
    if let Some(ts) = &p.ts_stack {
        m.insert("ts_stack".into(), Value::from(hex(ts.as_bytes())));
    }
    unknown(&mut m, &p.unknown);
    m.insert("body".into(), push_body(&p.body, style));
    Value::Object(m)
}

fn request(r: &Request<'_>, style: Style) -> Value {
    let mut m = obj("Request");
    m.insert("id".into(), Value::from(r.id));
    m.insert("key".into(), wire_expr(&r.wire_expr));
    net_common(&mut m, r.qos, &r.timestamp, r.node_id, NetworkQos::DEFAULT);
    if r.target != weft_proto::network::QueryTarget::BestMatching {
        m.insert("target".into(), Value::from(r.target.as_str()));
    }
    if let Some(b) = r.budget {
        m.insert("budget".into(), Value::from(b));
    }
    if let Some(t) = r.timeout_ms {
        m.insert("timeout_ms".into(), Value::from(t));
    }
    unknown(&mut m, &r.unknown);
    m.insert("body".into(), query(&r.query, style));
    Value::Object(m)
}

fn response(r: &Response<'_>, style: Style) -> Value {
    let mut m = obj("Response");
    m.insert("request_id".into(), Value::from(r.request_id));
    m.insert("key".into(), wire_expr(&r.wire_expr));
    net_common(&mut m, r.qos, &r.timestamp, 0, NetworkQos::DEFAULT);
    if let Some(id) = &r.responder {
        m.insert(
            "responder".into(),
            json!({ "zid": id.zid.to_string(), "eid": id.eid }),
        );
    }
    unknown(&mut m, &r.unknown);
    let body = match &r.body {
        ResponseBody::Reply(x) => reply(x, style),
        ResponseBody::Err(x) => err(x, style),
    };
    m.insert("body".into(), body);
    Value::Object(m)
}

fn response_final(r: &ResponseFinal<'_>) -> Value {
    let mut m = obj("ResponseFinal");
    m.insert("request_id".into(), Value::from(r.request_id));
    net_common(&mut m, r.qos, &r.timestamp, 0, NetworkQos::DEFAULT);
    unknown(&mut m, &r.unknown);
    Value::Object(m)
}

fn interest_options(o: InterestOptions) -> Value {
    let names = [
        (InterestOptions::KEYEXPRS, "keyexprs"),
        (InterestOptions::SUBSCRIBERS, "subscribers"),
        (InterestOptions::QUERYABLES, "queryables"),
        (InterestOptions::TOKENS, "tokens"),
        (InterestOptions::AGGREGATE, "aggregate"),
    ];
    Value::from(
        names
            .iter()
            .filter(|(bit, _)| o.contains(*bit))
            .map(|(_, n)| Value::from(*n))
            .collect::<Vec<_>>(),
    )
}

fn interest(i: &Interest<'_>) -> Value {
    let mut m = obj("Interest");
    m.insert("id".into(), Value::from(i.id));
    m.insert("mode".into(), Value::from(i.mode.as_str()));
    if i.mode != InterestMode::Final {
        m.insert("options".into(), interest_options(i.options));
    }
    if let Some(we) = &i.wire_expr {
        m.insert("key".into(), wire_expr(we));
    }
    net_common(&mut m, i.qos, &i.timestamp, i.node_id, NetworkQos::DEFAULT);
    unknown(&mut m, &i.unknown);
    Value::Object(m)
}

fn undeclared_key(m: &mut Map<String, Value>, we: &Option<WireExpr<'_>>) {
    if let Some(we) = we {
        m.insert("key".into(), wire_expr(we));
    }
}

/// One declaration.
pub fn declaration(d: &Declaration<'_>) -> Value {
    let mut m = obj(d.name());
    match d {
        Declaration::KeyExpr(x) => {
            m.insert("id".into(), Value::from(x.id));
            m.insert("key".into(), wire_expr(&x.wire_expr));
            unknown(&mut m, &x.unknown);
        }
        Declaration::UndeclareKeyExpr(x) => {
            m.insert("id".into(), Value::from(x.id));
            unknown(&mut m, &x.unknown);
        }
        Declaration::Subscriber(x) => {
            m.insert("id".into(), Value::from(x.id));
            m.insert("key".into(), wire_expr(&x.wire_expr));
            unknown(&mut m, &x.unknown);
        }
        Declaration::Queryable(x) => {
            m.insert("id".into(), Value::from(x.id));
            m.insert("key".into(), wire_expr(&x.wire_expr));
            flag(&mut m, "complete", x.info.complete);
            if x.info.distance != 0 {
                m.insert("distance".into(), Value::from(x.info.distance));
            }
            unknown(&mut m, &x.unknown);
        }
        Declaration::Token(x) => {
            m.insert("id".into(), Value::from(x.id));
            m.insert("key".into(), wire_expr(&x.wire_expr));
            unknown(&mut m, &x.unknown);
        }
        Declaration::UndeclareSubscriber(x) => {
            m.insert("id".into(), Value::from(x.id));
            undeclared_key(&mut m, &x.wire_expr);
            unknown(&mut m, &x.unknown);
        }
        Declaration::UndeclareQueryable(x) => {
            m.insert("id".into(), Value::from(x.id));
            undeclared_key(&mut m, &x.wire_expr);
            unknown(&mut m, &x.unknown);
        }
        Declaration::UndeclareToken(x) => {
            m.insert("id".into(), Value::from(x.id));
            undeclared_key(&mut m, &x.wire_expr);
            unknown(&mut m, &x.unknown);
        }
        Declaration::Final(x) => unknown(&mut m, &x.unknown),
    }
    Value::Object(m)
}

fn declare(d: &Declare<'_>) -> Value {
    let mut m = obj("Declare");
    if let Some(i) = d.interest_id {
        m.insert("interest_id".into(), Value::from(i));
    }
    net_common(&mut m, d.qos, &d.timestamp, d.node_id, NetworkQos::DEFAULT);
    unknown(&mut m, &d.unknown);
    m.insert("body".into(), declaration(&d.body));
    Value::Object(m)
}

fn oam(o: &NetworkOam<'_>) -> Value {
    let mut m = obj("OAM");
    m.insert("id".into(), Value::from(o.id));
    net_common(&mut m, o.qos, &o.timestamp, 0, NetworkQos::DEFAULT);
    unknown(&mut m, &o.unknown);
    match (o.id, &o.body) {
        (NetworkOam::LINK_STATE, ExtBody::ZBuf(body)) => match linkstate::decode_list(body) {
            Ok(list) => {
                let states: Vec<Value> = list.iter().map(link_state).collect();
                m.insert("link_states".into(), Value::from(states));
            }
            Err(e) => {
                m.insert("body".into(), ext_body(&o.body));
                m.insert("body_error".into(), Value::from(e.to_string()));
            }
        },
        _ => {
            m.insert("body".into(), ext_body(&o.body));
        }
    }
    Value::Object(m)
}

fn link_state(ls: &linkstate::LinkState<'_>) -> Value {
    let mut m = Map::new();
    m.insert("psid".into(), Value::from(ls.psid));
    m.insert("sn".into(), Value::from(ls.sn));
    if let Some(zid) = ls.zid {
        m.insert("zid".into(), Value::from(zid.to_string()));
    }
    if let Some(w) = ls.whatami {
        m.insert("whatami".into(), Value::from(w.as_str()));
    }
    if let Some(locs) = &ls.locators {
        m.insert("locators".into(), json!(locs));
    }
    m.insert("links".into(), json!(ls.links));
    if let Some(w) = &ls.weights {
        m.insert("weights".into(), json!(w));
    }
    flag(&mut m, "gateway", ls.gateway);
    Value::Object(m)
}

/// A network message.
pub fn network(n: &NetworkMessage<'_>, style: Style) -> Value {
    match n {
        NetworkMessage::Push(x) => push(x, style),
        NetworkMessage::Request(x) => request(x, style),
        NetworkMessage::Response(x) => response(x, style),
        NetworkMessage::ResponseFinal(x) => response_final(x),
        NetworkMessage::Interest(x) => interest(x),
        NetworkMessage::Declare(x) => declare(x),
        NetworkMessage::Oam(x) => oam(x),
    }
}

fn resolution(m: &mut Map<String, Value>, r: weft_proto::core::Resolution) {
    m.insert(
        "resolution".into(),
        json!({ "frame_sn": r.frame_sn().width(), "request_id": r.request_id().width() }),
    );
}

fn init(i: &Init<'_>) -> Value {
    let mut m = obj(if i.is_ack() { "InitAck" } else { "InitSyn" });
    m.insert("version".into(), Value::from(i.version));
    m.insert("whatami".into(), Value::from(i.whatami.as_str()));
    m.insert("zid".into(), Value::from(i.zid.to_string()));
    resolution(&mut m, i.resolution);
    m.insert("batch_size".into(), Value::from(i.batch_size));
    opt_bytes(&mut m, "cookie", i.cookie);
    flag(&mut m, "qos", i.qos);
    if let Some(link) = i.qos_link {
        let mut q = Map::new();
        q.insert("raw".into(), Value::from(link.0));
        if let Some((start, end)) = link.priorities() {
            q.insert("priorities".into(), json!([start.as_str(), end.as_str()]));
        }
        if let Some(rel) = link.reliability() {
            let name = if rel.is_reliable() {
                "reliable"
            } else {
                "best_effort"
            };
            q.insert("reliability".into(), Value::from(name));
        }
        m.insert("qos_link".into(), Value::Object(q));
    }
    opt_bytes(&mut m, "shm", i.shm);
    opt_bytes(&mut m, "auth", i.auth);
    opt_bytes(&mut m, "multilink", i.multilink);
    flag(&mut m, "low_latency", i.low_latency);
    flag(&mut m, "compression", i.compression);
    if let Some(p) = i.patch {
        m.insert("patch".into(), Value::from(p));
    }
    if let Some(r) = i.region_name {
        m.insert("region_name".into(), Value::from(r));
    }
    unknown(&mut m, &i.unknown);
    Value::Object(m)
}

fn open(o: &Open<'_>) -> Value {
    let mut m = obj(if o.is_syn() { "OpenSyn" } else { "OpenAck" });
    m.insert("lease_ms".into(), Value::from(o.lease_ms));
    m.insert("initial_sn".into(), Value::from(o.initial_sn));
    opt_bytes(&mut m, "cookie", o.cookie);
    flag(&mut m, "qos", o.qos);
    opt_bytes(&mut m, "shm", o.shm);
    opt_bytes(&mut m, "auth", o.auth);
    opt_bytes(&mut m, "multilink", o.multilink);
    flag(&mut m, "multilink_ack", o.multilink_ack);
    flag(&mut m, "low_latency", o.low_latency);
    flag(&mut m, "compression", o.compression);
    if let Some(v) = o.remote_bound {
        m.insert("remote_bound".into(), Value::from(v));
    }
    unknown(&mut m, &o.unknown);
    Value::Object(m)
}

fn join(j: &Join<'_>) -> Value {
    let mut m = obj("Join");
    m.insert("version".into(), Value::from(j.version));
    m.insert("whatami".into(), Value::from(j.whatami.as_str()));
    m.insert("zid".into(), Value::from(j.zid.to_string()));
    resolution(&mut m, j.resolution);
    m.insert("batch_size".into(), Value::from(j.batch_size));
    m.insert("lease_ms".into(), Value::from(j.lease_ms));
    m.insert(
        "next_sn".into(),
        json!({ "reliable": j.next_sn.reliable, "best_effort": j.next_sn.best_effort }),
    );
    if let Some(sns) = &j.qos {
        let list: Vec<Value> = sns
            .iter()
            .map(|s| json!({ "reliable": s.reliable, "best_effort": s.best_effort }))
            .collect();
        m.insert("qos".into(), Value::from(list));
    }
    opt_bytes(&mut m, "shm", j.shm);
    if let Some(p) = j.patch {
        m.insert("patch".into(), Value::from(p));
    }
    unknown(&mut m, &j.unknown);
    Value::Object(m)
}

/// The fields of a Frame header (its messages are added by the caller).
pub fn frame_header(h: &FrameHeader<'_>) -> Map<String, Value> {
    let mut m = obj("Frame");
    m.insert(
        "reliability".into(),
        Value::from(if h.reliability.is_reliable() {
            "reliable"
        } else {
            "best_effort"
        }),
    );
    m.insert("sn".into(), Value::from(h.sn));
    m.insert("priority".into(), Value::from(h.priority.as_str()));
    unknown(&mut m, &h.unknown);
    m
}

/// A Fragment (its payload is shown by length only).
pub fn fragment(f: &Fragment<'_>) -> Value {
    let h = &f.header;
    let mut m = obj("Fragment");
    m.insert(
        "reliability".into(),
        Value::from(if h.reliability.is_reliable() {
            "reliable"
        } else {
            "best_effort"
        }),
    );
    m.insert("sn".into(), Value::from(h.sn));
    m.insert("priority".into(), Value::from(h.priority.as_str()));
    m.insert("more".into(), Value::from(h.more));
    flag(&mut m, "first", h.first);
    flag(&mut m, "drop", h.drop);
    unknown(&mut m, &h.unknown);
    m.insert("payload_len".into(), Value::from(f.payload.len()));
    Value::Object(m)
}

/// A transport message (a Frame with its network messages nested in `"messages"`).
pub fn transport(t: &TransportMessage<'_>, style: Style) -> Value {
    match t {
        TransportMessage::Init(x) => init(x),
        TransportMessage::Open(x) => open(x),
        TransportMessage::Close(x) => {
            let mut m = obj("Close");
            m.insert("reason".into(), Value::from(x.reason.to_string()));
            flag(&mut m, "session", x.session);
            unknown(&mut m, &x.unknown);
            Value::Object(m)
        }
        TransportMessage::KeepAlive(x) => {
            let mut m = obj("KeepAlive");
            unknown(&mut m, &x.unknown);
            Value::Object(m)
        }
        TransportMessage::Frame(f) => {
            let mut m = frame_header(&f.header);
            let msgs: Vec<Value> = f.messages.iter().map(|n| network(n, style)).collect();
            m.insert("messages".into(), Value::from(msgs));
            Value::Object(m)
        }
        TransportMessage::Fragment(x) => fragment(x),
        TransportMessage::Join(x) => join(x),
        TransportMessage::Oam(x) => {
            let mut m = obj("OAM");
            m.insert("id".into(), Value::from(x.id));
            m.insert("priority".into(), Value::from(x.priority.as_str()));
            unknown(&mut m, &x.unknown);
            m.insert("body".into(), ext_body(&x.body));
            Value::Object(m)
        }
    }
}

/// A scouting message.
pub fn scouting(s: &ScoutingMessage<'_>) -> Value {
    match s {
        ScoutingMessage::Scout(x) => {
            let mut m = obj("Scout");
            m.insert("version".into(), Value::from(x.version));
            let roles: Vec<Value> = x.what.roles().map(|r| Value::from(r.as_str())).collect();
            m.insert("what".into(), Value::from(roles));
            if let Some(zid) = x.zid {
                m.insert("zid".into(), Value::from(zid.to_string()));
            }
            unknown(&mut m, &x.unknown);
            Value::Object(m)
        }
        ScoutingMessage::Hello(x) => {
            let mut m = obj("Hello");
            m.insert("version".into(), Value::from(x.version));
            m.insert("whatami".into(), Value::from(x.whatami.as_str()));
            m.insert("zid".into(), Value::from(x.zid.to_string()));
            let locs: Vec<Value> = x.locators.iter().map(|l| Value::from(*l)).collect();
            m.insert("locators".into(), Value::from(locs));
            unknown(&mut m, &x.unknown);
            Value::Object(m)
        }
    }
}
