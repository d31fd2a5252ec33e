//! The acceptor's side: answers InitSyn with InitAck (and a cookie), OpenSyn with OpenAck.

use std::sync::Arc;

use weft_proto::core::Resolution;
use weft_proto::ext::{ExtBody, Extension};
use weft_proto::transport::auth::{usrpwd_id, UsrPwdResponse};
use weft_proto::transport::{Init, Open, QosLink, TransportMessage};

use super::usrpwd::{self, AuthError, UsrPwd};
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
    /// Enabled user/password settings, and this handshake's challenge.
    usrpwd: Option<(Arc<UsrPwd>, u64)>,
    /// The user the initiator authenticated as.
    user: Option<String>,
    state: State,
}

impl Acceptor {
    /// A handshake answering with `local`; `nonce` must be unpredictable (random).
    pub const fn new(local: LocalParams, nonce: [u8; 16]) -> Self {
        Self {
            local,
            cookie: nonce,
            usrpwd: None,
            user: None,
            state: State::WaitInitSyn,
        }
    }

    /// Requires the initiator to authenticate against `usrpwd`'s dictionary if its
    /// settings are enabled (else nothing changes); `challenge` must be unpredictable
    /// (random) and used for this handshake only.
    #[must_use]
    pub fn with_usrpwd(mut self, usrpwd: Arc<UsrPwd>, challenge: u64) -> Self {
        self.usrpwd = usrpwd.is_enabled().then_some((usrpwd, challenge));
        self
    }

    /// The user the initiator authenticated as, once established with user/password
    /// authentication.
    pub fn authenticated_user(&self) -> Option<&str> {
        self.user.as_deref()
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
                let mut auth = Vec::new();
                if let Some((_, challenge)) = &self.usrpwd {
                    usrpwd::required(batch, syn.auth, usrpwd_id::INIT_SYN, "InitSyn")?;
                    let ext = Extension {
                        id: usrpwd_id::INIT_ACK,
                        body: ExtBody::Z64(*challenge),
                    };
                    usrpwd::single(ext, &mut auth);
                }
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
                if !auth.is_empty() {
                    ack.auth = Some(&auth);
                }
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
                let mut auth = Vec::new();
                if self.usrpwd.is_some() {
                    self.user = Some(self.check_response(batch, syn.auth)?);
                    usrpwd::single(usrpwd::unit(usrpwd_id::OPEN_ACK), &mut auth);
                }
                negotiated.peer_lease_ms = syn.lease_ms;
                negotiated.peer_initial_sn = syn.initial_sn;
                let mut ack = Open::ack(self.local.lease_ms, negotiated.own_initial_sn);
                if !auth.is_empty() {
                    ack.auth = Some(&auth);
                }
                TransportMessage::Open(ack).encode(out)?;
                Ok(Progress::Established(negotiated))
            }
            (State::WaitInitSyn, other) => Err(unexpected("InitSyn", &other)),
            (State::WaitOpenSyn(_), other) => Err(unexpected("OpenSyn", &other)),
            (State::Over, _) => Err(EstablishError::Finished),
        }
    }

    /// Checks the OpenSyn's answer to the challenge; returns the authenticated user.
    fn check_response(&self, batch: &[u8], auth: Option<&[u8]>) -> Result<String, AuthError> {
        let Some((settings, challenge)) = &self.usrpwd else {
            return Err(AuthError::Missing("OpenSyn"));
        };
        let entry = usrpwd::required(batch, auth, usrpwd_id::OPEN_SYN, "OpenSyn")?;
        let ExtBody::ZBuf(value) = entry.ext.body else {
            return Err(AuthError::Missing("OpenSyn"));
        };
        let response = UsrPwdResponse::decode(value, usrpwd::offset_in(batch, value))
            .map_err(AuthError::Malformed)?;
        settings.check(*challenge, response.user, response.hmac)?;
        Ok(String::from_utf8_lossy(response.user).into_owned())
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
