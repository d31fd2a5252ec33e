//! weft's Python binding: the zenoh-python 1.x API (`open`, `Session`, `Config`,
//! subscribers, publishers, queryables, `get`, handlers) over the weft library, built as
//! the extension module `weft._weft` (one abi3 wheel for CPython 3.9 and later).
//!
//! Every blocking call releases the GIL; weft's threads never take it: Python callbacks
//! run on threads of the binding's, which stop entering Python once the interpreter is
//! exiting (see the modules `gil` and `dispatch`).

// The only module with unsafe code: CPython's buffer protocol for `ZBytes`.
#[allow(unsafe_code)]
mod buffer;
mod bytes;
mod cancel;
mod config;
mod dispatch;
mod encoding;
mod entity;
mod error;
mod gil;
mod handlers;
mod info;
mod keyexpr;
mod liveliness;
mod log;
mod matching;
mod pubsub;
mod qos;
mod querier;
mod query;
mod queue;
mod reply;
mod sample;
mod scout;
mod selector;
mod session;

use pyo3::prelude::*;

/// The extension module `weft._weft`; the package `weft` re-exports it.
#[pymodule]
fn _weft(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ZError", py.get_type::<error::ZError>())?;
    m.add_class::<config::Config>()?;
    m.add_class::<cancel::CancellationToken>()?;
    m.add_class::<session::Session>()?;
    m.add_class::<pubsub::Subscriber>()?;
    m.add_class::<pubsub::Publisher>()?;
    m.add_class::<query::Queryable>()?;
    m.add_class::<querier::Querier>()?;
    m.add_class::<info::SessionInfo>()?;
    m.add_class::<info::Transport>()?;
    m.add_class::<info::TransportEvent>()?;
    m.add_class::<info::TransportEventsListener>()?;
    m.add_class::<info::LinkEvent>()?;
    m.add_class::<info::LinkEventsListener>()?;
    m.add_class::<info::Link>()?;
    m.add_class::<info::WhatAmI>()?;
    m.add_class::<liveliness::Liveliness>()?;
    m.add_class::<liveliness::Token>()?;
    m.add_class::<query::Query>()?;
    m.add_class::<scout::Scout>()?;
    m.add_class::<scout::Hello>()?;
    m.add_class::<scout::WhatAmIMatcher>()?;
    m.add_class::<matching::MatchingStatus>()?;
    m.add_class::<matching::MatchingListener>()?;
    m.add_class::<reply::Reply>()?;
    m.add_class::<reply::ReplyError>()?;
    m.add_class::<selector::Selector>()?;
    m.add_class::<selector::Parameters>()?;
    m.add_class::<sample::Sample>()?;
    m.add_class::<sample::Timestamp>()?;
    m.add_class::<sample::ZenohId>()?;
    m.add_class::<sample::EntityGlobalId>()?;
    m.add_class::<sample::SourceInfo>()?;
    m.add("ZBytes", buffer::init(py)?)?;
    m.add_class::<encoding::Encoding>()?;
    m.add_class::<keyexpr::KeyExpr>()?;
    m.add_class::<qos::Priority>()?;
    m.add_class::<qos::CongestionControl>()?;
    m.add_class::<qos::Reliability>()?;
    m.add_class::<qos::SampleKind>()?;
    m.add_class::<qos::QueryTarget>()?;
    m.add_class::<qos::ConsolidationMode>()?;
    m.add_class::<qos::Locality>()?;
    m.add_class::<qos::ReplyKeyExpr>()?;
    m.add_class::<handlers::DefaultHandler>()?;
    m.add_class::<handlers::FifoChannel>()?;
    m.add_class::<handlers::RingChannel>()?;
    m.add_class::<handlers::Callback>()?;
    m.add_class::<handlers::Handler>()?;
    m.add_function(wrap_pyfunction!(session::open, m)?)?;
    m.add_function(wrap_pyfunction!(scout::scout, m)?)?;
    m.add_function(wrap_pyfunction!(gil::shutdown, m)?)?;
    m.add_function(wrap_pyfunction!(log::try_init_log_from_env, m)?)?;
    m.add_function(wrap_pyfunction!(log::init_log_from_env_or, m)?)?;
    Ok(())
}
