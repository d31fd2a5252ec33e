//! Queries: `get` on a selector, queryables answering them, and the replies.

use std::sync::Arc;

use weft_keyexpr::OwnedKeyExpr;
use weft_proto::core::{CongestionControl, Priority};
use weft_proto::network::{EntityGlobalId, QueryTarget};
use weft_proto::zenoh::Consolidation;

use crate::api::{PutOptions, Sample};
use crate::session::{Answer, Inner, MatchingKind, MatchingListener, QueryOrigin, SessionError};
use crate::transport::Caller;

/// How a `get` is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetOptions {
    /// Which queryables answer (best matching by default).
    pub target: QueryTarget,
    /// How replies are consolidated; `Auto` means `Latest`, as in Zenoh.
    pub consolidation: Consolidation,
    /// How long to wait for the replies (the session's `queries_default_timeout` when
    /// `None`).
    pub timeout: Option<std::time::Duration>,
    /// A value sent with the query: (payload, encoding).
    pub payload: Option<(Vec<u8>, String)>,
    /// User bytes attached to the query.
    pub attachment: Option<Vec<u8>>,
    /// The priority of the query (Data by default, as Zenoh).
    pub priority: Priority,
    /// What to do with the query when a link is congested (block by default, as
    /// Zenoh's requests).
    pub congestion_control: CongestionControl,
    /// Whether the query is sent at once rather than batched.
    pub express: bool,
    /// A token that ends the `get` when cancelled (none by default).
    pub cancellation: Option<crate::CancellationToken>,
    /// Where the query may go: this session's queryables, other nodes', or both (the
    /// default).
    pub allowed_destination: crate::api::Locality,
    /// Which replies are accepted: those on keys intersecting the query's (the default),
    /// or any (the query then carries Zenoh's `_anyke` parameter).
    pub accept_replies: ReplyKeyExpr,
    /// The querying entity and its sequence number, told to the queryables (none by
    /// default).
    pub source_info: Option<weft_proto::zenoh::SourceInfo>,
}

/// Which replies a `get` accepts (Zenoh's `ReplyKeyExpr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ReplyKeyExpr {
    /// Replies on keys that intersect the query's key expression (the default): the
    /// others are dropped and counted (discard reason `key_mismatch`).
    #[default]
    MatchingQuery,
    /// Replies on any key.
    Any,
}

impl ReplyKeyExpr {
    /// What a query whose selector has `parameters` (`a=1;b;_anyke`) accepts: `Any` if
    /// they hold Zenoh's `_anyke`.
    pub fn of_parameters(parameters: &str) -> Self {
        if crate::session::query::accepts_any_key(parameters) {
            Self::Any
        } else {
            Self::MatchingQuery
        }
    }
}

impl Default for GetOptions {
    fn default() -> Self {
        Self {
            target: QueryTarget::BestMatching,
            consolidation: Consolidation::Auto,
            timeout: None,
            payload: None,
            attachment: None,
            priority: Priority::Data,
            congestion_control: CongestionControl::Block,
            express: false,
            cancellation: None,
            allowed_destination: crate::api::Locality::Any,
            accept_replies: ReplyKeyExpr::MatchingQuery,
            source_info: None,
        }
    }
}

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyError {
    /// The error value.
    pub payload: Vec<u8>,
    /// Its encoding.
    pub encoding: String,
}

/// One answer to a `get`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// A sample, or an error.
    pub result: Result<Sample, ReplyError>,
    /// The answering entity (its session's id and its id there), when it said.
    pub replier_id: Option<EntityGlobalId>,
}

/// A query received by a queryable. Answer with [`Query::reply`], [`Query::reply_err`] or
/// [`Query::reply_del`]; the querier learns that this queryable is done when the `Query`
/// is dropped.
pub struct Query {
    pub(crate) inner: Arc<Inner>,
    pub(crate) origin: Arc<QueryOrigin>,
    pub(crate) key_expr: String,
    pub(crate) parameters: String,
    pub(crate) payload: Option<(Vec<u8>, String)>,
    pub(crate) attachment: Option<Vec<u8>>,
    pub(crate) source_info: Option<weft_proto::zenoh::SourceInfo>,
    pub(crate) queryable_id: u32,
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("key_expr", &self.key_expr)
            .field("parameters", &self.parameters)
            .finish()
    }
}

impl Query {
    /// The queried key expression.
    pub fn key_expr(&self) -> &str {
        &self.key_expr
    }

    /// The selector's parameters (text after `?`).
    pub fn parameters(&self) -> &str {
        &self.parameters
    }

    /// The selector: key expression, then `?parameters` if any.
    pub fn selector(&self) -> String {
        if self.parameters.is_empty() {
            self.key_expr.clone()
        } else {
            format!("{}?{}", self.key_expr, self.parameters)
        }
    }

    /// The value sent with the query: (payload, encoding).
    pub fn payload(&self) -> Option<&(Vec<u8>, String)> {
        self.payload.as_ref()
    }

    /// User bytes attached to the query.
    pub fn attachment(&self) -> Option<&[u8]> {
        self.attachment.as_deref()
    }

    /// The querying entity and its sequence number, if the querier told them.
    pub fn source_info(&self) -> Option<weft_proto::zenoh::SourceInfo> {
        self.source_info
    }

