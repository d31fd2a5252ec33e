//! `Subscriber` and `Publisher`.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use crate::bytes::bytes_of;
use crate::encoding::Encoding;
use crate::entity::{handled_methods, with_held, Handled};
use crate::keyexpr::KeyExpr;
use crate::matching::matched_methods;
use crate::qos::{CongestionControl, Priority, Reliability};
use crate::sample::{EntityGlobalId, SourceInfo, Timestamp};
use crate::session::{PutArgs, Shared};

/// A declared subscriber. With a channel handler, `recv()`, `try_recv()` and iteration
/// read its samples; `undeclare()` (or the end of a `with` block) stops it.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Subscriber {
    key: weft::SharedKey,
    id: weft::EntityGlobalId,
    handled: Handled,
}

impl Subscriber {
    /// The Python face of the subscriber `id` on `key`.
    pub(crate) fn new(key: weft::SharedKey, id: weft::EntityGlobalId, handled: Handled) -> Self {
        Self { key, id, handled }
    }
}

handled_methods!(Subscriber, undeclare, "sample", {
    /// The subscribed key expression.
    #[getter]
    fn key_expr(&self) -> KeyExpr {
        KeyExpr(self.key.clone())
    }

    /// Its id: its session's and its own within it (the id weft declares it with);
    /// `ZError` once it is undeclared.
    #[getter]
    fn id(&self) -> PyResult<EntityGlobalId> {
        self.handled.declared_id(self.id, "subscriber")
    }
});

/// The options a publisher was declared with.
pub(crate) struct Defaults {
    pub(crate) encoding: String,
    pub(crate) congestion_control: CongestionControl,
    pub(crate) priority: Priority,
    pub(crate) express: bool,
    pub(crate) reliability: Reliability,
}

/// A declared publisher on one key.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Publisher {
    publisher: Mutex<Option<weft::Publisher>>,
    session: weft::Session,
    shared: Arc<Shared>,
    key: weft::SharedKey,
    defaults: Defaults,
}

impl Publisher {
    /// The Python face of `publisher`, declared on `session` with `defaults`.
    pub(crate) fn new(
        publisher: weft::Publisher,
        session: weft::Session,
        shared: Arc<Shared>,
        defaults: Defaults,
    ) -> Self {
        Self {
            key: publisher.key_expr().into(),
            publisher: Mutex::new(Some(publisher)),
            session,
            shared,
            defaults,
        }
    }

    /// Runs `f` on the weft publisher; `ZError` once it is undeclared.
    fn with_publisher<R>(&self, f: impl FnOnce(&weft::Publisher) -> R) -> PyResult<R> {
        with_held(&self.publisher, "publisher", "undeclared", f)
    }

    fn declared(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&weft::Publisher) -> Result<(), weft::SessionError> + Send,
    ) -> PyResult<()> {
        let congestion = self.defaults.congestion_control.into();
        self.with_publisher(|p| crate::session::publish(py, congestion, || f(p)))?
    }

    fn base_options(&self) -> weft::PutOptions {
        weft::PutOptions {
            encoding: self.defaults.encoding.clone(),
            congestion_control: self.defaults.congestion_control.into(),
            priority: self.defaults.priority.into(),
            express: self.defaults.express,
            reliability: self.defaults.reliability.into(),
            ..weft::PutOptions::default()
        }
    }
}

matched_methods!(Publisher, publisher, "publisher", "subscriber", {
    /// Its id: its session's and its own within it (what a `SourceInfo` names).
    #[getter]
    fn id(&self) -> PyResult<EntityGlobalId> {
        self.with_publisher(|p| EntityGlobalId(p.id()))
    }

    /// The encoding of its publications.
    #[getter]
    fn encoding(&self) -> Encoding {
        Encoding(self.defaults.encoding.clone().into())
    }

    /// Its congestion control.
    #[getter]
    fn congestion_control(&self) -> CongestionControl {
        self.defaults.congestion_control
    }

    /// Its priority.
    #[getter]
    fn priority(&self) -> Priority {
        self.defaults.priority
    }

    /// Its reliability.
    #[getter]
    fn reliability(&self) -> Reliability {
        self.defaults.reliability
    }

    /// Publishes `payload`; `encoding`, `attachment` and `timestamp` apply to this
    /// publication only.
    #[pyo3(signature = (payload, *, encoding = None, attachment = None, timestamp = None,
        source_info = None))]
    fn put(
        &self,
        py: Python<'_>,
        payload: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
        attachment: Option<&Bound<'_, PyAny>>,
        timestamp: Option<Timestamp>,
        source_info: Option<SourceInfo>,
    ) -> PyResult<()> {
        let payload = bytes_of(payload)?;
        let plain = |o: Option<&Bound<'_, PyAny>>| o.is_none_or(|o| o.is_none());
        if plain(encoding) && timestamp.is_none() && source_info.is_none() {
            if plain(attachment) {
                return self.declared(py, |p| p.put(&payload));
            }
            let attachment = bytes_of(attachment.expect("not plain"))?;
            return self.declared(py, |p| p.put_with_attachment(&payload, &attachment));
        }
        let args = PutArgs {
            encoding,
            attachment,
            timestamp,
            source_info,
            ..PutArgs::default()
        };
        let options = args.apply(self.base_options())?;
        let key = self.key.to_string();
        self.declared(py, |_| self.session.put(&key, &payload, &options))
    }

    /// Publishes the deletion of its key.
    #[pyo3(signature = (*, attachment = None, timestamp = None, source_info = None))]
    fn delete(
        &self,
        py: Python<'_>,
        attachment: Option<&Bound<'_, PyAny>>,
        timestamp: Option<Timestamp>,
        source_info: Option<SourceInfo>,
    ) -> PyResult<()> {
        if attachment.is_none_or(|a| a.is_none()) && timestamp.is_none() && source_info.is_none() {
            return self.declared(py, weft::Publisher::delete);
        }
        let args = PutArgs {
            attachment,
            timestamp,
            source_info,
            ..PutArgs::default()
        };
        let options = args.apply(self.base_options())?;
        let key = self.key.to_string();
        self.declared(py, |_| self.session.delete(&key, &options))
    }
});
