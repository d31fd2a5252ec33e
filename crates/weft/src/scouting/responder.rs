//! Answering Scouts: the group's datagrams are read without waiting, when the group
//! socket is readable (the links loop waits for it, for every session), and each matching
//! Scout is answered with one unicast Hello. Work per datagram is bounded: one decode, one
//! look at the interfaces, one send.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

use weft_proto::core::{WhatAmI, ZenohId};

use super::{locators, message, socket};
use crate::config::ScoutingConfig;

/// Most datagrams answered per call of [`Responder::answer_waiting`], so that a flood of
/// Scouts cannot hold its caller: the rest wait for the next call.
const MOST_PER_CALL: usize = 64;

/// A node's identity, as its Hellos carry it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Identity {
    /// Its id.
    pub(crate) zid: ZenohId,
    /// Its role.
    pub(crate) whatami: WhatAmI,
}

/// A node's answering of Scouts: the group's socket, read without waiting, and the
/// socket its Hellos leave from.
#[derive(Debug)]
pub(crate) struct Responder {
    group: UdpSocket,
    reply: UdpSocket,
    me: Identity,
    buf: Vec<u8>,
}

impl Responder {
    /// Opens the sockets (an error when scouting cannot run here: no multicast route,
    /// for instance).
    pub(crate) fn open(cfg: &ScoutingConfig, me: Identity) -> io::Result<Self> {
        let group = socket::multicast_receiver(cfg)?;
        group.set_nonblocking(true)?;
        let reply = socket::unicast(cfg)?;
        reply.set_nonblocking(true)?;
        Ok(Self {
            group,
            reply,
            me,
            buf: vec![0u8; message::MAX_DATAGRAM],
        })
    }

    /// The group socket, to wait on for Scouts.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.group.as_raw_fd()
    }

    /// Answers the Scouts waiting (at most [`MOST_PER_CALL`]), for a node listening on
    /// `listening`; `true` when more may wait (call again without waiting).
    pub(crate) fn answer_waiting(&mut self, listening: &[String]) -> bool {
        for _ in 0..MOST_PER_CALL {
            match self.group.recv_from(&mut self.buf) {
                Ok((n, from)) => answer(&self.buf[..n], from, &self.reply, self.me, listening),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    tracing::debug!("scouting: receive failed: {e}");
                    return false;
                }
            }
        }
        true
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
