//! `Sample` (what a subscriber receives), `Timestamp` and `ZenohId`.

use pyo3::prelude::*;

use crate::bytes::ZBytes;
use crate::encoding::Encoding;
use crate::keyexpr::KeyExpr;
use crate::qos::{CongestionControl, Priority, SampleKind};

/// A value (or deletion) published on a key.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Sample {
    key_expr: weft::SharedKey,
    kind: weft::SampleKind,
    payload: ZBytes,
    encoding: Encoding,
    timestamp: Option<weft::Timestamp>,
    attachment: Option<ZBytes>,
    priority: weft::Priority,
    congestion_control: weft::CongestionControl,
    express: bool,
    source_info: Option<weft::SourceInfo>,
}

impl From<weft::Sample> for Sample {
    fn from(s: weft::Sample) -> Self {
        Self {
            key_expr: s.key_expr,
            kind: s.kind,
            payload: ZBytes::from_payload(s.payload),
            encoding: Encoding(s.encoding),
            timestamp: s.timestamp,
            attachment: s.attachment.map(|a| ZBytes::from_payload(a.into())),
            priority: s.priority,
            congestion_control: s.congestion_control,
            express: s.express,
            source_info: s.source_info,
        }
    }
}

#[pymethods]
impl Sample {
    /// The key.
    #[getter]
    fn key_expr(&self) -> KeyExpr {
        KeyExpr(self.key_expr.clone())
    }

    /// The entity that published it and its sequence number there, when the publisher
    /// said so (`None` otherwise).
    #[getter]
    fn source_info(&self) -> Option<SourceInfo> {
        self.source_info.map(SourceInfo)
    }

    /// The value (empty for a deletion).
    #[getter]
    fn payload(&self) -> ZBytes {
        self.payload.clone()
    }

    /// `SampleKind.PUT` or `SampleKind.DELETE`.
    #[getter]
    fn kind(&self) -> SampleKind {
        self.kind.into()
    }

    /// The value's encoding.
    #[getter]
    fn encoding(&self) -> Encoding {
        self.encoding.clone()
    }

    /// When it was produced, if timestamped.
    #[getter]
    fn timestamp(&self) -> Option<Timestamp> {
        self.timestamp.map(Timestamp)
    }

    /// User bytes attached to it, if any.
    #[getter]
    fn attachment(&self) -> Option<ZBytes> {
        self.attachment.clone()
    }

    /// Its priority.
    #[getter]
    fn priority(&self) -> Priority {
        self.priority.into()
    }

    /// Its congestion control.
    #[getter]
    fn congestion_control(&self) -> CongestionControl {
        self.congestion_control.into()
    }

    /// Whether it was sent at once, without batching.
    #[getter]
    fn express(&self) -> bool {
        self.express
    }

    fn __repr__(&self) -> String {
        format!(
            "Sample(key_expr={:?}, kind={}, payload={:?}, encoding={:?})",
            self.key_expr.as_str(),
            self.kind.as_str(),
            self.payload.0.as_slice(),
            &*self.encoding.0
        )
    }
}

/// A hybrid-logical-clock timestamp: a time and the id of the clock that made it.
#[pyclass(frozen, eq, ord, hash, module = "weft")]
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Timestamp(pub(crate) weft::Timestamp);

#[pymethods]
impl Timestamp {
    /// The time, as a timezone-aware UTC `datetime`.
    fn get_time<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let datetime = py.import("datetime")?;
        let utc = datetime.getattr("timezone")?.getattr("utc")?;
        let secs = f64::from(self.0.seconds()) + f64::from(self.0.subsec_nanos()) / 1e9;
        datetime
            .getattr("datetime")?
            .call_method1("fromtimestamp", (secs, utc))
    }

    /// The id of the clock that made it.
    fn get_id(&self) -> ZenohId {
        ZenohId(self.0.id)
    }

    /// The time as RFC 3339 with nanoseconds, then `/` and the clock's id.
    fn to_string_rfc3339_lossy(&self) -> String {
        format!("{}/{}", self.0.utc(), self.0.id)
    }

    fn __str__(&self) -> String {
        format!("{}/{}", self.0.time, self.0.id)
    }
}

/// The globally unique id of a weft or Zenoh node (hexadecimal as text).
#[pyclass(frozen, eq, hash, module = "weft")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct ZenohId(pub(crate) weft::ZenohId);

/// Where a sample comes from: the publishing entity's id, and the sample's sequence
/// number from it.
#[pyclass(frozen, eq, hash, module = "weft")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SourceInfo(pub(crate) weft::SourceInfo);

#[pymethods]
impl SourceInfo {
    /// The source `source_id` (e.g. a publisher's `id`) and sequence number `source_sn`.
    #[new]
    fn new(source_id: EntityGlobalId, source_sn: u32) -> Self {
        Self(weft::SourceInfo {
            zid: source_id.0.zid,
            eid: source_id.0.eid,
            sn: source_sn,
        })
    }

    /// The publishing entity.
    #[getter]
    fn source_id(&self) -> EntityGlobalId {
        EntityGlobalId(weft::EntityGlobalId {
            zid: self.0.zid,
            eid: self.0.eid,
        })
    }

    /// The sample's sequence number from that entity.
    #[getter]
    fn source_sn(&self) -> u32 {
        self.0.sn
    }

    fn __repr__(&self) -> String {
        format!(
            "SourceInfo {{ source_id: {}:{}, source_sn: {} }}",
            self.0.zid, self.0.eid, self.0.sn
        )
    }
}

/// The globally unique id of an entity: its session's id, and its id in that session.
#[pyclass(frozen, eq, hash, module = "weft")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct EntityGlobalId(pub(crate) weft::EntityGlobalId);

#[pymethods]
impl EntityGlobalId {
    /// The id of the entity's session.
    #[getter]
    fn zid(&self) -> ZenohId {
        ZenohId(self.0.zid)
    }

    /// The entity's id in its session.
    #[getter]
    fn eid(&self) -> u32 {
        self.0.eid
    }

    fn __repr__(&self) -> String {
        format!(
            "EntityGlobalId {{ zid: {}, eid: {} }}",
            self.0.zid, self.0.eid
        )
    }
}

#[pymethods]
impl ZenohId {
    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        format!("ZenohId({})", self.0)
    }
}
