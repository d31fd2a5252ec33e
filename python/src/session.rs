//! `open` and `Session`: opening, publishing, declaring, querying, closing.

use std::sync::{Arc, Mutex, Weak};

use pyo3::prelude::*;

use crate::bytes::{bytes_of, to_opt_vec};
use crate::cancel::CancellationToken;
use crate::config::Config;
use crate::encoding::encoding_text;
use crate::entity::{Entity, Handled};
use crate::error::zerr;
use crate::keyexpr::{key_text, KeyExpr};
use crate::pubsub::{Publisher, Subscriber};
use crate::qos::{
    CongestionControl, Locality, Priority, Qos, QueryTarget, Reliability, ReplyKeyExpr,
};
use crate::query::Queryable;
use crate::queue::{Item, SampleBox};
use crate::reply::{get_options, run_query, Reach};
use crate::sample::{EntityGlobalId, SourceInfo, Timestamp, ZenohId};

/// Every session opened and not yet dropped: closed at interpreter exit.
static OPEN: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());

/// A session's state, shared by its Python object and the registry of open sessions.
pub(crate) struct Shared {
    session: Mutex<Option<weft::Session>>,
    entities: Mutex<Vec<Arc<Entity>>>,
    pub(crate) zid: weft::ZenohId,
}

impl Shared {
    /// A handle on the weft session; `ZError` once it is closed.
    pub(crate) fn weft(&self) -> PyResult<weft::Session> {
        self.session
            .lock()
            .ok()
            .and_then(|s| s.clone())
            .ok_or_else(|| zerr("the session is closed"))
    }

    /// Keeps `entity`, to undeclare it when the session closes.
    pub(crate) fn keep(&self, entity: Arc<Entity>) {
        if let Ok(mut list) = self.entities.lock() {
            list.retain(|e| e.is_declared());
            list.push(entity);
        }
    }

    /// Closes the session (GIL released), then undeclares what it declared.
    fn close(&self, py: Python<'_>) {
        let session = self.session.lock().ok().and_then(|mut s| s.take());
        if let Some(s) = session {
            crate::gil::released(py, move || {
                s.close();
                drop(s);
            });
        }
        let entities = self
            .entities
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default();
        for e in entities {
            e.undeclare(py);
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let session = self.session.get_mut().ok().and_then(Option::take);
        let entities = self
            .entities
            .get_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        if session.is_none() && entities.is_empty() {
            return;
        }
        Python::with_gil(|py| {
            if let Some(s) = session {
                crate::gil::released(py, move || s.close());
            }
            for e in entities {
                e.undeclare(py);
            }
        });
    }
}

/// The sessions still open (for closing them at exit).
pub(crate) fn all_open() -> Vec<Arc<Shared>> {
    OPEN.lock()
        .map(|list| list.iter().filter_map(Weak::upgrade).collect())
        .unwrap_or_default()
}

/// Closes the weft sessions of `sessions`, all at once (called without the GIL).
pub(crate) fn close_all(sessions: Vec<Arc<Shared>>) {
    let weft: Vec<weft::Session> = sessions
        .iter()
        .filter_map(|s| s.session.lock().ok().and_then(|mut s| s.take()))
        .collect();
    std::thread::scope(|scope| {
        for s in weft {
            scope.spawn(move || s.close());
        }
    });
}

/// Opens a session with `config`; raises `ZError` if it cannot (e.g. no router reachable
/// in client mode). The GIL is released while connecting.
#[pyfunction]
pub(crate) fn open(py: Python<'_>, config: &Config) -> PyResult<Session> {
    let (config, warnings) = config.to_weft()?;
    if !warnings.is_empty() {
        let logger = py.import("logging")?.call_method1("getLogger", ("weft",))?;
        for w in warnings {
            logger.call_method1("warning", ("%s", w))?;
        }
    }
    let session = crate::gil::released(py, move || weft::open(config)).map_err(zerr)?;
    let shared = Arc::new(Shared {
        zid: session.zid(),
        session: Mutex::new(Some(session)),
        entities: Mutex::new(Vec::new()),
    });
    if let Ok(mut list) = OPEN.lock() {
        list.retain(|w| w.strong_count() > 0);
        list.push(Arc::downgrade(&shared));
    }
    Ok(Session(shared))
}

/// An open session: publishes, declares subscribers, publishers and queryables, queries.
/// Closed by `close()`, at the end of a `with` block, when dropped, or at interpreter
/// exit.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Session(Arc<Shared>);

/// The publication options of `put`, `delete`, publishers and replies.
#[derive(Default)]
pub(crate) struct PutArgs<'a, 'py> {
    pub(crate) encoding: Option<&'a Bound<'py, PyAny>>,
    pub(crate) qos: Qos,
    pub(crate) attachment: Option<&'a Bound<'py, PyAny>>,
    pub(crate) timestamp: Option<Timestamp>,
    pub(crate) source_info: Option<SourceInfo>,
    pub(crate) allowed_destination: Option<Locality>,
}

impl PutArgs<'_, '_> {
    /// These options over `base`.
    pub(crate) fn apply(&self, mut base: weft::PutOptions) -> PyResult<weft::PutOptions> {
        if self.encoding.is_some_and(|e| !e.is_none()) {
            base.encoding = encoding_text(self.encoding)?;
        }
        self.qos.apply(
            &mut base.congestion_control,
            &mut base.priority,
            &mut base.express,
        );
        if let Some(a) = to_opt_vec(self.attachment)? {
            base.attachment = Some(a);
        }
        if let Some(t) = &self.timestamp {
            base.timestamp = Some(t.0);
        }
        if let Some(s) = &self.source_info {
            base.source_info = Some(s.0);
        }
        if let Some(d) = self.allowed_destination {
            base.allowed_destination = d.into();
        }
        Ok(base)
    }
}

impl Session {
    /// Publishes `payload` on `key_expr`, or its deletion without a payload.
    fn publish_on(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        payload: Option<&Bound<'_, PyAny>>,
        args: &PutArgs<'_, '_>,
    ) -> PyResult<()> {
        let key = key_text(key_expr)?;
        let payload = payload.map(bytes_of).transpose()?;
        let options = args.apply(weft::PutOptions::default())?;
        let session = self.0.weft()?;
        publish(py, options.congestion_control, move || match payload {
            Some(p) => session.put(&key, &p, &options),
            None => session.delete(&key, &options),
        })
    }
}

#[pymethods]
impl Session {
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.0.close(py);
    }

