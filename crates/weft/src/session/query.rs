//! Queries in both directions: `get` (requests sent, replies gathered and consolidated,
//! ended by every target's ResponseFinal or the timeout) and queryables (requests
//! received, answered, and ended with exactly one ResponseFinal each).

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Weak};

use weft_keyexpr::{KeyExpr, OwnedKeyExpr};
use weft_proto::core::{
    CongestionControl, Encoding, NetworkQos, Priority, Reliability, WhatAmI, WireExpr, ZenohId,
};
use weft_proto::network::{
    EntityGlobalId, NetworkMessage, Request, Response, ResponseBody, ResponseFinal,
};
use weft_proto::zenoh::{
    Consolidation, Del, Err, PushBody, Put, Query as WireQuery, QueryBody, Reply as WireReply,
};

use super::entity::EntityKind;
use super::face_transport::FaceTransport;
use super::outbound::parse_encoding;
use super::{Inner, SessionError};
use crate::api::{
    GetOptions, Payload, PutOptions, Query, Reply, ReplyError, ReplyKeyExpr, Sample, SampleKind,
};
use crate::transport::Caller;
use crate::transport::DiscardReason;

/// What a queryable answers.
pub(crate) enum Answer<'a> {
    /// A value on the reply's key.
    Value(&'a [u8], &'a PutOptions),
    /// A value on a key expression that may hold wildcards (what matches it, as an admin
    /// space describes a declaration on `a/**`).
    ValueOnKeyExpr(&'a [u8], &'a PutOptions),
    /// The reply's key was deleted.
    Delete,
    /// An error: payload and encoding.
    Error(&'a [u8], &'a str),
}

/// A queryable's callback.
pub(crate) type QueryCallback = Arc<dyn Fn(Query) + Send + Sync>;

/// Replies one `get` (or liveliness get) delivers at most. The channel holds every reply
/// up to this limit (the I/O thread that receives them never waits for the application);
/// beyond it, replies are counted and the last reply is an error saying how many were
/// dropped.
const MAX_REPLIES_PER_GET: usize = 1 << 20;

/// Where a get's replies go: all of them up to `MAX_REPLIES_PER_GET`, the rest counted.
/// Dropped when the get is over: the channel closes, after an error reply saying how
/// many were dropped if any were.
pub(crate) struct ReplySink {
    sink: Sender<Reply>,
    /// The reader's pace, for a paced get.
    pace: Option<Arc<super::reply_pace::Pace>>,
    /// Replies handed to the channel so far.
    delivered: usize,
    /// Replies dropped beyond `MAX_REPLIES_PER_GET`.
    over_limit: u64,
}

/// The selector parameter saying a query accepts replies on any key (Zenoh's).
pub(crate) const ANY_KEY: &str = "_anyke";

/// Whether selector `parameters` (`a=1;b;c=2`) hold [`ANY_KEY`].
pub(crate) fn accepts_any_key(parameters: &str) -> bool {
    has_parameter(parameters, ANY_KEY)
}

impl ReplySink {
    /// A sink, and the channel the application reads (at its `pace`, if given).
    pub(crate) fn new(pace: Option<Arc<super::reply_pace::Pace>>) -> (Self, Receiver<Reply>) {
        let (sink, replies) = channel();
        let sink = Self {
            sink,
            pace,
            delivered: 0,
            over_limit: 0,
        };
        (sink, replies)
    }

    /// Hands a reply to the application, or counts it beyond the limit; past the pace's
    /// bound, the link it came on (`caller`'s) waits for the reader.
    pub(crate) fn deliver(&mut self, reply: Reply, caller: &Caller) {
        if self.delivered < MAX_REPLIES_PER_GET {
            self.delivered += 1;
            let bytes = super::reply_pace::reply_bytes(&reply);
            if self.sink.send(reply).is_ok() {
                if let Some(pace) = &self.pace {
                    pace.queued(bytes, caller);
                }
            }
        } else {
            self.over_limit += 1;
        }
    }
}

