//! Scouting until stopped, as Zenoh's `scout` does: a thread sends Scouts and tells of
//! the nodes that answer until the [`Scout`] handle is stopped or dropped.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use weft_proto::core::WhatAmIMatcher;

use super::{Hello, ScoutError, Scouter};
use crate::config::Config;

/// A scout running in the background; stopped by [`Scout::stop`] or when dropped.
pub struct Scout {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Scout {
    /// Stops scouting, and waits for the scouting thread to end (at most about
    /// `STOP_CHECK`): `on_hello` is not called any more.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            if t.thread().id() != std::thread::current().id() {
                let _ = t.join();
            }
        }
    }
}

impl Drop for Scout {
    fn drop(&mut self) {
        self.end();
    }
}

/// Scouts for nodes of the roles in `what` until the returned [`Scout`] is stopped,
/// calling `on_hello` on the scouting thread once per node that answers (its first
/// Hello). Scouts are sent at growing intervals (0.5 s, then doubled up to 8 s). An
/// error sending a Scout ends scouting (logged). With multicast scouting disabled in
/// `config`, nothing is sent and nothing found, until stopped, as with Zenoh.
pub fn scout_background(
    what: WhatAmIMatcher,
    config: &Config,
    mut on_hello: impl FnMut(&Hello) + Send + 'static,
) -> Result<Scout, ScoutError> {
    let mut scouter = if config.multicast_scouting {
        Some(Scouter::open(what, &config.scouting, None)?)
    } else {
        None
    };
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    let thread = std::thread::Builder::new()
        .name("weft-scout".into())
        .spawn(move || {
            let Some(scouter) = scouter.as_mut() else {
                return;
            };
            let stop = || stopped.load(Ordering::Acquire);
            let mut tell = |h: &Hello| {
                on_hello(h);
                ControlFlow::Continue(())
            };
            if let Err(e) = scouter.run(what, None, &stop, &mut tell) {
                tracing::warn!("scouting ended: {e}");
            }
        })
        .map_err(ScoutError::Socket)?;
    Ok(Scout {
        stop,
        thread: Some(thread),
    })
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use weft_proto::core::{WhatAmI, ZenohId};

    use super::*;
    use crate::scouting::message::{hello_datagram, read_scout};

    /// A configuration whose "group" is a plain UDP socket of 127.0.0.1 (nothing is
    /// multicast), and that socket.
    fn loopback_group() -> (Config, UdpSocket) {
        let group = UdpSocket::bind("127.0.0.1:0").unwrap();
        group
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut config = Config::default();
        config.scouting.address = group.local_addr().unwrap();
        (config, group)
    }

    #[test]
    fn a_background_scout_tells_of_each_node_once_until_stopped() {
        let (config, group) = loopback_group();
        let (tx, rx) = mpsc::channel();
        let scout = scout_background(WhatAmIMatcher(WhatAmI::Router.bit()), &config, move |h| {
            tx.send(h.clone()).unwrap();
        })
        .unwrap();
        let zid = ZenohId::new(0x1234).unwrap();
        let locators = vec!["tcp/127.0.0.1:7447".to_string()];
        let hello = hello_datagram(zid, WhatAmI::Router, &locators);
        for _ in 0..2 {
            let mut buf = [0u8; 2048];
            let (n, from) = group.recv_from(&mut buf).expect("a Scout");
            assert_eq!(
                read_scout(&buf[..n]).unwrap(),
                WhatAmIMatcher(WhatAmI::Router.bit())
            );
            group.send_to(&hello, from).unwrap();
        }
        let found = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!((found.zid, found.locators), (zid, locators));
        let started = Instant::now();
        scout.stop();
        assert!(started.elapsed() < Duration::from_secs(2));
        // Told once, whatever the Hellos; and nothing after the stop (its sender is gone).
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(1)),
            Err(mpsc::RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn disabled_scouting_finds_nothing_until_stopped() {
        let config = Config {
            multicast_scouting: false,
            ..Config::default()
        };
        let (tx, rx) = mpsc::channel::<Hello>();
        let scout = scout_background(WhatAmIMatcher(0b111), &config, move |h| {
            tx.send(h.clone()).unwrap();
        })
        .unwrap();
        assert_eq!(
            rx.recv_timeout(Duration::from_secs(1)),
            Err(mpsc::RecvTimeoutError::Disconnected)
        );
        scout.stop();
    }
}
