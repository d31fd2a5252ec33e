//! The TLS handshake, run by rustls's unbuffered connection over the socket as far as the
//! socket lets it each time (it never waits for the socket itself), and the hand-over of its traffic keys to weft's own record layer (`record`).
//!
//! rustls negotiates, verifies certificates and derives keys; once the handshake is over
//! it gives up the keys ([`Established`]) and keeps only what computes their updates
//! ([`Kernel`]). rustls is given the peer's records one at a time and none after the one
//! that ends the handshake: what follows it (read with it, say) is handed over to the
//! record layer unopened.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::ops::Deref;
use std::time::Instant;

use rustls::client::{ClientConnectionData, UnbufferedClientConnection};
use rustls::kernel::KernelConnection;
use rustls::pki_types::CertificateDer;
use rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use rustls::unbuffered::{ConnectionState, EncodeError, UnbufferedStatus};
use rustls::{
    CommonState, ConnectionTrafficSecrets, ExtractedSecrets, ProtocolVersion, SupportedCipherSuite,
};

use super::record::{HEADER, MAX_RECORD};
use super::TlsError;

/// A connection rustls drives through the handshake: a client's or a server's.
pub(crate) enum Setup {
    /// The connecting side.
    Client(UnbufferedClientConnection),
    /// The listening side.
    Server(UnbufferedServerConnection),
}

/// What computes the next traffic keys when a direction's keys are updated.
pub(crate) enum Kernel {
    /// The connecting side's.
    Client(KernelConnection<ClientConnectionData>),
    /// The listening side's.
    Server(KernelConnection<ServerConnectionData>),
}

impl Kernel {
    /// The next keys for what weft sends.
    pub(crate) fn update_tx(&mut self) -> Result<ConnectionTrafficSecrets, rustls::Error> {
        match self {
            Self::Client(k) => k.update_tx_secret(),
            Self::Server(k) => k.update_tx_secret(),
        }
        .map(|(_, s)| s)
    }

    /// The next keys for what the peer sends.
    pub(crate) fn update_rx(&mut self) -> Result<ConnectionTrafficSecrets, rustls::Error> {
        match self {
            Self::Client(k) => k.update_rx_secret(),
            Self::Server(k) => k.update_rx_secret(),
        }
        .map(|(_, s)| s)
    }

    /// How many records one key may seal (the negotiated suite's confidentiality limit).
    pub(crate) fn confidentiality_limit(&self) -> u64 {
        let suite = match self {
            Self::Client(k) => k.negotiated_cipher_suite(),
            Self::Server(k) => k.negotiated_cipher_suite(),
        };
        match suite {
            SupportedCipherSuite::Tls13(s) => s.common.confidentiality_limit,
            // `run` refuses any other version.
            #[allow(unreachable_patterns)]
            _ => 0,
        }
    }
}

/// A finished handshake.
pub(crate) struct Established {
    /// The traffic keys of both directions with their next sequence numbers.
    pub(crate) secrets: ExtractedSecrets,
    /// What updates them.
    pub(crate) kernel: Kernel,
    /// Ciphertext read after the handshake and not yet opened.
    pub(crate) ciphertext: Vec<u8>,
    /// The certificates the peer presented, its own first.
    pub(crate) peer_certificates: Option<Vec<CertificateDer<'static>>>,
}

/// One step of the handshake, whichever the side.
enum Step {
    /// Bytes to send (appended to the output).
    Send,
    /// The output is to go out now.
    Transmit,
    /// More bytes from the peer are needed.
    Receive,
    /// rustls may send data: the handshake is over when it no longer handshakes.
    Traffic,
    /// The peer closed.
    Closed,
}

/// Runs `f` on whichever side `setup` is.
macro_rules! on_side {
    ($setup:expr, $conn:ident => $body:expr) => {
        match $setup {
            Setup::Client($conn) => $body,
            Setup::Server($conn) => $body,
        }
    };
}

impl Setup {
    fn common(&self) -> &CommonState {
        on_side!(self, c => c.deref().deref())
    }

