//! `scout`: finding nodes by multicast scouting, `Scout` (read like a subscriber, ended by
//! `stop()`) and `Hello` (a node that answered).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::config::Config;
use crate::entity::{handled_methods, Handled};
use crate::error::zerr;
use crate::info::WhatAmI;
use crate::queue::Item;
use crate::sample::ZenohId;

/// The roles scouted when none are given (as zenoh-python): routers and peers.
const DEFAULT_WHAT: &str = "router|peer";

/// A set of roles to scout for, e.g. `WhatAmIMatcher("peer|router")`, or built with
/// `WhatAmIMatcher.empty().router().peer()`.
#[pyclass(frozen, eq, module = "weft")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct WhatAmIMatcher(weft::WhatAmIMatcher);

impl WhatAmIMatcher {
    fn with(self, role: weft::WhatAmI) -> Self {
        Self(weft::WhatAmIMatcher(self.0 .0 | role.bit()))
    }
}

#[pymethods]
impl WhatAmIMatcher {
    /// The roles named in `matcher` (`"router"`, `"peer"`, `"client"`, joined by `|`);
    /// none without it.
    #[new]
    #[pyo3(signature = (matcher = None))]
    fn new(matcher: Option<&str>) -> PyResult<Self> {
        matcher
            .map_or(Ok(weft::WhatAmIMatcher(0)), text_roles)
            .map(Self)
    }

    /// A matcher of no role.
    #[classmethod]
    fn empty(_cls: &Bound<'_, pyo3::types::PyType>) -> Self {
        Self(weft::WhatAmIMatcher(0))
    }

    /// This matcher and routers.
    fn router(&self) -> Self {
        self.with(weft::WhatAmI::Router)
    }

    /// This matcher and peers.
    fn peer(&self) -> Self {
        self.with(weft::WhatAmI::Peer)
    }

    /// This matcher and clients.
    fn client(&self) -> Self {
        self.with(weft::WhatAmI::Client)
    }

    /// Whether it matches no role.
    fn is_empty(&self) -> bool {
        self.0 .0 == 0
    }

    /// Whether it matches `whatami`.
    fn matches(&self, whatami: WhatAmI) -> bool {
        self.0.matches(whatami.into())
    }

    fn __str__(&self) -> String {
        self.0
            .roles()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join("|")
    }

    fn __repr__(&self) -> String {
        // As zenoh-python shows it: the role bits with the set's marker bit.
        format!("WhatAmIMatcher({})", self.0 .0 | 0x80)
    }
}

/// A node that answered a scout: its id, role and locators.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Hello(pub(crate) weft::Hello);

#[pymethods]
impl Hello {
    /// Its role.
    #[getter]
    fn whatami(&self) -> WhatAmI {
        self.0.whatami.into()
    }

    /// Its id.
    #[getter]
    fn zid(&self) -> ZenohId {
        ZenohId(self.0.zid)
    }

    /// Where it can be reached, e.g. `tcp/10.0.0.1:7447`.
    #[getter]
    fn locators(&self) -> Vec<String> {
        self.0.locators.clone()
    }

    fn __str__(&self) -> String {
        format!(
            "Hello {{ zid: {}, whatami: {}, locators: {:?} }}",
            self.0.zid, self.0.whatami, self.0.locators
        )
    }
}

/// A scout under way: `recv()`, `try_recv()` and iteration read its `Hello`s with a
/// channel handler; `stop()` (or the end of a `with` block, or dropping it with a
/// channel) ends it.
#[pyclass(frozen, module = "weft")]
pub(crate) struct Scout {
    handled: Handled,
}

handled_methods!(Scout, stop, "hello", {});

/// The roles named by `what`: `None` (routers and peers), a `WhatAmI`, or text such as
/// `"peer|router"`.
fn roles(what: Option<&Bound<'_, PyAny>>) -> PyResult<weft::WhatAmIMatcher> {
    let Some(what) = what.filter(|w| !w.is_none()) else {
        return text_roles(DEFAULT_WHAT);
    };
    if let Ok(role) = what.extract::<WhatAmI>() {
        return Ok(weft::WhatAmIMatcher(weft::WhatAmI::from(role).bit()));
    }
    if let Ok(matcher) = what.extract::<WhatAmIMatcher>() {
        return Ok(matcher.0);
    }
    match what.extract::<String>() {
        Ok(text) => text_roles(&text),
        Err(_) => Err(PyTypeError::new_err(format!(
            "invalid `what` {}: expected a WhatAmI, a WhatAmIMatcher or text such as \"peer|router\"",
            what.repr()?
        ))),
    }
}

/// The roles of text such as `"peer|router"`.
fn text_roles(text: &str) -> PyResult<weft::WhatAmIMatcher> {
    let mut bits = 0;
    for name in text.split('|').map(str::trim) {
        bits |= match name {
            "router" => weft::WhatAmI::Router.bit(),
            "peer" => weft::WhatAmI::Peer.bit(),
            "client" => weft::WhatAmI::Client.bit(),
            _ => return Err(zerr(format!("invalid role `{name}` in `{text}`"))),
        };
    }
    Ok(weft::WhatAmIMatcher(bits))
}

/// Scouts for the nodes of the roles in `what` (routers and peers by default) with the
/// scouting settings of `config`, until the returned `Scout` is stopped; each node that
/// answers is handed to `handler` once, as a `Hello` (handlers as for
/// `Session.declare_subscriber`).
#[pyfunction]
#[pyo3(signature = (handler = None, what = None, config = None))]
pub(crate) fn scout(
    py: Python<'_>,
    handler: Option<&Bound<'_, PyAny>>,
    what: Option<&Bound<'_, PyAny>>,
    config: Option<&Config>,
) -> PyResult<Scout> {
    let what = roles(what)?;
    let config = match config {
        Some(c) => c.to_weft()?.0,
        None => weft::Config::default(),
    };
    let ((), handled) = Handled::declare(py, None, handler, "Hello", |sink| {
        let scout = weft::scout_background(what, &config, move |h| {
            sink.deliver(Item::Hello(Box::new(h.clone())));
        })
        .map_err(zerr)?;
        Ok(((), scout))
    })?;
    Ok(Scout { handled })
}