    /// This session's id.
    fn zid(&self) -> ZenohId {
        ZenohId(self.0.zid)
    }

    /// The session's global id: its own id, with entity id 0 (weft numbers the
    /// entities of a session from 1, and names a node as a whole with 0, as in the
    /// replies to liveliness queries).
    #[getter]
    fn id(&self) -> EntityGlobalId {
        EntityGlobalId(weft::EntityGlobalId {
            zid: self.0.zid,
            eid: 0,
        })
    }

    /// Closes the session: its subscribers, publishers and queryables are undeclared,
    /// further operations raise `ZError`. Closing twice does nothing.
    fn close(&self, py: Python<'_>) {
        self.0.close(py);
    }

    /// Whether the session is closed.
    fn is_closed(&self) -> bool {
        self.0.session.lock().map_or(true, |s| s.is_none())
    }

    /// What the session knows of the network: its id, the routers and peers connected.
    #[getter]
    fn info(&self) -> crate::info::SessionInfo {
        crate::info::SessionInfo(self.0.clone())
    }

    /// The session's liveliness: tokens, and the subscribers and queries watching them.
    fn liveliness(&self) -> crate::liveliness::Liveliness {
        crate::liveliness::Liveliness(self.0.clone())
    }

    /// Declares a querier: repeated queries on `key_expr` with the options given here
    /// (`congestion_control`, `priority` and `express` are its queries' quality of
    /// service).
    #[pyo3(signature = (key_expr, *, target = None, consolidation = None, timeout = None,
        congestion_control = None, priority = None, express = None, accept_replies = None,
        allowed_destination = None))]
    #[allow(clippy::too_many_arguments)]
    fn declare_querier(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        target: Option<QueryTarget>,
        consolidation: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        congestion_control: Option<CongestionControl>,
        priority: Option<Priority>,
        express: Option<bool>,
        accept_replies: Option<ReplyKeyExpr>,
        allowed_destination: Option<Locality>,
    ) -> PyResult<crate::querier::Querier> {
        let key = key_text(key_expr)?;
        let qos = Qos::new(congestion_control, priority, express);
        let reach = Reach {
            allowed_destination,
            accept_replies,
        };
        let options = get_options(target, consolidation, timeout, qos, reach)?;
        let session = self.0.weft()?;
        let declared_options = options.clone();
        let querier =
            crate::gil::released(py, move || session.declare_querier(&key, declared_options))
                .map_err(zerr)?;
        Ok(crate::querier::Querier::new(
            self.0.clone(),
            querier,
            options,
        ))
    }

    /// `key_expr` as a `KeyExpr`, validated: weft sends keys in full, so there is nothing
    /// to declare on the network.
    fn declare_keyexpr(&self, key_expr: &Bound<'_, PyAny>) -> PyResult<KeyExpr> {
        self.0.weft()?;
        let key = key_text(key_expr)?;
        weft_keyexpr::OwnedKeyExpr::new(key.as_str())
            .map_err(|e| zerr(format!("invalid key expression `{key}`: {e}")))?;
        Ok(KeyExpr(key.into()))
    }

    /// Undeclares what `declare_keyexpr` declared: nothing to do.
    fn undeclare(&self, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        obj.downcast::<KeyExpr>()?;
        Ok(())
    }

    /// A new timestamp from this session's clock.
    fn new_timestamp(&self) -> PyResult<Timestamp> {
        Ok(Timestamp(self.0.weft()?.new_timestamp()))
    }

    /// Publishes `payload` (`bytes`, `bytearray`, `str`, `ZBytes` or any other object
    /// with the buffer protocol) on the key `key_expr`.
    #[pyo3(signature = (key_expr, payload, *, encoding = None, congestion_control = None,
        priority = None, express = None, attachment = None, timestamp = None,
        allowed_destination = None, source_info = None))]
    #[allow(clippy::too_many_arguments)]
    fn put(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        payload: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
        congestion_control: Option<CongestionControl>,
        priority: Option<Priority>,
        express: Option<bool>,
        attachment: Option<&Bound<'_, PyAny>>,
        timestamp: Option<Timestamp>,
        allowed_destination: Option<Locality>,
        source_info: Option<SourceInfo>,
    ) -> PyResult<()> {
        let qos = Qos::new(congestion_control, priority, express);
        let args = PutArgs {
            encoding,
            qos,
            attachment,
            timestamp,
            source_info,
            allowed_destination,
        };
        self.publish_on(py, key_expr, Some(payload), &args)
    }

    /// Publishes the deletion of the key `key_expr`.
    #[pyo3(signature = (key_expr, *, congestion_control = None, priority = None,
        express = None, attachment = None, timestamp = None, allowed_destination = None,
        source_info = None))]
    #[allow(clippy::too_many_arguments)]
    fn delete(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        congestion_control: Option<CongestionControl>,
        priority: Option<Priority>,
        express: Option<bool>,
        attachment: Option<&Bound<'_, PyAny>>,
        timestamp: Option<Timestamp>,
        allowed_destination: Option<Locality>,
        source_info: Option<SourceInfo>,
    ) -> PyResult<()> {
        let qos = Qos::new(congestion_control, priority, express);
        let args = PutArgs {
            qos,
            attachment,
            timestamp,
            source_info,
            allowed_destination,
            ..PutArgs::default()
        };
        self.publish_on(py, key_expr, None, &args)
    }

    /// Declares a subscriber on `key_expr`. With a callable (or `handlers.Callback`),
    /// it runs in the background until undeclared or the session closes; with a channel
    /// (the default), read it with `recv()`, `try_recv()` or by iterating, and it is
    /// undeclared when dropped.
    #[pyo3(signature = (key_expr, handler = None, *, allowed_origin = None))]
    fn declare_subscriber(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        handler: Option<&Bound<'_, PyAny>>,
        allowed_origin: Option<Locality>,
    ) -> PyResult<Subscriber> {
        let key = key_text(key_expr)?;
        let session = self.0.weft()?;
        let origin = allowed_origin.map_or(weft::Locality::Any, Into::into);
        let ((key, id), handled) =
            Handled::declare(py, Some(&self.0), handler, "Sample", |sink| {
                let s = session
                    .declare_subscriber_owned(&key, origin, move |s: weft::Sample| {
                        sink.deliver(Item::Sample(SampleBox::new(s)));
                    })
                    .map_err(zerr)?;
                Ok(((weft::SharedKey::from(s.key_expr()), s.id()), s))
            })?;
        Ok(Subscriber::new(key, id, handled))
    }

    /// Declares a queryable answering queries on `key_expr` (handlers as for
    /// `declare_subscriber`); `complete` says it answers for every key of it.
    #[pyo3(signature = (key_expr, handler = None, *, complete = false, allowed_origin = None))]
    fn declare_queryable(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        handler: Option<&Bound<'_, PyAny>>,
        complete: bool,
        allowed_origin: Option<Locality>,
    ) -> PyResult<Queryable> {
        let key = key_text(key_expr)?;
        let session = self.0.weft()?;
        let origin = allowed_origin.map_or(weft::Locality::Any, Into::into);
        let ((key, id), handled) = Handled::declare(py, Some(&self.0), handler, "Query", |sink| {
            let q = session
                .declare_queryable_from(&key, complete, origin, move |q: weft::Query| {
                    sink.deliver(Item::Query(Box::new(q)));
                })
                .map_err(zerr)?;
            Ok(((weft::SharedKey::from(q.key_expr()), q.id()), q))
        })?;
        Ok(Queryable::new(key, id, handled))
    }

    /// Declares a publisher on the key `key_expr`, with default options for its
    /// publications.
    #[pyo3(signature = (key_expr, *, encoding = None, congestion_control = None,
        priority = None, express = None, reliability = None, allowed_destination = None))]
    #[allow(clippy::too_many_arguments)]
    fn declare_publisher(
        &self,
        py: Python<'_>,
        key_expr: &Bound<'_, PyAny>,
        encoding: Option<&Bound<'_, PyAny>>,
        congestion_control: Option<CongestionControl>,
        priority: Option<Priority>,
        express: Option<bool>,
        reliability: Option<Reliability>,
        allowed_destination: Option<Locality>,
    ) -> PyResult<Publisher> {
        let key = key_text(key_expr)?;
        let mut options = PutArgs {
            encoding,
            qos: Qos::new(congestion_control, priority, express),
            allowed_destination,
            ..PutArgs::default()
        }
        .apply(weft::PutOptions::default())?;
        if let Some(r) = reliability {
            options.reliability = r.into();
        }
        let session = self.0.weft()?;
        let for_publisher = session.clone();
        let declared = crate::gil::released(py, move || {
            for_publisher.declare_publisher(&key, options.clone())
        })
        .map_err(zerr)?;
        Ok(Publisher::new(
            declared,
            session,
            self.0.clone(),
            options_of(encoding, congestion_control, priority, express, reliability)?,
        ))
    }

    /// Queries `selector` (a key expression, optionally followed by `?parameters`).
    /// Returns the replies' handler (a channel by default: iterate it to get every
    /// reply; it ends when the query is over), or `None` with a callable.
    /// `congestion_control`, `priority` and `express` are the query's quality of service.
    #[pyo3(signature = (selector, handler = None, *, target = None, consolidation = None,
        accept_replies = None, timeout = None, congestion_control = None, priority = None,
        express = None, payload = None, encoding = None, attachment = None,
        allowed_destination = None, source_info = None, cancellation_token = None))]
    #[allow(clippy::too_many_arguments)]
    fn get(
        &self,
        py: Python<'_>,
        selector: &Bound<'_, PyAny>,
        handler: Option<&Bound<'_, PyAny>>,
        target: Option<QueryTarget>,
        consolidation: Option<&Bound<'_, PyAny>>,
        accept_replies: Option<ReplyKeyExpr>,
        timeout: Option<f64>,
        congestion_control: Option<CongestionControl>,
        priority: Option<Priority>,
        express: Option<bool>,
        payload: Option<&Bound<'_, PyAny>>,
        encoding: Option<&Bound<'_, PyAny>>,
        attachment: Option<&Bound<'_, PyAny>>,
        allowed_destination: Option<Locality>,
        source_info: Option<SourceInfo>,
        cancellation_token: Option<PyRef<'_, CancellationToken>>,
    ) -> PyResult<PyObject> {
        let selector = selector.str()?.to_cow()?.into_owned();
        let qos = Qos::new(congestion_control, priority, express);
        let reach = Reach {
            allowed_destination,
            accept_replies,
        };
        let mut options = get_options(target, consolidation, timeout, qos, reach)?;
        options.source_info = source_info.map(|s| s.0);
        run_query(
            py,
            &self.0,
            selector,
            options,
            handler,
            payload,
            encoding,
            attachment,
            cancellation_token.as_deref(),
        )
    }
}

