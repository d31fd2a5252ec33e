//! Subscribers, publishers and publication options.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use weft_keyexpr::OwnedKeyExpr;
use weft_proto::core::{CongestionControl, Priority, Reliability, Timestamp};
use weft_proto::network::EntityGlobalId;

use crate::api::SampleKind;
use crate::session::{Inner, MatchingKind, MatchingListener, PublisherRoutes, SessionError};
use crate::transport::Caller;

/// How a value is published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PutOptions {
    /// The payload's encoding, as text (`text/plain`, `application/json`, ...); empty for
    /// the default (`zenoh/bytes`).
    pub encoding: String,
    /// User bytes attached to the value.
    pub attachment: Option<Vec<u8>>,
    /// Priority (Data by default).
    pub priority: Priority,
    /// What to do when the link is congested (drop by default).
    pub congestion_control: CongestionControl,
    /// Send at once, without waiting to batch.
    pub express: bool,
    /// Reliable (default) or best effort.
    pub reliability: Reliability,
    /// The value's timestamp; when `None`, the session adds one if timestamping is on.
    pub timestamp: Option<Timestamp>,
    /// The publishing entity and its sequence number, told to the subscribers (none by
    /// default).
    pub source_info: Option<weft_proto::zenoh::SourceInfo>,
    /// Where the value may go: this session's subscribers, other nodes', or both (the
    /// default).
    pub allowed_destination: crate::api::Locality,
}

impl Default for PutOptions {
    fn default() -> Self {
        Self {
            encoding: String::new(),
            attachment: None,
            priority: Priority::Data,
            congestion_control: CongestionControl::Drop,
            express: false,
            reliability: Reliability::Reliable,
            timestamp: None,
            source_info: None,
            allowed_destination: crate::api::Locality::Any,
        }
    }
}

/// A declared subscriber; undeclared when dropped.
pub struct Subscriber {
    inner: Arc<Inner>,
    id: u32,
    key: OwnedKeyExpr,
    dropped: Option<Arc<AtomicU64>>,
}

impl Subscriber {
    pub(crate) fn new(inner: Arc<Inner>, id: u32, key: OwnedKeyExpr) -> Self {
        Self {
            inner,
            id,
            key,
            dropped: None,
        }
    }

    pub(crate) fn with_drops(
        inner: Arc<Inner>,
        id: u32,
        key: OwnedKeyExpr,
        dropped: Arc<AtomicU64>,
    ) -> Self {
        Self {
            inner,
            id,
            key,
            dropped: Some(dropped),
        }
    }

    /// The subscribed key expression.
    pub fn key_expr(&self) -> &str {
        self.key.as_str()
    }

    /// The subscriber's id: its session's and its own within it.
    pub fn id(&self) -> EntityGlobalId {
        self.inner.entity_id(self.id)
    }

    /// Samples dropped because the channel was full (channel subscribers only).
    pub fn dropped(&self) -> u64 {
        self.dropped
            .as_ref()
            .map_or(0, |d| d.load(Ordering::Relaxed))
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let caller = &Caller::here();
        self.inner.undeclare_subscriber(self.id, caller);
    }
}

/// A declared publisher; undeclared when dropped.
pub struct Publisher {
    inner: Arc<Inner>,
    id: u32,
    key: OwnedKeyExpr,
    options: PutOptions,
    routes: PublisherRoutes,
}

impl Publisher {
    pub(crate) fn new(
        inner: Arc<Inner>,
        id: u32,
        key: OwnedKeyExpr,
        options: PutOptions,
        expr_id: Option<u16>,
    ) -> Self {
        Self {
            inner,
            id,
            key,
            options,
            routes: PublisherRoutes::new(expr_id),
        }
    }

    /// The key it publishes on.
    pub fn key_expr(&self) -> &str {
        self.key.as_str()
    }

    /// The publisher's id: its session's and its own within it (what
    /// [`PutOptions::source_info`] names).
    pub fn id(&self) -> EntityGlobalId {
        self.inner.entity_id(self.id)
    }

    /// Publishes `payload` with the publisher's options.
    pub fn put(&self, payload: &[u8]) -> Result<(), SessionError> {
        let caller = &Caller::here();
        self.inner.publish(
            &self.key,
            SampleKind::Put,
            payload,
            &self.options,
            Some(&self.routes),
            caller,
        )
    }

    /// Publishes `payload` with an attachment.
    pub fn put_with_attachment(
        &self,
        payload: &[u8],
        attachment: &[u8],
    ) -> Result<(), SessionError> {
        let caller = &Caller::here();
        let mut options = self.options.clone();
        options.attachment = Some(attachment.to_vec());
        self.inner.publish(
            &self.key,
            SampleKind::Put,
            payload,
            &options,
            Some(&self.routes),
            caller,
        )
    }

    /// Whether any subscriber matches its key, as far as the session knows.
    pub fn matching_status(&self) -> bool {
        self.inner.matching(&self.key, MatchingKind::Subscribers)
    }

    /// Calls `callback` whenever subscribers start or stop matching its key (see
    /// [`MatchingListener`]).
    pub fn matching_listener(
        &self,
        callback: impl Fn(bool) + Send + 'static,
    ) -> Result<MatchingListener, SessionError> {
        MatchingListener::start(
            &self.inner,
            self.key.clone(),
            MatchingKind::Subscribers,
            callback,
        )
    }

    /// Deletes the key.
    pub fn delete(&self) -> Result<(), SessionError> {
        let caller = &Caller::here();
        self.inner.publish(
            &self.key,
            SampleKind::Delete,
            &[],
            &self.options,
            Some(&self.routes),
            caller,
        )
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        let caller = &Caller::here();
        if let Some(expr_id) = self.routes.withdraw_expr(self.options.priority, caller) {
            self.inner.expr_ids().give_back(expr_id);
        }
        self.inner.undeclare_publisher(self.id, caller);
    }
}
