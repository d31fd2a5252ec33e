//! `SessionInfo`: what a session knows of the network.

use std::sync::Arc;

use pyo3::prelude::*;

use crate::sample::ZenohId;
use crate::session::Shared;

/// What a session knows of the network.
#[pyclass(frozen, module = "weft")]
pub(crate) struct SessionInfo(pub(crate) Arc<Shared>);

impl SessionInfo {
    fn connected(&self, py: Python<'_>, role: weft::WhatAmI) -> PyResult<Vec<ZenohId>> {
        let session = self.0.weft()?;
        let admin = py.allow_threads(move || session.admin());
        Ok(admin
            .faces
            .iter()
            .filter(|f| f.whatami == role)
            .map(|f| ZenohId(f.zid))
            .collect())
    }
}

#[pymethods]
impl SessionInfo {
    /// The session's id.
    fn zid(&self) -> ZenohId {
        ZenohId(self.0.zid)
    }

    /// The ids of the routers connected to the session.
    fn routers_zid(&self, py: Python<'_>) -> PyResult<Vec<ZenohId>> {
        self.connected(py, weft::WhatAmI::Router)
    }

    /// The ids of the peers connected to the session.
    fn peers_zid(&self, py: Python<'_>) -> PyResult<Vec<ZenohId>> {
        self.connected(py, weft::WhatAmI::Peer)
    }
}