/// Runs `send`, a publication with congestion control `congestion`: with the GIL held
/// when it cannot block (`drop`), released otherwise.
pub(crate) fn publish(
    py: Python<'_>,
    congestion: weft::CongestionControl,
    send: impl FnOnce() -> Result<(), weft::SessionError> + Send,
) -> PyResult<()> {
    match congestion {
        weft::CongestionControl::Drop => crate::gil::holding_gil(py, send),
        _ => crate::gil::released(py, send),
    }
    .map_err(zerr)
}

/// The options a publisher reports (`encoding`, `priority`, ...), as given.
fn options_of(
    encoding: Option<&Bound<'_, PyAny>>,
    congestion_control: Option<CongestionControl>,
    priority: Option<Priority>,
    express: Option<bool>,
    reliability: Option<Reliability>,
) -> PyResult<crate::pubsub::Defaults> {
    let encoding = encoding_text(encoding)?;
    Ok(crate::pubsub::Defaults {
        encoding: if encoding.is_empty() {
            "zenoh/bytes".into()
        } else {
            encoding
        },
        congestion_control: congestion_control.unwrap_or(CongestionControl::Drop),
        priority: priority.unwrap_or(Priority::Data),
        express: express.unwrap_or(false),
        reliability: reliability.unwrap_or(Reliability::Reliable),
    })
}