impl Drop for ReplySink {
    fn drop(&mut self) {
        if self.over_limit > 0 {
            let text = format!(
                "{} replies beyond the limit of {MAX_REPLIES_PER_GET} per get were dropped",
                self.over_limit
            );
            let _ = self.sink.send(Reply {
                result: Err(ReplyError {
                    payload: text.into_bytes(),
                    encoding: "text/plain".into(),
                }),
                replier_id: None,
            });
        }
    }
}

pub(crate) struct LocalQueryable {
    pub(crate) key: OwnedKeyExpr,
    pub(crate) complete: bool,
    pub(crate) callback: QueryCallback,
    /// Where its queries may come from (`SessionLocal` ones are kept apart, undeclared
    /// to other nodes: `Own::local_only_queryables`).
    pub(crate) origin: crate::api::Locality,
}

/// A `get` waiting for its replies.
pub(crate) struct PendingGet {
    key: OwnedKeyExpr,
    /// Whether replies on any key are accepted (`_anyke`), not only those intersecting
    /// `key`.
    any_key: bool,
    sink: ReplySink,
    consolidation: Consolidation,
    /// Faces (and, with `None`, this session's own queryables) that have not finished.
    waiting: HashSet<Option<ZenohId>>,
    /// Latest reply per key (consolidation `Latest`), or the last delivered one's
    /// timestamp per key (`Monotonic`).
    held: HashMap<String, Reply>,
    /// When it was sent.
    started: std::time::Instant,
    /// Dies with the `get`: a cancellation token given the `get` holds it weakly (only
    /// made for a `get` given one).
    _alive: Option<Arc<()>>,
}

/// Where a received query came from. When the last reference goes (every [`Query`] handed
/// to a queryable dropped), the querier is told this node is done.
pub(crate) enum QueryOrigin {
    /// A request from another node.
    Remote {
        /// The link it came on.
        transport: Arc<dyn FaceTransport>,
        /// The requester's id for it.
        request_id: u32,
        /// The request's QoS, reused for the answers.
        qos: NetworkQos,
    },
    /// A request a router forwards, also answered by its own queryables (one target of
    /// the fan-out).
    Routed {
        /// The link it came on.
        transport: Arc<dyn FaceTransport>,
        /// The requester's id for it.
        request_id: u32,
        /// The request's QoS.
        qos: NetworkQos,
        /// The router.
        inner: Weak<Inner>,
        /// The router's id for its own part of the fan-out.
        local_rid: u32,
    },
    /// A `get` of this session answered by its own queryables.
    Local {
        /// The session.
        inner: Weak<Inner>,
        /// The `get`'s id.
        qid: u32,
        /// A paced get's reader pace: an application thread replying beyond it waits for
        /// the reader, unless it is the thread that asked (the reader itself, or this
        /// session's queryables called inline by the get).
        pace: Option<Arc<super::reply_pace::Pace>>,
        /// The thread that made the get.
        asked_on: std::thread::ThreadId,
    },
}

impl Drop for QueryOrigin {
    fn drop(&mut self) {
        // Dropped where the application (or a callback) lets go of it.
        let caller = &Caller::here();
        match self {
            Self::Remote {
                transport,
                request_id,
                qos,
            } => {
                let mut fin = ResponseFinal::new(*request_id);
                fin.qos = *qos;
                let _ = transport.send(
                    &NetworkMessage::ResponseFinal(fin),
                    qos.priority(),
                    Reliability::Reliable,
                    CongestionControl::Block,
                    caller,
                );
            }
            Self::Routed {
                inner, local_rid, ..
            } => {
                if let Some(inner) = inner.upgrade() {
                    inner.forwarded_done(inner.zid, *local_rid, caller);
                }
            }
            Self::Local { inner, qid, .. } => {
                if let Some(inner) = inner.upgrade() {
                    inner.target_done(*qid, None, caller);
                }
            }
        }
    }
}

fn timestamp_of(r: &Reply) -> Option<weft_proto::core::Timestamp> {
    r.result.as_ref().ok().and_then(|s| s.timestamp)
}

