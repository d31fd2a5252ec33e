//! Access control applied to one transport: which messages it may carry each way.

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use weft_keyexpr::KeyExpr;
use weft_proto::core::WireExpr;
use weft_proto::network::{Declaration, InterestMode, InterestOptions, NetworkMessage};
use weft_proto::zenoh::PushBody;

use super::config::{Flow, Message, Permission};
use super::policy::{AccessControl, SubjectQuery};

/// The policy, for one transport (the subjects it matches computed once).
pub struct Enforcer {
    control: Arc<AccessControl>,
    subjects: Vec<usize>,
    /// Who the transport is, for logs.
    who: String,
    /// The peer's address: denials are logged at most once per period per address.
    source: Option<IpAddr>,
    denied: AtomicU64,
}

impl Enforcer {
    /// The policy `control` for a transport with the properties `query`, described as
    /// `who` in logs, its peer at `source` (the denials of one address share a pace in
    /// the log).
    pub fn new(
        control: Arc<AccessControl>,
        query: &SubjectQuery,
        who: String,
        source: Option<IpAddr>,
    ) -> Self {
        let subjects = control.subjects_of(query);
        if subjects.is_empty() {
            tracing::info!(
                "{who} matches no access-control subject: the default permission applies"
            );
        }
        Self {
            control,
            subjects,
            who,
            source,
            denied: AtomicU64::new(0),
        }
    }

    /// Messages denied so far.
    pub fn denied(&self) -> u64 {
        self.denied.load(Ordering::Relaxed)
    }

    /// What the policy decides for a message of kind `message` on `key` going `flow`,
    /// and why, without counting or logging anything (to explain a route).
    pub fn decision(
        &self,
        flow: Flow,
        message: Message,
        key: KeyExpr<'_>,
    ) -> super::policy::Decision {
        self.control.decide(&self.subjects, flow, message, key)
    }

    /// Whether `msg` may go `flow`, its key being `key` (resolved for what is received;
    /// `None` when it has none or it does not resolve). Messages access control does not
    /// cover pass. A denial is counted, and logged once per message kind and key with
    /// what decided it.
    pub fn allows(&self, flow: Flow, msg: &NetworkMessage<'_>, key: Option<&str>) -> bool {
        let Some((message, withdrawal)) = classify(msg) else {
            return true;
        };
        let key = key.and_then(|k| KeyExpr::new(k).ok());
        let Some(key) = key else {
            // A withdrawal by id alone passes (Zenoh lets it through); anything else
            // without a key is refused, as Zenoh does.
            return withdrawal || self.deny(flow, message, "(no key)", None);
        };
        let decision = self.control.decide(&self.subjects, flow, message, key);
        match decision.permission {
            Permission::Allow => true,
            Permission::Deny => self.deny(flow, message, key.as_str(), Some(&decision)),
        }
    }

    /// Counts and logs a denial (at most one line per period per peer address, flow and
    /// message kind, saying how many were left untold); returns false.
    fn deny(
        &self,
        flow: Flow,
        message: Message,
        key: &str,
        decision: Option<&super::policy::Decision>,
    ) -> bool {
        let n = self.denied.fetch_add(1, Ordering::Relaxed) + 1;
        let tell = self
            .control
            .denial_log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .count(&(self.source, flow, message), Instant::now());
        if let Some(tell) = tell {
            let why =
                decision.map_or_else(|| "deny: it has no key".to_owned(), ToString::to_string);
            let source = self
                .source
                .map_or_else(|| "local links".to_owned(), |ip| ip.to_string());
            tracing::warn!(
                "access control: {} {} on {} {} {} dropped ({why}; {n} denied so far){}",
                message.name(),
                flow.name(),
                crate::printable(key),
                if flow == Flow::Ingress { "from" } else { "to" },
                self.who,
                tell.and_more(&source)
            );
        }
        false
    }
}

/// The access-control message kind of a network message, and whether it withdraws a
/// declaration; `None` for what access control does not cover.
pub fn classify(msg: &NetworkMessage<'_>) -> Option<(Message, bool)> {
    Some(match msg {
        NetworkMessage::Push(p) => match p.body {
            PushBody::Put(_) => (Message::Put, false),
            PushBody::Del(_) => (Message::Delete, false),
        },
        NetworkMessage::Request(_) => (Message::Query, false),
        NetworkMessage::Response(_) => (Message::Reply, false),
        NetworkMessage::Declare(d) => match d.body {
            Declaration::Subscriber(_) => (Message::DeclareSubscriber, false),
            Declaration::UndeclareSubscriber(_) => (Message::DeclareSubscriber, true),
            Declaration::Queryable(_) => (Message::DeclareQueryable, false),
            Declaration::UndeclareQueryable(_) => (Message::DeclareQueryable, true),
            Declaration::Token(_) => (Message::LivelinessToken, false),
            Declaration::UndeclareToken(_) => (Message::LivelinessToken, true),
            _ => return None,
        },
        NetworkMessage::Interest(i) if i.options.contains(InterestOptions::TOKENS) => {
            match i.mode {
                InterestMode::Current => (Message::LivelinessQuery, false),
                InterestMode::Future | InterestMode::CurrentFuture => {
                    (Message::DeclareLivelinessSubscriber, false)
                }
                InterestMode::Final => (Message::DeclareLivelinessSubscriber, true),
            }
        }
        _ => return None,
    })
}

/// The key a message names in full (scope 0), as weft sends every message; `None` when
/// it has none or uses a declared id (see [`wire_expr`]).
pub fn full_key<'m>(msg: &'m NetworkMessage<'_>) -> Option<&'m str> {
    let we = wire_expr(msg)?;
    (we.scope == 0 && !we.suffix.is_empty()).then_some(we.suffix)
}

/// The wire expression of a message access control covers, if it has one.
pub fn wire_expr<'m, 'a>(msg: &'m NetworkMessage<'a>) -> Option<&'m WireExpr<'a>> {
    Some(match msg {
        NetworkMessage::Push(p) => &p.wire_expr,
        NetworkMessage::Request(r) => &r.wire_expr,
        NetworkMessage::Response(r) => &r.wire_expr,
        NetworkMessage::Declare(d) => match &d.body {
            Declaration::Subscriber(s) => &s.wire_expr,
            Declaration::Queryable(q) => &q.wire_expr,
            Declaration::Token(t) => &t.wire_expr,
            Declaration::UndeclareSubscriber(u) => u.wire_expr.as_ref()?,
            Declaration::UndeclareQueryable(u) => u.wire_expr.as_ref()?,
            Declaration::UndeclareToken(u) => u.wire_expr.as_ref()?,
            _ => return None,
        },
        // An interest in every key has none to check: refused, as Zenoh does.
        NetworkMessage::Interest(i) => i.wire_expr.as_ref()?,
        _ => return None,
    })
}
