//! The enumerations of zenoh-python: priorities, congestion control, reliability, sample
//! kinds, query targets and consolidation modes, and their weft counterparts.

use pyo3::prelude::*;

/// The priority of a message; `DATA` by default.
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Priority {
    /// Highest priority.
    #[pyo3(name = "REAL_TIME")]
    RealTime = 1,
    /// Interactive, high.
    #[pyo3(name = "INTERACTIVE_HIGH")]
    InteractiveHigh = 2,
    /// Interactive, low.
    #[pyo3(name = "INTERACTIVE_LOW")]
    InteractiveLow = 3,
    /// Data, high.
    #[pyo3(name = "DATA_HIGH")]
    DataHigh = 4,
    /// Data: the default.
    #[pyo3(name = "DATA")]
    Data = 5,
    /// Data, low.
    #[pyo3(name = "DATA_LOW")]
    DataLow = 6,
    /// Lowest priority.
    #[pyo3(name = "BACKGROUND")]
    Background = 7,
}

#[pymethods]
impl Priority {
    /// The default priority (`DATA`).
    #[classattr]
    const DEFAULT: Self = Self::Data;
    /// The lowest priority (`BACKGROUND`).
    #[classattr]
    const MIN: Self = Self::Background;
    /// The highest priority (`REAL_TIME`).
    #[classattr]
    const MAX: Self = Self::RealTime;
}

impl From<Priority> for weft::Priority {
    fn from(p: Priority) -> Self {
        match p {
            Priority::RealTime => Self::RealTime,
            Priority::InteractiveHigh => Self::InteractiveHigh,
            Priority::InteractiveLow => Self::InteractiveLow,
            Priority::DataHigh => Self::DataHigh,
            Priority::Data => Self::Data,
            Priority::DataLow => Self::DataLow,
            Priority::Background => Self::Background,
        }
    }
}

impl From<weft::Priority> for Priority {
    fn from(p: weft::Priority) -> Self {
        match p {
            weft::Priority::Control | weft::Priority::RealTime => Self::RealTime,
            weft::Priority::InteractiveHigh => Self::InteractiveHigh,
            weft::Priority::InteractiveLow => Self::InteractiveLow,
            weft::Priority::DataHigh => Self::DataHigh,
            weft::Priority::Data => Self::Data,
            weft::Priority::DataLow => Self::DataLow,
            weft::Priority::Background => Self::Background,
        }
    }
}

/// What to do with a message when the link is congested; `DROP` by default.
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CongestionControl {
    /// Drop the message.
    #[pyo3(name = "DROP")]
    Drop,
    /// Wait until there is room.
    #[pyo3(name = "BLOCK")]
    Block,
    /// Wait for the first message only.
    #[pyo3(name = "BLOCK_FIRST")]
    BlockFirst,
}

#[pymethods]
impl CongestionControl {
    /// The default (`DROP`).
    #[classattr]
    const DEFAULT: Self = Self::Drop;
}

impl From<CongestionControl> for weft::CongestionControl {
    fn from(c: CongestionControl) -> Self {
        match c {
            CongestionControl::Drop => Self::Drop,
            CongestionControl::Block => Self::Block,
            CongestionControl::BlockFirst => Self::BlockFirst,
        }
    }
}

impl From<weft::CongestionControl> for CongestionControl {
    fn from(c: weft::CongestionControl) -> Self {
        match c {
            weft::CongestionControl::Drop => Self::Drop,
            weft::CongestionControl::Block => Self::Block,
            weft::CongestionControl::BlockFirst => Self::BlockFirst,
        }
    }
}

/// Whether messages may be lost (`BEST_EFFORT`) or not (`RELIABLE`, the default).
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reliability {
    /// May be dropped under congestion.
    #[pyo3(name = "BEST_EFFORT")]
    BestEffort,
    /// Never dropped by the transport.
    #[pyo3(name = "RELIABLE")]
    Reliable,
}

#[pymethods]
impl Reliability {
    /// The default (`RELIABLE`).
    #[classattr]
    const DEFAULT: Self = Self::Reliable;
}

impl From<Reliability> for weft::Reliability {
    fn from(r: Reliability) -> Self {
        match r {
            Reliability::BestEffort => Self::BestEffort,
            Reliability::Reliable => Self::Reliable,
        }
    }
}

/// Whether a sample carries a value (`PUT`) or the deletion of a key (`DELETE`).
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SampleKind {
    /// A value was put.
    #[pyo3(name = "PUT")]
    Put,
    /// The key was deleted.
    #[pyo3(name = "DELETE")]
    Delete,
}

impl From<weft::SampleKind> for SampleKind {
    fn from(k: weft::SampleKind) -> Self {
        match k {
            weft::SampleKind::Put => Self::Put,
            weft::SampleKind::Delete => Self::Delete,
        }
    }
}