impl PendingGet {
    /// Takes a reply in; returns it if it must be delivered now.
    fn accept(&mut self, reply: Reply) -> Option<Reply> {
        let key = match &reply.result {
            Ok(s) => s.key_expr.to_string(),
            Err(_) => return Some(reply),
        };
        match self.consolidation {
            Consolidation::None => Some(reply),
            Consolidation::Monotonic => {
                let newer = match (
                    self.held.get(&key).and_then(timestamp_of),
                    timestamp_of(&reply),
                ) {
                    (Some(old), Some(new)) => new > old,
                    _ => true,
                };
                if newer {
                    self.held.insert(key, reply.clone());
                    Some(reply)
                } else {
                    None
                }
            }
            Consolidation::Auto | Consolidation::Latest => {
                let replace = match (
                    self.held.get(&key).and_then(timestamp_of),
                    timestamp_of(&reply),
                ) {
                    (Some(old), Some(new)) => new >= old,
                    (Some(_), None) => false,
                    _ => true,
                };
                if replace {
                    self.held.insert(key, reply);
                }
                None
            }
        }
    }

    /// Delivers what was held (consolidation `Latest`) and closes the channel.
    fn finish(mut self, caller: &Caller) {
        if matches!(
            self.consolidation,
            Consolidation::Auto | Consolidation::Latest
        ) {
            for (_, r) in std::mem::take(&mut self.held) {
                self.sink.deliver(r, caller);
            }
        }
    }
}

fn split_selector(selector: &str) -> (&str, &str) {
    selector.split_once('?').unwrap_or((selector, ""))
}

/// Whether selector parameters (`a=1;b;c=2`) name `name`, with or without a value.
pub(crate) fn has_parameter(parameters: &str, name: &str) -> bool {
    parameters
        .split(';')
        .any(|p| p.split_once('=').map_or(p, |(k, _)| k) == name)
}

impl Inner {
    /// Sends a `get`; replies arrive on the returned channel, which closes when the query
    /// is over.
    pub(crate) fn get(
        self: &Arc<Self>,
        selector: &str,
        options: &GetOptions,
        caller: &Caller,
    ) -> Result<Receiver<Reply>, SessionError> {
        self.get_paced(selector, options, None, caller)
    }