    /// Answers with a value on `key` (a concrete key).
    pub fn reply(
        &self,
        key: &str,
        payload: &[u8],
        options: &PutOptions,
    ) -> Result<(), SessionError> {
        let caller = &Caller::here();
        self.accepts_reply_on(key)?;
        self.inner.reply(
            &self.origin,
            self.queryable_id,
            key,
            Answer::Value(payload, options),
            caller,
        )
    }

    /// Answers with a value on `key_expr`, which may hold wildcards: a value about what
    /// matches it as a whole (as Zenoh's admin space answers `@/<zid>/router/subscriber/a/**`
    /// for a subscriber on `a/**`).
    pub fn reply_key_expr(
        &self,
        key_expr: &str,
        payload: &[u8],
        options: &PutOptions,
    ) -> Result<(), SessionError> {
        let caller = &Caller::here();
        self.accepts_reply_on(key_expr)?;
        self.inner.reply(
            &self.origin,
            self.queryable_id,
            key_expr,
            Answer::ValueOnKeyExpr(payload, options),
            caller,
        )
    }

    /// Answers that `key` was deleted.
    pub fn reply_del(&self, key: &str) -> Result<(), SessionError> {
        let caller = &Caller::here();
        self.accepts_reply_on(key)?;
        self.inner
            .reply(&self.origin, self.queryable_id, key, Answer::Delete, caller)
    }

    /// Which replies the querier accepts: any key if its selector has the `_anyke`
    /// parameter, else only keys intersecting the query's.
    pub fn accepts_replies(&self) -> ReplyKeyExpr {
        ReplyKeyExpr::of_parameters(&self.parameters)
    }

    /// `Err` if the querier would drop a reply on `key`: it does not intersect the
    /// query's key expression and the query accepts only replies that do.
    fn accepts_reply_on(&self, key: &str) -> Result<(), SessionError> {
        if self.accepts_replies() == ReplyKeyExpr::Any {
            return Ok(());
        }
        let query = weft_keyexpr::KeyExpr::new(&self.key_expr)?;
        if weft_keyexpr::KeyExpr::new(key)?.intersects(query) {
            Ok(())
        } else {
            Err(SessionError::ReplyKeyMismatch {
                reply: key.into(),
                query: self.key_expr.clone(),
            })
        }
    }

    /// Answers with an error.
    pub fn reply_err(&self, payload: &[u8], encoding: &str) -> Result<(), SessionError> {
        let caller = &Caller::here();
        self.inner.reply(
            &self.origin,
            self.queryable_id,
            &self.key_expr,
            Answer::Error(payload, encoding),
            caller,
        )
    }
}

/// A declared queryable; undeclared when dropped.
pub struct Queryable {
    pub(crate) inner: Arc<Inner>,
    pub(crate) id: u32,
    pub(crate) key: String,
}

impl Queryable {
    /// The key expression it answers for.
    pub fn key_expr(&self) -> &str {
        &self.key
    }

    /// The queryable's id: its session's and its own within it (what a reply it sends
    /// names as its replier).
    pub fn id(&self) -> EntityGlobalId {
        self.inner.entity_id(self.id)
    }
}

impl Drop for Queryable {
    fn drop(&mut self) {
        let caller = &Caller::here();
        self.inner.undeclare_queryable(self.id, caller);
    }
}

/// A declared querier: repeated queries on one key expression with fixed options; in
/// client mode, it asks the router which queryables match its key (for its matching
/// status). Undeclared when dropped.
pub struct Querier {
    pub(crate) inner: Arc<Inner>,
    pub(crate) id: u32,
    pub(crate) key: OwnedKeyExpr,
    pub(crate) options: GetOptions,
}

impl Drop for Querier {
    fn drop(&mut self) {
        let caller = &Caller::here();
        self.inner.undeclare_querier(self.id, caller);
    }
}

impl Querier {
    /// The key expression it queries.
    pub fn key_expr(&self) -> &str {
        self.key.as_str()
    }

    /// The querier's id: its session's and its own within it.
    pub fn id(&self) -> EntityGlobalId {
        self.inner.entity_id(self.id)
    }

    /// Whether any queryable its queries would reach matches its key, as far as the
    /// session knows.
    pub fn matching_status(&self) -> bool {
        self.inner
            .matching(&self.key, MatchingKind::Queryables(self.options.target))
    }

    /// Calls `callback` whenever queryables start or stop matching its key (see
    /// [`MatchingListener`]).
    pub fn matching_listener(
        &self,
        callback: impl Fn(bool) + Send + 'static,
    ) -> Result<MatchingListener, SessionError> {
        MatchingListener::start(
            &self.inner,
            self.key.clone(),
            MatchingKind::Queryables(self.options.target),
            callback,
        )
    }

    /// Queries the key expression, with `parameters` (may be empty); replies arrive on
    /// the returned channel, which closes when the query is over.
    pub fn get(&self, parameters: &str) -> Result<std::sync::mpsc::Receiver<Reply>, SessionError> {
        let caller = &Caller::here();
        let selector = if parameters.is_empty() {
            self.key.to_string()
        } else {
            format!("{}?{parameters}", self.key)
        };
        self.inner.get(&selector, &self.options, caller)
    }
}