/// Which queryables a query goes to; `BEST_MATCHING` by default.
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueryTarget {
    /// The queryables best placed to answer.
    #[pyo3(name = "BEST_MATCHING")]
    BestMatching,
    /// Every matching queryable.
    #[pyo3(name = "ALL")]
    All,
    /// Every matching queryable that declared itself complete.
    #[pyo3(name = "ALL_COMPLETE")]
    AllComplete,
}

#[pymethods]
impl QueryTarget {
    /// The default (`BEST_MATCHING`).
    #[classattr]
    const DEFAULT: Self = Self::BestMatching;
}

impl From<QueryTarget> for weft::QueryTarget {
    fn from(t: QueryTarget) -> Self {
        match t {
            QueryTarget::BestMatching => Self::BestMatching,
            QueryTarget::All => Self::All,
            QueryTarget::AllComplete => Self::AllComplete,
        }
    }
}

/// How the replies to a query are consolidated; `AUTO` (the latest value per key) by
/// default.
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ConsolidationMode {
    /// Let weft choose (as `LATEST`).
    #[pyo3(name = "AUTO")]
    Auto,
    /// Every reply is delivered.
    #[pyo3(name = "NONE")]
    None,
    /// A reply is delivered only if newer than the last one delivered for its key.
    #[pyo3(name = "MONOTONIC")]
    Monotonic,
    /// Only the latest reply per key, once all arrived.
    #[pyo3(name = "LATEST")]
    Latest,
}

#[pymethods]
impl ConsolidationMode {
    /// The default (`AUTO`).
    #[classattr]
    const DEFAULT: Self = Self::Auto;
}

impl From<ConsolidationMode> for weft::Consolidation {
    fn from(c: ConsolidationMode) -> Self {
        match c {
            ConsolidationMode::Auto => Self::Auto,
            ConsolidationMode::None => Self::None,
            ConsolidationMode::Monotonic => Self::Monotonic,
            ConsolidationMode::Latest => Self::Latest,
        }
    }
}

/// The quality of service an operation may be given (`congestion_control`, `priority`,
/// `express`); what is not given stays as it was.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Qos {
    congestion_control: Option<CongestionControl>,
    priority: Option<Priority>,
    express: Option<bool>,
}

impl Qos {
    /// The options as given.
    pub(crate) fn new(
        congestion_control: Option<CongestionControl>,
        priority: Option<Priority>,
        express: Option<bool>,
    ) -> Self {
        Self {
            congestion_control,
            priority,
            express,
        }
    }

    /// Sets what was given in an operation's options (a publication's or a query's).
    pub(crate) fn apply(
        &self,
        congestion_control: &mut weft::CongestionControl,
        priority: &mut weft::Priority,
        express: &mut bool,
    ) {
        if let Some(c) = self.congestion_control {
            *congestion_control = c.into();
        }
        if let Some(p) = self.priority {
            *priority = p.into();
        }
        if let Some(x) = self.express {
            *express = x;
        }
    }
}

/// Where publications and queries may go, and where subscribers' samples and
/// queryables' queries may come from: this session (`SESSION_LOCAL`), other nodes
/// (`REMOTE`), or both (`ANY`, the default).
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Locality {
    /// This session only.
    #[pyo3(name = "SESSION_LOCAL")]
    SessionLocal,
    /// Other nodes only.
    #[pyo3(name = "REMOTE")]
    Remote,
    /// Both.
    #[pyo3(name = "ANY")]
    Any,
}

#[pymethods]
impl Locality {
    /// The default (`ANY`).
    #[classattr]
    const DEFAULT: Self = Self::Any;
}

impl From<Locality> for weft::Locality {
    fn from(l: Locality) -> Self {
        match l {
            Locality::SessionLocal => Self::SessionLocal,
            Locality::Remote => Self::Remote,
            Locality::Any => Self::Any,
        }
    }
}

/// Which replies a query accepts: on keys intersecting its own (`MATCHING_QUERY`, the
/// default), or on any key (`ANY`).
#[pyclass(eq, eq_int, frozen, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyKeyExpr {
    /// Replies on any key.
    #[pyo3(name = "ANY")]
    Any,
    /// Replies on keys intersecting the query's.
    #[pyo3(name = "MATCHING_QUERY")]
    MatchingQuery,
}

#[pymethods]
impl ReplyKeyExpr {
    /// The default (`MATCHING_QUERY`).
    #[classattr]
    const DEFAULT: Self = Self::MatchingQuery;
}

impl From<ReplyKeyExpr> for weft::ReplyKeyExpr {
    fn from(r: ReplyKeyExpr) -> Self {
        match r {
            ReplyKeyExpr::Any => Self::Any,
            ReplyKeyExpr::MatchingQuery => Self::MatchingQuery,
        }
    }
}

impl From<weft::ReplyKeyExpr> for ReplyKeyExpr {
    fn from(r: weft::ReplyKeyExpr) -> Self {
        match r {
            weft::ReplyKeyExpr::Any => Self::Any,
            weft::ReplyKeyExpr::MatchingQuery => Self::MatchingQuery,
        }
    }
}
