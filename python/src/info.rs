//! `SessionInfo`: what a session knows of the network (its id, the nodes connected, their
//! transports and links), and `WhatAmI`.

use std::sync::Arc;

use pyo3::prelude::*;

use crate::entity::{handled_methods, Handled};
use crate::error::zerr;
use crate::qos::{Reliability, SampleKind};
use crate::queue::Item;
use crate::sample::ZenohId;
use crate::session::Shared;

/// The role of a node: router, peer or client.
#[pyclass(eq, eq_int, frozen, hash, module = "weft")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum WhatAmI {
    /// A router.
    #[pyo3(name = "ROUTER")]
    Router,
    /// A peer.
    #[pyo3(name = "PEER")]
    Peer,
    /// A client.
    #[pyo3(name = "CLIENT")]
    Client,
}

#[pymethods]
impl WhatAmI {
    fn __str__(&self) -> &'static str {
        match self {
            Self::Router => "router",
            Self::Peer => "peer",
            Self::Client => "client",
        }
    }
}

impl From<WhatAmI> for weft::WhatAmI {
    fn from(w: WhatAmI) -> Self {
        match w {
            WhatAmI::Router => Self::Router,
            WhatAmI::Peer => Self::Peer,
            WhatAmI::Client => Self::Client,
        }
    }
}

impl From<weft::WhatAmI> for WhatAmI {
    fn from(w: weft::WhatAmI) -> Self {
        match w {
            weft::WhatAmI::Router => Self::Router,
            weft::WhatAmI::Peer => Self::Peer,
            weft::WhatAmI::Client => Self::Client,
        }
    }
}

/// A transport: the session's connection to another node.
#[pyclass(frozen, eq, module = "weft")]
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Transport {
    zid: weft::ZenohId,
    whatami: WhatAmI,
    qos: bool,
}

#[pymethods]
impl Transport {
    /// The other node's id.
    #[getter]
    fn zid(&self) -> ZenohId {
        ZenohId(self.zid)
    }

    /// The other node's role.
    #[getter]
    fn whatami(&self) -> WhatAmI {
        self.whatami
    }

    /// Whether it carries the 8 priorities (QoS).
    #[getter]
    fn is_qos(&self) -> bool {
        self.qos
    }

    /// Always `False`: weft's transports are unicast.
    #[getter]
    fn is_multicast(&self) -> bool {
        false
    }

    fn __repr__(&self) -> String {
        format!(
            "Transport {{ zid: {}, whatami: {}, is_qos: {}, is_multicast: false }}",
            self.zid,
            self.whatami.__str__(),
            self.qos
        )
    }
}

/// A transport that opened (`kind` `SampleKind.PUT`) or closed (`SampleKind.DELETE`).
#[pyclass(frozen, module = "weft")]
pub(crate) struct TransportEvent(pub(crate) weft::TransportEvent);

#[pymethods]
impl TransportEvent {
    /// `SampleKind.PUT` when it opened, `SampleKind.DELETE` when it closed.
    #[getter]
    fn kind(&self) -> SampleKind {
        self.0.kind.into()
    }

    /// The transport.
    #[getter]
    fn transport(&self) -> Transport {
        Transport {
            zid: self.0.zid,
            whatami: self.0.whatami.into(),
            qos: self.0.qos,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "TransportEvent {{ kind: {}, transport: {} }}",
            self.0.kind.as_str(),
            self.transport().__repr__()
        )
    }
}

/// Told the transports that open and close (`TransportEvent`s), until undeclared.
#[pyclass(frozen, module = "weft")]
pub(crate) struct TransportEventsListener {
    handled: Handled,
}

handled_methods!(TransportEventsListener, undeclare, "transport event", {});

/// One link of a transport: its main link, or one reserved for some priorities.
#[pyclass(frozen, eq, module = "weft")]
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Link {
    zid: weft::ZenohId,
    src: String,
    dst: String,
    mtu: u16,
    priorities: Option<(u8, u8)>,
}

impl Link {
    /// Whether its protocol is a byte stream (every one weft has but UDP).
    fn streamed(&self) -> bool {
        !self.dst.starts_with("udp/")
    }
}

#[pymethods]
impl Link {
    /// The other node's id.
    #[getter]
    fn zid(&self) -> ZenohId {
        ZenohId(self.zid)
    }

    /// This end, e.g. `tcp/127.0.0.1:7447`.
    #[getter]
    fn src(&self) -> String {
        self.src.clone()
    }

    /// The other end, e.g. `tcp/127.0.0.1:51234`.
    #[getter]
    fn dst(&self) -> String {
        self.dst.clone()
    }

    /// Always `None`: weft's links are unicast.
    #[getter]
    fn group(&self) -> Option<String> {
        None
    }

    /// The largest batch the link carries, as its handshake agreed.
    #[getter]
    fn mtu(&self) -> u16 {
        self.mtu
    }

    /// Whether the link is a byte stream (TCP, TLS, QUIC, Unix sockets) rather than
    /// datagrams (UDP).
    #[getter]
    fn is_streamed(&self) -> bool {
        self.streamed()
    }

    /// The network interfaces of the link: weft does not tell (an empty list).
    #[getter]
    fn interfaces(&self) -> Vec<String> {
        Vec::new()
    }

    /// Always `None`: weft does not tell who a link authenticated as.
    #[getter]
    fn auth_identifier(&self) -> Option<String> {
        None
    }

