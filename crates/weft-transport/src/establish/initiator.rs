//! The initiator's side: sends InitSyn, answers InitAck with OpenSyn, ends at OpenAck.

use std::sync::Arc;

use weft_proto::core::{Bits, Resolution};
use weft_proto::ext::{ExtBody, Extension};
use weft_proto::transport::auth::{usrpwd_id, UsrPwdResponse};
use weft_proto::transport::{Init, Open, QosLink, TransportMessage};

use super::usrpwd::{self, AuthError, UsrPwd};
use super::{single_message, unexpected, EstablishError, LocalParams, Negotiated, Progress};
use crate::sn::initial_sn;

/// The InitSyn's Auth value of an initiator with credentials.
const INIT_SYN_AUTH: [u8; 1] = [usrpwd_id::INIT_SYN];

#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    Start,
    WaitInitAck,
    WaitOpenAck(Negotiated),
    Over,
}

/// The handshake of the node that opened the link.
#[derive(Debug, Clone)]
pub struct Initiator {
    local: LocalParams,
    /// User/password settings with credentials: presented to the acceptor.
    usrpwd: Option<Arc<UsrPwd>>,
    state: State,
}

impl Initiator {
    /// A handshake proposing `local`.
    pub const fn new(local: LocalParams) -> Self {
        Self {
            local,
            usrpwd: None,
            state: State::Start,
        }
    }

    /// Authenticates with the credentials of `usrpwd`, if it has any (else nothing
    /// changes): the acceptor must then ask for them, or the handshake fails.
    #[must_use]
    pub fn with_usrpwd(mut self, usrpwd: Arc<UsrPwd>) -> Self {
        self.usrpwd = usrpwd.user().is_some().then_some(usrpwd);
        self
    }

    /// Writes the InitSyn batch. Call once, first.
    pub fn start(&mut self, out: &mut Vec<u8>) -> Result<(), EstablishError> {
        if self.state != State::Start {
            return Err(EstablishError::Finished);
        }
        let mut syn = Init::syn(self.local.whatami, self.local.zid);
        syn.resolution = self.local.resolution;
        syn.batch_size = self.local.batch_size;
        match self.local.link_priorities {
            Some((start, end)) if self.local.qos => {
                syn.qos_link = Some(QosLink::with_priorities(start, end));
            }
            _ => syn.qos = self.local.qos,
        }
        syn.patch = (self.local.patch > 0).then_some(self.local.patch);
        if self.usrpwd.is_some() {
            syn.auth = Some(&INIT_SYN_AUTH);
        }
        out.clear();
        TransportMessage::Init(syn).encode(out)?;
        self.state = State::WaitInitAck;
        Ok(())
    }

    /// Handles a received batch; writes the reply (if any) into `out`.
    pub fn on_batch(
        &mut self,
        batch: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Progress, EstablishError> {
        out.clear();
        let state = std::mem::replace(&mut self.state, State::Over);
        let msg = single_message(batch)?;
        match (state, msg) {
            (State::WaitInitAck, TransportMessage::Init(ack)) if ack.is_ack() => {
                let negotiated = self.on_init_ack(&ack)?;
                let cookie = ack.cookie.unwrap_or_default();
                let mut syn = Open::syn(self.local.lease_ms, negotiated.own_initial_sn, cookie);
                let (mut value, mut auth) = (Vec::new(), Vec::new());
                if let Some(ext) = self.answer_challenge(batch, ack.auth, &mut value)? {
                    syn.auth = Some(usrpwd::single(ext, &mut auth));
                }
                TransportMessage::Open(syn).encode(out)?;
                self.state = State::WaitOpenAck(negotiated);
                Ok(Progress::Reply)
            }
            (State::WaitOpenAck(mut negotiated), TransportMessage::Open(ack)) if !ack.is_syn() => {
                if u64::from(ack.initial_sn) > negotiated.resolution.frame_sn().max_sn() {
                    return Err(EstablishError::InitialSn(ack.initial_sn));
                }
                if self.usrpwd.is_some() {
                    usrpwd::required(batch, ack.auth, usrpwd_id::OPEN_ACK, "OpenAck")?;
                }
                negotiated.peer_lease_ms = ack.lease_ms;
                negotiated.peer_initial_sn = ack.initial_sn;
                Ok(Progress::Established(negotiated))
            }
            (State::WaitInitAck, other) => Err(unexpected("InitAck", &other)),
            (State::WaitOpenAck(_), other) => Err(unexpected("OpenAck", &other)),
            (State::Start | State::Over, _) => Err(EstablishError::Finished),
        }
    }

    /// With credentials: the OpenSyn's user/password extension answering the InitAck's
    /// challenge (its value written into `value`).
    fn answer_challenge<'v>(
        &self,
        batch: &[u8],
        auth: Option<&[u8]>,
        value: &'v mut Vec<u8>,
    ) -> Result<Option<Extension<'v>>, AuthError> {
        let Some(settings) = &self.usrpwd else {
            return Ok(None);
        };
        let entry = usrpwd::required(batch, auth, usrpwd_id::INIT_ACK, "InitAck")?;
        let ExtBody::Z64(nonce) = entry.ext.body else {
            return Ok(None);
        };
        let Some((user, hmac)) = settings.respond(nonce) else {
            return Ok(None);
        };
        let response = UsrPwdResponse { user, hmac: &hmac };
        value.clear();
        // Encoding into a Vec cannot fail.
        let _ = response.encode(value);
        Ok(Some(Extension {
            id: usrpwd_id::OPEN_SYN,
            body: ExtBody::ZBuf(value),
        }))
    }

    fn on_init_ack(&self, ack: &Init<'_>) -> Result<Negotiated, EstablishError> {
        if ack.version != weft_proto::VERSION {
            return Err(EstablishError::Version { got: ack.version });
        }
        if ack.zid == self.local.zid {
            return Err(EstablishError::ConnectionToSelf);
        }
        let own = self.local.resolution;
        if ack.resolution.frame_sn() > own.frame_sn()
            || ack.resolution.request_id() > own.request_id()
        {
            return Err(EstablishError::Resolution);
        }
        let resolution = Resolution::new(ack.resolution.frame_sn(), ack.resolution.request_id());
        let bits: Bits = resolution.frame_sn();
        if ack.qos && ack.qos_link.is_some() {
            return Err(EstablishError::QosTwice);
        }
        let qos = self.local.qos && (ack.qos || ack.qos_link.is_some());
        let offered = ack.qos_link.and_then(QosLink::priorities);
        let link_priorities = match (self.local.link_priorities, offered) {
            (Some(asked), Some(got)) if !super::range_includes(got, asked) => {
                return Err(EstablishError::PriorityRange { asked, got });
            }
            (Some(asked), _) => Some(asked),
            (None, got) => got,
        };
        Ok(Negotiated {
            peer_zid: ack.zid,
            peer_whatami: ack.whatami,
            resolution,
            batch_size: super::negotiate_batch_size(self.local.batch_size, ack.batch_size)?,
            qos,
            patch: ack.patch.unwrap_or(0).min(self.local.patch),
            own_lease_ms: self.local.lease_ms,
            peer_lease_ms: 0,
            own_initial_sn: initial_sn(
                &self.local.zid.to_le_bytes()[..self.local.zid.size()],
                &ack.zid.to_le_bytes()[..ack.zid.size()],
                bits,
            ),
            peer_initial_sn: 0,
            link_priorities: link_priorities.filter(|_| qos),
        })
    }
}
