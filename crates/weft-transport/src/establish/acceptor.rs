//! The acceptor's side: answers InitSyn with InitAck (and a cookie), OpenSyn with OpenAck.

use weft_proto::core::Resolution;
use weft_proto::transport::{Init, Open, QosLink, TransportMessage};

use super::{single_message, unexpected, EstablishError, LocalParams, Negotiated, Progress};
use crate::sn::initial_sn;

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    WaitInitSyn,
    WaitOpenSyn(Negotiated),
    Over,
}

/// The handshake of the node that accepted the link.
///
/// The machine lives as long as the pending link, so the cookie is simply a nonce it
/// remembers: the OpenSyn must echo it.
#[derive(Debug, Clone)]
pub struct Acceptor {
    local: LocalParams,
    cookie: [u8; 16],
    state: State,
}

impl Acceptor {
    /// A handshake answering with `local`; `nonce` must be unpredictable (random).
    pub const fn new(local: LocalParams, nonce: [u8; 16]) -> Self {
        Self {
            local,
            cookie: nonce,
            state: State::WaitInitSyn,
        }
    }

    /// Handles a received batch; writes the reply into `out`.
    pub fn on_batch(
        &mut self,
        batch: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Progress, EstablishError> {
        out.clear();
        let state = std::mem::replace(&mut self.state, State::Over);
        let msg = single_message(batch)?;
        match (state, msg) {
            (State::WaitInitSyn, TransportMessage::Init(syn)) if !syn.is_ack() => {
                let negotiated = self.on_init_syn(&syn)?;
                let mut ack = Init::syn(self.local.whatami, self.local.zid);
                ack.resolution = negotiated.resolution;
                ack.batch_size = negotiated.batch_size;
                ack.cookie = Some(&self.cookie);
                // A link reserved for priorities is answered with the same QoSLink
                // value (the range, and a reliability weft does not restrict).
                match syn.qos_link {
                    Some(link) if negotiated.qos => ack.qos_link = Some(link),
                    _ => ack.qos = negotiated.qos,
                }
                ack.patch = syn.patch.map(|_| negotiated.patch);
                TransportMessage::Init(ack).encode(out)?;
                self.state = State::WaitOpenSyn(negotiated);
                Ok(Progress::Reply)
            }
            (State::WaitOpenSyn(mut negotiated), TransportMessage::Open(syn)) if syn.is_syn() => {
                if syn.cookie != Some(&self.cookie[..]) {
                    return Err(EstablishError::Cookie);
                }
                if u64::from(syn.initial_sn) > negotiated.resolution.frame_sn().max_sn() {
                    return Err(EstablishError::InitialSn(syn.initial_sn));
                }
                negotiated.peer_lease_ms = syn.lease_ms;
                negotiated.peer_initial_sn = syn.initial_sn;
                let ack = Open::ack(self.local.lease_ms, negotiated.own_initial_sn);
                TransportMessage::Open(ack).encode(out)?;
                Ok(Progress::Established(negotiated))
            }
            (State::WaitInitSyn, other) => Err(unexpected("InitSyn", &other)),
            (State::WaitOpenSyn(_), other) => Err(unexpected("OpenSyn", &other)),
            (State::Over, _) => Err(EstablishError::Finished),
        }
    }

    fn on_init_syn(&self, syn: &Init<'_>) -> Result<Negotiated, EstablishError> {
        if syn.version != weft_proto::VERSION {
            return Err(EstablishError::Version { got: syn.version });
        }
        if syn.zid == self.local.zid {
            return Err(EstablishError::ConnectionToSelf);
        }
        if syn.qos && syn.qos_link.is_some() {
            return Err(EstablishError::QosTwice);
        }
        let qos = self.local.qos && (syn.qos || syn.qos_link.is_some());
        let own = self.local.resolution;
        let resolution = Resolution::new(
            own.frame_sn().min(syn.resolution.frame_sn()),
            own.request_id().min(syn.resolution.request_id()),
        );
        Ok(Negotiated {
            peer_zid: syn.zid,
            peer_whatami: syn.whatami,
            resolution,
            batch_size: super::negotiate_batch_size(self.local.batch_size, syn.batch_size)?,
            qos,
            patch: syn.patch.unwrap_or(0).min(self.local.patch),
            own_lease_ms: self.local.lease_ms,
            peer_lease_ms: 0,
            own_initial_sn: initial_sn(
                &self.local.zid.to_le_bytes()[..self.local.zid.size()],
                &syn.zid.to_le_bytes()[..syn.zid.size()],
                resolution.frame_sn(),
            ),
            peer_initial_sn: 0,
            link_priorities: syn.qos_link.and_then(QosLink::priorities).filter(|_| qos),
        })
    }
}