    /// The priorities it carries (highest first, 0 to 7), `None` without QoS.
    #[getter]
    fn priorities(&self) -> Option<(u8, u8)> {
        self.priorities
    }

    /// `RELIABLE` for a stream, `BEST_EFFORT` for datagrams.
    #[getter]
    fn reliability(&self) -> Reliability {
        if self.streamed() {
            Reliability::Reliable
        } else {
            Reliability::BestEffort
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Link {{ zid: {}, src: {}, dst: {}, mtu: {}, priorities: {:?} }}",
            self.zid, self.src, self.dst, self.mtu, self.priorities
        )
    }
}

/// A link that was added (`kind` `SampleKind.PUT`) or removed (`SampleKind.DELETE`).
#[pyclass(frozen, module = "weft")]
pub(crate) struct LinkEvent(pub(crate) weft::LinkEvent);

#[pymethods]
impl LinkEvent {
    /// `SampleKind.PUT` when it was added, `SampleKind.DELETE` when it was removed.
    #[getter]
    fn kind(&self) -> SampleKind {
        self.0.kind.into()
    }

    /// The link.
    #[getter]
    fn link(&self) -> Link {
        Link {
            zid: self.0.zid,
            src: self.0.src.clone(),
            dst: self.0.dst.clone(),
            mtu: self.0.mtu,
            priorities: self.0.priorities,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "LinkEvent {{ kind: {}, link: {} }}",
            self.0.kind.as_str(),
            self.link().__repr__()
        )
    }
}

/// Told the links that are added and removed (`LinkEvent`s), until undeclared.
#[pyclass(frozen, module = "weft")]
pub(crate) struct LinkEventsListener {
    handled: Handled,
}

handled_methods!(LinkEventsListener, undeclare, "link event", {});

/// What a session knows of the network.
#[pyclass(frozen, module = "weft")]
pub(crate) struct SessionInfo(pub(crate) Arc<Shared>);

impl SessionInfo {
    /// The nodes connected, as weft's admin information describes them.
    fn faces(&self, py: Python<'_>) -> PyResult<Vec<weft::FaceInfo>> {
        let session = self.0.weft()?;
        Ok(crate::gil::released(py, move || session.admin()).faces)
    }

    fn connected(&self, py: Python<'_>, role: weft::WhatAmI) -> PyResult<Vec<ZenohId>> {
        Ok(self
            .faces(py)?
            .iter()
            .filter(|f| f.whatami == role)
            .map(|f| ZenohId(f.zid))
            .collect())
    }
}

#[pymethods]
impl SessionInfo {
    /// Declares a listener told of every transport that opens or closes from now on
    /// (and, with `history`, first of each one open already); handlers as for
    /// `Session.declare_subscriber`.
    #[pyo3(signature = (handler = None, *, history = None))]
    fn declare_transport_events_listener(
        &self,
        py: Python<'_>,
        handler: Option<&Bound<'_, PyAny>>,
        history: Option<bool>,
    ) -> PyResult<TransportEventsListener> {
        let session = self.0.weft()?;
        let history = history.unwrap_or(false);
        let ((), handled) =
            Handled::declare(py, Some(&self.0), handler, "TransportEvent", move |sink| {
                let listener = session
                    .declare_transport_events_listener(history, move |e| {
                        sink.deliver(Item::Transport(Box::new(e)));
                    })
                    .map_err(zerr)?;
                Ok(((), listener))
            })?;
        Ok(TransportEventsListener { handled })
    }

    /// Declares a listener told of every link that is added or removed from now on: a
    /// transport's main link as the transport opens or closes, and each link reserved
    /// for some priorities as it comes and goes (with `history`, first of each link
    /// open already); handlers as for `Session.declare_subscriber`.
    #[pyo3(signature = (handler = None, *, history = None))]
    fn declare_link_events_listener(
        &self,
        py: Python<'_>,
        handler: Option<&Bound<'_, PyAny>>,
        history: Option<bool>,
    ) -> PyResult<LinkEventsListener> {
        let session = self.0.weft()?;
        let history = history.unwrap_or(false);
        let ((), handled) =
            Handled::declare(py, Some(&self.0), handler, "LinkEvent", move |sink| {
                let listener = session
                    .declare_link_events_listener(history, move |e| {
                        sink.deliver(Item::Link(Box::new(e)));
                    })
                    .map_err(zerr)?;
                Ok(((), listener))
            })?;
        Ok(LinkEventsListener { handled })
    }

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

    /// The session's transports, one per node connected.
    fn transports(&self, py: Python<'_>) -> PyResult<Vec<Transport>> {
        Ok(self
            .faces(py)?
            .iter()
            .map(|f| Transport {
                zid: f.zid,
                whatami: f.whatami.into(),
                qos: f.qos,
            })
            .collect())
    }

    /// The links of its transports: each transport's main link, then those reserved for
    /// some priorities.
    fn links(&self, py: Python<'_>) -> PyResult<Vec<Link>> {
        let mut links = Vec::new();
        for f in self.faces(py)? {
            links.push(Link {
                zid: f.zid,
                src: f.local_link.clone(),
                dst: f.link.clone(),
                mtu: f.batch_size,
                priorities: f.qos.then_some((0, 7)),
            });
            links.extend(f.priority_links.iter().map(|p| Link {
                zid: f.zid,
                src: p.local_link.clone(),
                dst: p.link.clone(),
                mtu: f.batch_size,
                priorities: Some(p.priorities),
            }));
        }
        Ok(links)
    }
}