    /// [`Inner::get`], the replies queued for the reader at its `pace`, if given.
    pub(crate) fn get_paced(
        self: &Arc<Self>,
        selector: &str,
        options: &GetOptions,
        pace: Option<Arc<super::reply_pace::Pace>>,
        caller: &Caller,
    ) -> Result<Receiver<Reply>, SessionError> {
        if self.is_closing() {
            return Err(SessionError::Closed);
        }
        let (key, parameters) = split_selector(selector);
        let key = OwnedKeyExpr::new(key)?;
        let consolidation = match options.consolidation {
            Consolidation::Auto => Consolidation::Latest,
            c => c,
        };
        let timeout = options
            .timeout
            .unwrap_or(self.config.queries_default_timeout);
        let local_pace = pace.clone();
        let (sink, replies) = ReplySink::new(pace);
        if options
            .cancellation
            .as_ref()
            .is_some_and(crate::CancellationToken::is_cancelled)
        {
            // Cancelled before it started: nothing is sent, the channel is closed.
            return Ok(replies);
        }
        let alive = options.cancellation.as_ref().map(|_| Arc::new(()));
        let any_key = accepts_any_key(parameters);
        let parameters: std::borrow::Cow<'_, str> =
            match (options.accept_replies, any_key, parameters.is_empty()) {
                (ReplyKeyExpr::Any, false, true) => ANY_KEY.into(),
                (ReplyKeyExpr::Any, false, false) => format!("{parameters};{ANY_KEY}").into(),
                _ => parameters.into(),
            };
        let parameters = &*parameters;
        let any_key = any_key || options.accept_replies == ReplyKeyExpr::Any;
        let (qid, targets, locals) = {
            let mut st = self.lock();
            let qid = Self::next_id(&mut st);
            let queryable = st.declared.queryables.faces_intersecting(key.as_key_expr());
            let has_queryable = |f: &super::face::Face| {
                f.on_tree && queryable.binary_search(&f.transport.peer_zid()).is_ok()
            };
            let remote = options.allowed_destination.includes_remote();
            let targets: Vec<Arc<dyn FaceTransport>> = st
                .faces
                .values()
                .filter(|_| remote)
                .filter(|f| {
                    if f.transport.peer_whatami() == WhatAmI::Client {
                        has_queryable(f)
                    } else if self.is_peer_link(f) {
                        has_queryable(f) || !f.initial_declarations_done
                    } else {
                        true
                    }
                })
                .map(|f| f.transport.clone())
                .collect();
            let locals = if options.allowed_destination.includes_session() {
                st.own
                    .queryables_answering(true, key.as_key_expr(), options.target)
            } else {
                Vec::new()
            };
            let mut waiting: HashSet<Option<ZenohId>> =
                targets.iter().map(|t| Some(t.peer_zid())).collect();
            if !locals.is_empty() {
                waiting.insert(None);
            }
            self.queries().gets.insert(
                qid,
                PendingGet {
                    key: key.clone(),
                    any_key,
                    sink,
                    consolidation,
                    waiting,
                    held: HashMap::new(),
                    started: std::time::Instant::now(),
                    _alive: alive.clone(),
                },
            );
            self.query_stats
                .gets
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (qid, targets, locals)
        };
        if let (Some(token), Some(alive)) = (&options.cancellation, &alive) {
            if !token.register(Arc::downgrade(self), qid, Arc::downgrade(alive)) {
                // Cancelled while it was being set up.
                self.cancel_get(qid);
                return Ok(replies);
            }
        }
        let (enc_id, schema) = options
            .payload
            .as_ref()
            .map_or((0, None), |(_, e)| parse_encoding(e));
        let query = WireQuery {
            consolidation,
            parameters,
            body: options.payload.as_ref().map(|(p, _)| QueryBody {
                encoding: Encoding { id: enc_id, schema },
                payload: p,
            }),
            attachment: options.attachment.as_deref(),
            source_info: options.source_info,
            ..WireQuery::default()
        };
        let mut request = Request::new(qid, WireExpr::key(key.as_str()), query);
        request.qos = NetworkQos::new(
            options.priority,
            options.congestion_control,
            options.express,
        );
        request.target = options.target;
        request.timeout_ms = Some(timeout.as_millis() as u64);
        let msg = NetworkMessage::Request(request);
        for t in &targets {
            if t.send(
                &msg,
                options.priority,
                Reliability::Reliable,
                options.congestion_control,
                caller,
            )
            .is_err()
            {
                self.target_done(qid, Some(t.peer_zid()), caller);
            }
        }
        if !locals.is_empty() {
            let origin = Arc::new(QueryOrigin::Local {
                inner: Arc::downgrade(self),
                qid,
                pace: local_pace,
                asked_on: std::thread::current().id(),
            });
            let asked: Vec<(QueryCallback, Query)> = locals
                .into_iter()
                .map(|(id, callback)| {
                    let query = Query {
                        inner: self.clone(),
                        origin: origin.clone(),
                        key_expr: key.as_ref().into(),
                        parameters: parameters.to_string(),
                        payload: options.payload.clone(),
                        attachment: options.attachment.clone(),
                        source_info: options.source_info,
                        queryable_id: id,
                    };
                    (callback, query)
                })
                .collect();
            drop(origin);
            for (callback, query) in asked {
                callback(query);
            }
        }
        self.check_done(qid, caller);
        self.schedule_deadline(
            std::time::Instant::now() + timeout,
            super::deadlines::Timeout::Get(qid),
        );
        Ok(replies)
    }

    /// One target (a face, or `None` for this session's queryables) finished a `get`.
    pub(crate) fn target_done(&self, qid: u32, target: Option<ZenohId>, caller: &Caller) {
        if let Some(g) = self.queries().gets.get_mut(&qid) {
            g.waiting.remove(&target);
        }
        self.check_done(qid, caller);
    }

    fn check_done(&self, qid: u32, caller: &Caller) {
        let done = self
            .queries()
            .gets
            .get(&qid)
            .is_some_and(|g| g.waiting.is_empty());
        if done {
            self.finish_get(qid, caller);
        }
    }