    /// Processes what `incoming` holds until rustls needs something: returns the step and
    /// how many bytes of `incoming` it took, and appends what it has to send to
    /// `outgoing`.
    fn step(
        &mut self,
        incoming: &mut [u8],
        outgoing: &mut Vec<u8>,
    ) -> (usize, Result<Step, rustls::Error>) {
        on_side!(self, c => {
            let UnbufferedStatus { discard, state } = c.process_tls_records(incoming);
            (discard, state.and_then(|s| drive(s, outgoing)))
        })
    }

    fn into_kernel(self) -> Result<(ExtractedSecrets, Kernel), rustls::Error> {
        match self {
            Self::Client(c) => c
                .dangerous_into_kernel_connection()
                .map(|(s, k)| (s, Kernel::Client(k))),
            Self::Server(c) => c
                .dangerous_into_kernel_connection()
                .map(|(s, k)| (s, Kernel::Server(k))),
        }
    }
}

/// What to do in `state`.
fn drive<Data>(
    state: ConnectionState<'_, '_, Data>,
    outgoing: &mut Vec<u8>,
) -> Result<Step, rustls::Error> {
    Ok(match state {
        ConnectionState::EncodeTlsData(mut e) => {
            let start = outgoing.len();
            let mut room = MAX_RECORD;
            loop {
                outgoing.resize(start + room, 0);
                match e.encode(&mut outgoing[start..]) {
                    Ok(n) => {
                        outgoing.truncate(start + n);
                        break;
                    }
                    Err(EncodeError::InsufficientSize(s)) => room = s.required_size,
                    Err(EncodeError::AlreadyEncoded) => {
                        outgoing.truncate(start);
                        break;
                    }
                }
            }
            Step::Send
        }
        ConnectionState::TransmitTlsData(t) => {
            t.done();
            Step::Transmit
        }
        ConnectionState::BlockedHandshake => Step::Receive,
        // rustls sees no record after the one that ends the handshake (`run`), and data
        // cannot come before it; weft's listeners accept no early data (rustls's default).
        ConnectionState::ReadTraffic(_) | ConnectionState::ReadEarlyData(_) => {
            return Err(rustls::Error::General(
                "application data before the end of the handshake".into(),
            ))
        }
        ConnectionState::WriteTraffic(_) => Step::Traffic,
        ConnectionState::PeerClosed | ConnectionState::Closed => Step::Closed,
        _ => Step::Closed,
    })
}

/// The length of the whole record at the start of `buf`, if it is all there.
fn whole_record(buf: &[u8]) -> Option<usize> {
    let header = buf.get(..HEADER)?;
    let len = HEADER + usize::from(u16::from_be_bytes([header[3], header[4]]));
    (buf.len() >= len).then_some(len)
}

/// A handshake in progress over a socket that may be non-blocking: [`Handshaking::advance`]
/// goes as far as the socket lets it and is called again when the socket is ready (see
/// [`Handshaking::wants_write`]).
pub(crate) struct Handshaking {
    setup: Option<Setup>,
    peer: String,
    deadline: Instant,
    /// Bytes read from the peer: `fed` of them given to rustls, up to `filled`.
    incoming: Vec<u8>,
    filled: usize,
    fed: usize,
    /// What rustls has to send, from `sent` on; `transmit` once it is to go out.
    outgoing: Vec<u8>,
    sent: usize,
    transmit: bool,
}

impl Handshaking {
    /// The handshake of `setup` with `peer` (named in errors), to be done by `deadline`.
    pub(crate) fn new(setup: Setup, peer: String, deadline: Instant) -> Self {
        Self {
            setup: Some(setup),
            peer,
            deadline,
            incoming: Vec::new(),
            filled: 0,
            fed: 0,
            outgoing: Vec::new(),
            sent: 0,
            transmit: false,
        }
    }

