//! Multicast scouting: finding nodes without knowing their addresses.
//!
//! A node that scouts sends a Scout (the roles it looks for) to the multicast group
//! (`scouting.multicast.address`, `224.0.0.224:7446` by default); every node of a
//! matching role that answers Scouts (`scouting.multicast.listen`) sends back a Hello
//! with its id, its role and its locators, to the Scout's source address.
//!
//! [`scout`] lists the nodes that answer, [`scout_background`] tells of them until
//! stopped; sessions use the same machinery to answer
//! Scouts and, per `scouting.multicast.autoconnect`, to connect to what they discover.
//! The decisions (`message`, `locators`) are kept apart from the sockets (`socket`).

mod background;
pub mod locators;
pub mod message;
pub(crate) mod responder;
pub(crate) mod socket;

use std::collections::HashSet;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use thiserror::Error;
use weft_proto::core::{WhatAmIMatcher, ZenohId};

use crate::config::{Config, ScoutingConfig};
pub use background::{scout_background, Scout};
pub use message::{DatagramError, Hello};

/// Pause between the first Scouts; doubled after each, up to [`SCOUT_PERIOD_MAX`].
pub(crate) const SCOUT_PERIOD_MIN: Duration = Duration::from_millis(500);
/// How often a scout running until stopped checks whether it is.
pub(crate) const STOP_CHECK: Duration = Duration::from_millis(100);

/// Longest pause between two Scouts.
pub(crate) const SCOUT_PERIOD_MAX: Duration = Duration::from_secs(8);