    /// Ends a `get` its cancellation token cancelled: its channel closes, the replies it
    /// held for consolidation are dropped.
    pub(crate) fn cancel_get(&self, qid: u32) {
        let pending = self.queries().gets.remove(&qid);
        drop(pending);
    }

    pub(crate) fn finish_get(&self, qid: u32, caller: &Caller) {
        let pending = self.queries().gets.remove(&qid);
        if let Some(g) = pending {
            // Ended with targets still to finish: by its timeout.
            if !g.waiting.is_empty() {
                self.query_stats
                    .gets_timed_out
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            self.query_stats.get_durations.record(g.started.elapsed());
            g.finish(caller);
        }
    }

    /// A face closed: it will not finish the `get`s it was part of.
    pub(crate) fn forget_face_in_gets(&self, zid: ZenohId, caller: &Caller) {
        let qids: Vec<u32> = self
            .queries()
            .gets
            .iter()
            .filter(|(_, g)| g.waiting.contains(&Some(zid)))
            .map(|(q, _)| *q)
            .collect();
        for q in qids {
            self.target_done(q, Some(zid), caller);
        }
    }

    /// Delivers a reply to a pending `get`, or says why it was dropped: no `get` with
    /// that id is pending any more (it timed out or finished), or its key does not
    /// intersect the query's and the `get` accepts only replies that do.
    fn deliver_reply(&self, qid: u32, reply: Reply, caller: &Caller) -> Result<(), DiscardReason> {
        let mut queries = self.queries();
        let Some(g) = queries.gets.get_mut(&qid) else {
            return Err(DiscardReason::Expired);
        };
        if let Ok(s) = &reply.result {
            let matches = g.any_key
                || KeyExpr::new(&s.key_expr).is_ok_and(|k| k.intersects(g.key.as_key_expr()));
            if !matches {
                return Err(DiscardReason::KeyMismatch);
            }
        }
        if let Some(r) = g.accept(reply) {
            g.sink.deliver(r, caller);
        }
        Ok(())
    }

    /// A Response from a face, for one of our `get`s.
    pub(crate) fn on_response(&self, t: &dyn FaceTransport, r: &Response<'_>, caller: &Caller) {
        let Some(Some(key)) = self.face_resolve(t, &r.wire_expr) else {
            return;
        };
        if self.is_router() && self.route_response(t, &key, r, caller) {
            return;
        }
        let replier_id = r.responder;
        let result = match &r.body {
            ResponseBody::Reply(rep) => Ok(sample_of(key, &rep.body, r.qos)),
            ResponseBody::Err(e) => Err(ReplyError {
                payload: e.payload.to_vec(),
                encoding: e.encoding.text().into_owned(),
            }),
        };
        if let Err(reason) = self.deliver_reply(r.request_id, Reply { result, replier_id }, caller)
        {
            t.stats().discarded.add(reason, 1);
        }
    }

    /// A request from a face: handed to every matching queryable, or finished at once.
    pub(crate) fn on_request(
        self: &Arc<Self>,
        t: &dyn FaceTransport,
        r: &Request<'_>,
        caller: &Caller,
    ) {
        let key = self
            .face_resolve(t, &r.wire_expr)
            .flatten()
            .and_then(|k| OwnedKeyExpr::new(k).ok());
        let locals = match &key {
            Some(k) => {
                let st = self.lock();
                st.own
                    .queryables_answering(false, k.as_key_expr(), r.target)
            }
            None => Vec::new(),
        };
        let Some(handle) = t.handle() else { return };
        let origin = if self.is_router() {
            let Some(k) = &key else {
                self.send_final(t, r.id, r.qos, caller);
                return;
            };
            match self.route_request(t, k, r, !locals.is_empty(), caller) {
                None => {
                    self.send_final(t, r.id, r.qos, caller);
                    return;
                }
                Some(None) => return,
                Some(Some(local_rid)) => Arc::new(QueryOrigin::Routed {
                    transport: handle.clone(),
                    request_id: r.id,
                    qos: r.qos,
                    inner: Arc::downgrade(self),
                    local_rid,
                }),
            }
        } else {
            // Dropped at the end of this function unless queries hold it: then the
            // ResponseFinal is sent when the last one is dropped.
            Arc::new(QueryOrigin::Remote {
                transport: handle.clone(),
                request_id: r.id,
                qos: r.qos,
            })
        };
        let Some(key) = key else { return };
        let payload = r
            .query
            .body
            .as_ref()
            .map(|b| (b.payload.to_vec(), b.encoding.text().into_owned()));
        for (id, callback) in locals {
            callback(Query {
                inner: self.clone(),
                origin: origin.clone(),
                key_expr: key.as_ref().into(),
                parameters: r.query.parameters.to_string(),
                payload: payload.clone(),
                attachment: r.query.attachment.map(<[u8]>::to_vec),
                source_info: r.query.source_info,
                queryable_id: id,
            });
        }
    }

    fn send_final(&self, t: &dyn FaceTransport, request_id: u32, qos: NetworkQos, caller: &Caller) {
        let mut fin = ResponseFinal::new(request_id);
        fin.qos = qos;
        let _ = t.send(
            &NetworkMessage::ResponseFinal(fin),
            qos.priority(),
            Reliability::Reliable,
            CongestionControl::Block,
            caller,
        );
    }

    /// A queryable's answer.
    pub(crate) fn reply(
        &self,
        origin: &QueryOrigin,
        queryable_id: u32,
        key: &str,
        answer: Answer<'_>,
        caller: &Caller,
    ) -> Result<(), SessionError> {
        let owned = OwnedKeyExpr::new(key)?;
        // A value names a concrete key; an error names the query's own key expression,
        // wildcards and all (it answers the query, not a key).
        if owned.as_key_expr().is_wild()
            && !matches!(answer, Answer::ValueOnKeyExpr(..) | Answer::Error(..))
        {
            return Err(SessionError::Wildcard(key.into()));
        }
        match origin {
            QueryOrigin::Remote {
                transport,
                request_id,
                qos,
            }
            | QueryOrigin::Routed {
                transport,
                request_id,
                qos,
                ..
            } => {
                let body = match answer {
                    Answer::Value(payload, options) | Answer::ValueOnKeyExpr(payload, options) => {
                        let (id, schema) = parse_encoding(&options.encoding);
                        ResponseBody::Reply(WireReply {
                            consolidation: Consolidation::Auto,
                            unknown: Vec::new(),
                            body: PushBody::Put(Put {
                                timestamp: options.timestamp,
                                encoding: Encoding { id, schema },
                                source_info: options.source_info,
                                attachment: options.attachment.as_deref(),
                                payload,
                                ..Put::default()
                            }),
                        })
                    }
                    Answer::Delete => ResponseBody::Reply(WireReply {
                        consolidation: Consolidation::Auto,
                        unknown: Vec::new(),
                        body: PushBody::Del(Del::default()),
                    }),
                    Answer::Error(payload, encoding) => {
                        let (id, schema) = parse_encoding(encoding);
                        ResponseBody::Err(Err {
                            encoding: Encoding { id, schema },
                            payload,
                            ..Err::default()
                        })
                    }
                };
                let mut resp = Response::new(*request_id, WireExpr::key(key), body);
                resp.qos = *qos;
                resp.responder = Some(EntityGlobalId {
                    zid: self.zid,
                    eid: queryable_id,
                });
                transport
                    .send(
                        &NetworkMessage::Response(resp),
                        qos.priority(),
                        Reliability::Reliable,
                        CongestionControl::Block,
                        caller,
                    )
                    .map_err(|_| SessionError::Closed)
            }
            QueryOrigin::Local {
                qid,
                pace,
                asked_on,
                ..
            } => {
                let sample = |kind, payload: &[u8], options: &PutOptions| Sample {
                    key_expr: key.into(),
                    kind,
                    payload: payload.into(),
                    encoding: if options.encoding.is_empty() {
                        "zenoh/bytes".into()
                    } else {
                        options.encoding.clone().into()
                    },
                    timestamp: options.timestamp,
                    attachment: options.attachment.clone(),
                    priority: Priority::Data,
                    congestion_control: CongestionControl::Block,
                    express: false,
                    source_info: options.source_info,
                };
                let result = match answer {
                    Answer::Value(payload, options) | Answer::ValueOnKeyExpr(payload, options) => {
                        Ok(sample(SampleKind::Put, payload, options))
                    }
                    Answer::Delete => Ok(sample(SampleKind::Delete, &[], &PutOptions::default())),
                    Answer::Error(payload, encoding) => Err(ReplyError {
                        payload: payload.into(),
                        encoding: encoding.to_string(),
                    }),
                };
                // A reply to a local get that is over already is dropped: no face to
                // count it against. (One on a key the query does not accept was refused
                // to the replier already, by `Query::reply`.)
                let _ = self.deliver_reply(
                    *qid,
                    Reply {
                        result,
                        replier_id: Some(EntityGlobalId {
                            zid: self.zid,
                            eid: queryable_id,
                        }),
                    },
                    caller,
                );
                // Beyond a paced reader's bound, an application thread waits for it: not
                // the thread that asked (it is the reader, or runs the queryables inline
                // before the reader starts), nor a thread serving links (it queued
                // without waiting).
                let other_thread = std::thread::current().id() != *asked_on;
                if let (Some(pace), Caller::App, true) = (pace, caller, other_thread) {
                    pace.wait_while_over();
                }
                Ok(())
            }
        }
    }

    /// Declares a queryable answering the queries `origin` allows: other nodes are told
    /// of it unless its origin is `SessionLocal`.
    pub(crate) fn declare_queryable(
        &self,
        key: OwnedKeyExpr,
        complete: bool,
        origin: crate::api::Locality,
        callback: QueryCallback,
        caller: &Caller,
    ) -> Result<u32, SessionError> {
        let queryable = LocalQueryable {
            key: key.clone(),
            complete,
            callback,
            origin,
        };
        if origin == crate::api::Locality::SessionLocal {
            return self.declare_local_only(|st, id| {
                st.own.local_only_queryables.insert(id, queryable);
            });
        }
        self.declare_own(
            EntityKind::Queryable,
            &key,
            complete,
            |st, id| {
                st.own.queryables.insert(id, queryable);
            },
            caller,
        )
    }

    pub(crate) fn undeclare_queryable(&self, id: u32, caller: &Caller) {
        if self.undeclare_local_only(|st| st.own.local_only_queryables.remove(&id).is_some()) {
            return;
        }
        self.undeclare_own(
            EntityKind::Queryable,
            id,
            |st| st.own.queryables.remove(&id).map(|q| q.key),
            caller,
        );
    }

    /// Our queryables, as declarations to send a new face.
    pub(crate) fn queryable_declarations(&self) -> Vec<(u32, String, bool)> {
        self.lock()
            .own
            .queryables
            .iter()
            .map(|(id, q)| (*id, q.key.to_string(), q.complete))
            .collect()
    }
}

/// A Reply's Put or Del as a sample on `key`.
fn sample_of(key: String, body: &PushBody<'_>, qos: NetworkQos) -> Sample {
    match body {
        PushBody::Put(p) => Sample {
            key_expr: key.into(),
            kind: SampleKind::Put,
            payload: p.payload.into(),
            encoding: p.encoding.text(),
            timestamp: p.timestamp,
            attachment: p.attachment.map(<[u8]>::to_vec),
            priority: qos.priority(),
            congestion_control: qos.congestion_control(),
            express: qos.is_express(),
            source_info: p.source_info,
        },
        PushBody::Del(d) => Sample {
            key_expr: key.into(),
            kind: SampleKind::Delete,
            payload: Payload::default(),
            encoding: "zenoh/bytes".into(),
            timestamp: d.timestamp,
            attachment: d.attachment.map(<[u8]>::to_vec),
            priority: qos.priority(),
            congestion_control: qos.congestion_control(),
            express: qos.is_express(),
            source_info: d.source_info,
        },
    }
}
