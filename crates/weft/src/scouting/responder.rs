//! Answering Scouts: a thread reads the group's datagrams and answers each matching
//! Scout with one unicast Hello. Work per datagram is bounded: one decode, one look at
//! the interfaces, one send.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use weft_proto::core::{WhatAmI, ZenohId};

use super::{locators, message, socket};
use crate::config::ScoutingConfig;

/// How often the thread checks whether its node has closed.
const POLL: Duration = Duration::from_millis(100);

/// What the responder needs from its node.
pub(crate) trait Announcer: Send + 'static {
    /// The endpoints the node listens on now (as bound), or `None` once it has closed
    /// (the responder then stops).
    fn listening(&self) -> Option<Vec<String>>;
}

/// A node's identity, as its Hellos carry it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Identity {
    /// Its id.
    pub(crate) zid: ZenohId,
    /// Its role.
    pub(crate) whatami: WhatAmI,
}

/// Opens the sockets (so that errors are reported to the caller) and starts the thread.
pub(crate) fn start<A: Announcer>(
    cfg: &ScoutingConfig,
    me: Identity,
    announcer: A,
) -> io::Result<()> {
    let group = socket::multicast_receiver(cfg)?;
    group.set_read_timeout(Some(POLL))?;
    let reply = socket::unicast(cfg)?;
    std::thread::Builder::new()
        .name("weft-scouting".into())
        .spawn(move || run(&group, &reply, me, &announcer))?;
    Ok(())
}

fn run<A: Announcer>(group: &UdpSocket, reply: &UdpSocket, me: Identity, announcer: &A) {
    let mut buf = vec![0u8; message::MAX_DATAGRAM];
    loop {
        let received = group.recv_from(&mut buf);
        let Some(listening) = announcer.listening() else {
            return;
        };
        match received {
            Ok((n, from)) => answer(&buf[..n], from, reply, me, &listening),
            Err(e) if crate::link::is_timeout(&e) => {}
            Err(e) => {
                tracing::debug!("scouting: receive failed: {e}");
                std::thread::sleep(POLL);
            }
        }
    }
}

/// Handles one datagram received on the group.
fn answer(
    datagram: &[u8],
    from: SocketAddr,
    reply: &UdpSocket,
    me: Identity,
    listening: &[String],
) {
    let what = match message::read_scout(datagram) {
        Ok(w) => w,
        // Our own Hellos never reach the group (they are unicast); anything else that
        // does not decode is someone else's problem.
        Err(e) => {
            tracing::debug!("scouting: ignored a datagram from {from}: {e}");
            return;
        }
    };
    // `listen` was checked before the responder was started.
    if !message::answers(what, me.whatami, true) {
        return;
    }
    let locators = locators::expand(
        listening,
        socket::address_toward(from),
        &socket::interface_addresses(),
    );
    let hello = message::hello_datagram(me.zid, me.whatami, &locators);
    match reply.send_to(&hello, from) {
        Ok(_) => tracing::debug!("scouting: answered {from} with {locators:?}"),
        Err(e) => tracing::debug!("scouting: cannot answer {from}: {e}"),
    }
}