/// Why scouting could not run.
#[derive(Debug, Error)]
pub enum ScoutError {
    /// `scouting.multicast.enabled` is false.
    #[error("multicast scouting is disabled (scouting.multicast.enabled is false)")]
    Disabled,
    /// The scouting socket could not be opened.
    #[error("cannot open the scouting socket: {0}")]
    Socket(#[source] io::Error),
    /// The Scout could not be sent (no route to the group, for instance).
    #[error("cannot send a Scout to {group}: {source}")]
    Send {
        /// The multicast group.
        group: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// What [`Scouter::try_recv`] found.
#[derive(Debug)]
pub(crate) enum Received {
    /// A Hello.
    Hello(Hello),
    /// A datagram that is not a valid Hello.
    Other,
    /// Nothing waits.
    Nothing,
}

/// Sends Scouts and receives the Hellos answering them.
pub(crate) struct Scouter {
    socket: UdpSocket,
    group: SocketAddr,
    scout: Vec<u8>,
    buf: Vec<u8>,
}

impl Scouter {
    /// A scouter for nodes of the roles in `what`.
    pub(crate) fn open(
        what: WhatAmIMatcher,
        cfg: &ScoutingConfig,
        zid: Option<ZenohId>,
    ) -> Result<Self, ScoutError> {
        Ok(Self {
            socket: socket::unicast(cfg).map_err(ScoutError::Socket)?,
            group: cfg.address,
            scout: message::scout_datagram(what, zid),
            buf: vec![0; message::MAX_DATAGRAM],
        })
    }

    /// Sends one Scout to the group.
    pub(crate) fn send(&self) -> Result<(), ScoutError> {
        self.socket
            .send_to(&self.scout, self.group)
            .map(|_| ())
            .map_err(|source| ScoutError::Send {
                group: self.group,
                source,
            })
    }

    /// Sends Scouts (at growing intervals) until `end`, or until `stop` says so (asked at
    /// least every [`STOP_CHECK`]), calling `on_hello` once per node of a role in `what`
    /// that answers (its first Hello); stops early when `on_hello` breaks.
    pub(crate) fn run(
        &mut self,
        what: WhatAmIMatcher,
        end: Option<Instant>,
        stop: &dyn Fn() -> bool,
        on_hello: &mut dyn FnMut(&Hello) -> ControlFlow<()>,
    ) -> Result<(), ScoutError> {
        let mut seen = HashSet::new();
        let mut period = SCOUT_PERIOD_MIN;
        while end.is_none_or(|end| Instant::now() < end) && !stop() {
            self.send()?;
            let now = Instant::now();
            let next = end.map_or(now + period, |end| (now + period).min(end));
            period = (period * 2).min(SCOUT_PERIOD_MAX);
            while Instant::now() < next {
                if stop() {
                    return Ok(());
                }
                let Some(hello) = self.recv(next.min(Instant::now() + STOP_CHECK)) else {
                    continue;
                };
                if what.matches(hello.whatami)
                    && seen.insert(hello.zid)
                    && on_hello(&hello).is_break()
                {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Makes [`Scouter::try_recv`] return at once when nothing waits (its caller waits for
    /// [`Scouter::raw_fd`] to be readable).
    pub(crate) fn set_nonblocking(&self) -> io::Result<()> {
        self.socket.set_nonblocking(true)
    }

    /// The socket the Hellos come to.
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.socket)
    }

    /// The next datagram waiting, without waiting (see [`Scouter::set_nonblocking`]):
    /// a Hello, something else (skipped, logged at debug level), or nothing.
    pub(crate) fn try_recv(&mut self) -> Received {
        loop {
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    return match message::read_hello(&self.buf[..n]) {
                        Ok(h) => Received::Hello(h),
                        Err(e) => {
                            tracing::debug!("scouting: ignored a datagram from {from}: {e}");
                            Received::Other
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    if e.kind() != io::ErrorKind::WouldBlock {
                        tracing::debug!("scouting: receive failed: {e}");
                    }
                    return Received::Nothing;
                }
            }
        }
    }

    /// The next Hello received before `deadline`, or `None` when the time is up.
    /// Datagrams that are not a valid Hello are skipped (logged at debug level).
    pub(crate) fn recv(&mut self, deadline: Instant) -> Option<Hello> {
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            if left.is_zero() || self.socket.set_read_timeout(Some(left)).is_err() {
                return None;
            }
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, from)) => match message::read_hello(&self.buf[..n]) {
                    Ok(h) => return Some(h),
                    Err(e) => tracing::debug!("scouting: ignored a datagram from {from}: {e}"),
                },
                Err(e) if crate::link::is_timeout(&e) => {}
                Err(e) => {
                    tracing::debug!("scouting: receive failed: {e}");
                    std::thread::sleep(left.min(Duration::from_millis(50)));
                }
            }
        }
    }
}

/// Scouts for nodes of the roles in `what` for `timeout`, calling `on_hello` once per
/// node that answers (the first Hello of each ZenohID), as answers arrive; stops early
/// when `on_hello` breaks. Scouts are repeated during the time (the group is not
/// reliable).
pub fn scout_with<F>(
    what: WhatAmIMatcher,
    config: &Config,
    timeout: Duration,
    mut on_hello: F,
) -> Result<(), ScoutError>
where
    F: FnMut(&Hello) -> ControlFlow<()>,
{
    if !config.multicast_scouting {
        return Err(ScoutError::Disabled);
    }
    let mut scouter = Scouter::open(what, &config.scouting, None)?;
    scouter.run(
        what,
        Some(Instant::now() + timeout),
        &|| false,
        &mut on_hello,
    )
}

/// Scouts for nodes of the roles in `what` for `timeout`, like Zenoh's `scout`; returns
/// one [`Hello`] per node that answered, in the order they answered.
///
/// ```no_run
/// use weft::{Config, WhatAmI, WhatAmIMatcher};
/// use std::time::Duration;
///
/// let routers = WhatAmIMatcher(WhatAmI::Router.bit());
/// for hello in weft::scout(routers, &Config::default(), Duration::from_secs(3)).unwrap() {
///     println!("{} {} {:?}", hello.whatami, hello.zid, hello.locators);
/// }
/// ```
pub fn scout(
    what: WhatAmIMatcher,
    config: &Config,
    timeout: Duration,
) -> Result<Vec<Hello>, ScoutError> {
    let mut found = Vec::new();
    scout_with(what, config, timeout, |h| {
        found.push(h.clone());
        ControlFlow::Continue(())
    })?;
    Ok(found)
}