    /// When the handshake must be done.
    pub(crate) const fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the handshake waits for the socket to take what it has to send (else it
    /// waits for the peer's bytes).
    pub(crate) fn wants_write(&self) -> bool {
        self.transmit && self.sent < self.outgoing.len()
    }

    fn timeout(&self) -> io::Error {
        TlsError::Timeout(self.peer.clone()).into()
    }

    /// Goes on with the handshake over `tcp` as far as it can at `now`: `Ok(Some(_))`
    /// once it is over, `Ok(None)` when the socket has nothing more to read or takes
    /// nothing more now (call again when it is ready). A peer refused (its certificate,
    /// or none when one is required) is an error naming why, after the alert telling the
    /// peer is sent if the socket takes it.
    pub(crate) fn advance(
        &mut self,
        tcp: &TcpStream,
        now: Instant,
    ) -> io::Result<Option<Established>> {
        if now >= self.deadline {
            return Err(self.timeout());
        }
        let Some(setup) = self.setup.as_mut() else {
            return Err(TlsError::Config(format!("TLS with {}: handshake over", self.peer)).into());
        };
        loop {
            if self.transmit {
                while self.sent < self.outgoing.len() {
                    match (&mut &*tcp).write(&self.outgoing[self.sent..]) {
                        Ok(0) => return Err(TlsError::Closed(self.peer.clone()).into()),
                        Ok(n) => self.sent += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                        Err(e) => return Err(e),
                    }
                }
                self.outgoing.clear();
                self.sent = 0;
                self.transmit = false;
            }
            // rustls is given whole records, one more each time it needs more: it never
            // sees a record after the one that ends the handshake. Those are the record
            // layer's (a key update rustls took there would be lost, and its answer with
            // it).
            let (taken, step) = setup.step(&mut self.incoming[..self.fed], &mut self.outgoing);
            self.incoming.copy_within(taken..self.filled, 0);
            self.filled -= taken;
            self.fed -= taken;
            let step = match step {
                Ok(s) => s,
                Err(reason) => {
                    // The alert saying why goes out, if the socket takes it now.
                    let _ = setup.step(&mut [], &mut self.outgoing);
                    let _ = (&mut &*tcp).write(&self.outgoing[self.sent..]);
                    return Err(TlsError::Session {
                        peer: self.peer.clone(),
                        reason,
                    }
                    .into());
                }
            };
            match step {
                Step::Send => {}
                Step::Transmit => self.transmit = true,
                Step::Traffic if !setup.common().is_handshaking() => break,
                Step::Receive | Step::Traffic => {
                    if let Some(len) = whole_record(&self.incoming[self.fed..self.filled]) {
                        self.fed += len;
                        continue;
                    }
                    if self.filled == self.incoming.len() {
                        self.incoming.resize(self.filled + MAX_RECORD, 0);
                    }
                    match (&mut &*tcp).read(&mut self.incoming[self.filled..]) {
                        Ok(0) => return Err(TlsError::Closed(self.peer.clone()).into()),
                        Ok(n) => self.filled += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                        Err(e) => return Err(e),
                    }
                }
                Step::Closed => return Err(TlsError::Closed(self.peer.clone()).into()),
            }
        }
        self.finish().map(Some)
    }

    /// Hands the keys over once rustls is done.
    fn finish(&mut self) -> io::Result<Established> {
        let peer = &self.peer;
        if self.fed > 0 {
            return Err(TlsError::Config(format!(
                "TLS with {peer}: {} bytes of the handshake left unread by rustls",
                self.fed
            ))
            .into());
        }
        let setup = self.setup.take().expect("a handshake in progress");
        let peer_certificates = setup
            .common()
            .peer_certificates()
            .map(|chain| chain.iter().map(|c| c.clone().into_owned()).collect());
        if setup.common().protocol_version() != Some(ProtocolVersion::TLSv1_3) {
            return Err(
                TlsError::Config(format!("{peer} negotiated a TLS version before 1.3")).into(),
            );
        }
        let (secrets, kernel) = setup.into_kernel().map_err(|reason| TlsError::Session {
            peer: peer.clone(),
            reason,
        })?;
        let mut ciphertext = std::mem::take(&mut self.incoming);
        ciphertext.truncate(self.filled);
        Ok(Established {
            secrets,
            kernel,
            ciphertext,
            peer_certificates,
        })
    }
}
