//! weft's record layer against rustls's, driven by the same keys through a sequence of
//! operations an input chooses: the differential fuzz target's body
//! (`fuzz/fuzz_targets/tls_records.rs`), also run as a test over generated inputs.
//!
//! Three handshakes between the same configurations derive the same keys: the provider's
//! randomness is fixed, its key exchange is a stand-in with a fixed shared secret and the
//! server signs with Ed25519 (deterministic). The first leaves a rustls client and a
//! rustls server; the second's server is handed to weft ([`Rx`], [`Tx`], as a link takes
//! it); the third's key schedule seals the records the input crafts. Then:
//!
//! - what the rustls client seals (data of any size, key updates, close_notify), and
//!   records crafted with its keys (any inner content type, alerts, handshake messages,
//!   padding, legacy version), altered or not (a byte flipped, cut short, split in two,
//!   held back to be read with the next), goes to both the rustls server and weft's
//!   reader: both must accept the same data or both refuse (one that waits for the rest of a record the other refused must
//!   refuse once more bytes come);
//! - what weft seals (data, key updates before it, close_notify) goes to the rustls
//!   client, which must accept it all and read the same data.

use std::io::{self, IoSlice, Read};
use std::sync::Arc;

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, UnbufferedClientConnection};
use rustls::crypto::{ring as provider, ActiveKeyExchange, CryptoProvider, SharedSecret};
use rustls::crypto::{SupportedKxGroup, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{ConnectionState, EncodeError, EncodeTlsData};
use rustls::{
    ClientConfig, ConnectionTrafficSecrets, DigitallySignedStruct, NamedGroup, ServerConfig,
    SignatureScheme, SupportedCipherSuite,
};

use super::handshake::Kernel;
use super::record::{Opener, Sealer, HEADER, MAX_RECORD};
use super::traffic::{Rx, Shared, Tx};

/// The server's certificate and Ed25519 key (self-signed for `localhost`).
const CERTIFICATE: &[u8] = include_bytes!("differential/cert.der");
const KEY: &[u8] = include_bytes!("differential/key.der");

/// Operations taken from one input at most.
const MAX_OPERATIONS: usize = 48;

/// Randomness that is always the same.
#[derive(Debug)]
struct FixedRandom;

impl rustls::crypto::SecureRandom for FixedRandom {
    fn fill(&self, buf: &mut [u8]) -> Result<(), rustls::crypto::GetRandomFailed> {
        buf.fill(0x5a);
        Ok(())
    }
}

/// A stand-in for X25519 whose shared secret is fixed: the keys depend only on the
/// transcript, itself fixed.
#[derive(Debug)]
struct FixedGroup;

struct FixedShare;

impl SupportedKxGroup for FixedGroup {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        Ok(Box::new(FixedShare))
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

impl ActiveKeyExchange for FixedShare {
    fn complete(self: Box<Self>, peer: &[u8]) -> Result<SharedSecret, rustls::Error> {
        if peer.len() != 32 {
            return Err(rustls::Error::General("a share of the wrong length".into()));
        }
        Ok(SharedSecret::from(&[7u8; 32][..]))
    }

    fn pub_key(&self) -> &[u8] {
        &[9; 32]
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::X25519
    }
}

/// A client that takes any certificate and signature (the keys, not the peer's
/// identity, are under test).
#[derive(Debug)]
struct AnyServer(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

/// Client and server configurations of `suite` whose handshakes all derive the same keys.
fn configs(suite: SupportedCipherSuite) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    static GROUP: FixedGroup = FixedGroup;
    static RANDOM: FixedRandom = FixedRandom;
    let base = provider::default_provider();
    let algorithms = base.signature_verification_algorithms;
    let provider = Arc::new(CryptoProvider {
        cipher_suites: vec![suite],
        kx_groups: vec![&GROUP],
        secure_random: &RANDOM,
        ..base
    });
    let versions = &[&rustls::version::TLS13];
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(CERTIFICATE)],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(KEY)),
        )
        .expect("the Ed25519 key");
    server.enable_secret_extraction = true;
    server.send_tls13_tickets = 0;
    let mut client = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .expect("TLS 1.3")
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyServer(algorithms)))
        .with_no_client_auth();
    client.resumption = Resumption::disabled();
    (Arc::new(client), Arc::new(server))
}

/// Appends to `out` the record rustls has to send.
fn encode<Data>(e: &mut EncodeTlsData<'_, Data>, out: &mut Vec<u8>) {
    let start = out.len();
    let mut room = 1024;
    loop {
        out.resize(start + room, 0);
        match e.encode(&mut out[start..]) {
            Ok(n) => return out.truncate(start + n),
            Err(EncodeError::InsufficientSize(s)) => room = s.required_size,
            Err(EncodeError::AlreadyEncoded) => return out.truncate(start),
        }
    }
}

/// Gives a rustls connection what its `inbox` holds: the data it reads is appended to
/// `data` and what it sends to `out`. `Ok(true)` once the peer's close_notify is read.
macro_rules! pump {
    ($conn:expr, $inbox:expr, $data:expr, $out:expr) => {{
        let mut result = Ok(false);
        loop {
            let status = $conn.process_tls_records(&mut $inbox[..]);
            let mut discard = status.discard;
            let mut stop = false;
            match status.state {
                Err(e) => {
                    result = Err(e);
                    stop = true;
                }
                Ok(ConnectionState::ReadTraffic(mut r)) => {
                    while let Some(record) = r.next_record() {
                        match record {
                            Ok(record) => {
                                discard += record.discard;
                                $data.extend_from_slice(record.payload);
                            }
                            Err(e) => {
                                result = Err(e);
                                stop = true;
                                break;
                            }
                        }
                    }
                }
                Ok(ConnectionState::EncodeTlsData(mut e)) => encode(&mut e, $out),
                Ok(ConnectionState::TransmitTlsData(t)) => t.done(),
                Ok(ConnectionState::PeerClosed) => result = Ok(true),
                Ok(_) => stop = true,
            }
            $inbox.drain(..discard);
            if stop {
                break result;
            }
        }
    }};
}

/// Runs a client's and a server's handshake to its end in memory.
fn handshake(
    client: &ClientConfig,
    server: &ServerConfig,
) -> (UnbufferedClientConnection, UnbufferedServerConnection) {
    let name = ServerName::try_from("localhost").expect("a name");
    let mut c = UnbufferedClientConnection::new(Arc::new(client.clone()), name).expect("client");
    let mut s = UnbufferedServerConnection::new(Arc::new(server.clone())).expect("server");
    let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
    for _ in 0..8 {
        pump!(c, to_client, Vec::<u8>::new(), &mut to_server).expect("the client's handshake");
        pump!(s, to_server, Vec::<u8>::new(), &mut to_client).expect("the server's handshake");
        if !c.is_handshaking() && !s.is_handshaking() && to_client.is_empty() {
            return (c, s);
        }
    }
    panic!("the handshake does not end");
}

/// The input, read a byte at a time (zeros once it is spent).
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u16(&mut self) -> u16 {
        u16::from_be_bytes([self.byte(), self.byte()])
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.byte()).collect()
    }
}

/// How the records of one operation reach the two readers.
#[derive(Debug, Clone, Copy)]
enum Alteration {
    /// As they are.
    None,
    /// One byte XORed with a mask that is not zero.
    Flip { at: usize, mask: u8 },
    /// Only the first bytes.
    Cut { keep: usize },
    /// All, in two parts, each read on its own.
    Split { at: usize },
    /// Held back, to be read with the records of the next operation.
    Hold,
}

impl Alteration {
    /// Whether the records reach the readers as they were sealed.
    const fn keeps_records(self) -> bool {
        matches!(self, Self::None | Self::Split { .. } | Self::Hold)
    }

    fn read(input: &mut Input<'_>) -> Self {
        match input.byte() % 8 {
            0 => Self::Flip {
                at: usize::from(input.u16()),
                mask: input.byte() | 1,
            },
            1 => Self::Cut {
                keep: usize::from(input.u16()),
            },
            2 => Self::Split {
                at: usize::from(input.u16()),
            },
            3 => Self::Hold,
            _ => Self::None,
        }
    }
}

/// What the input asks for.
#[derive(Debug)]
enum Operation {
    /// The rustls client seals data.
    ClientData(Vec<u8>, Alteration),
    /// The rustls client updates its keys (and asks the server to).
    ClientKeyUpdate(Alteration),
    /// The rustls client seals a close_notify.
    ClientClose(Alteration),
    /// A record crafted with the client's keys.
    ClientCrafted(Crafted, Alteration),
    /// weft seals data.
    ServerData(Vec<u8>),
    /// weft is to update its keys before its next data.
    ServerKeyUpdate,
    /// weft seals a close_notify.
    ServerClose,
    /// weft's reader reads into a buffer of this size from now on.
    ReadSize(usize),
}

/// A record the input writes: its inner content and type, zeros after them, and the
/// legacy version in its header.
#[derive(Debug)]
struct Crafted {
    content: Vec<u8>,
    inner_type: u8,
    padding: usize,
    version: [u8; 2],
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed)
        .collect()
}

impl Operation {
    fn read(input: &mut Input<'_>) -> Self {
        match input.byte() % 10 {
            0 | 1 => {
                let len = usize::from(input.u16()) % 40_000;
                Self::ClientData(pattern(len, input.byte()), Alteration::read(input))
            }
            2 => Self::ClientKeyUpdate(Alteration::read(input)),
            3 => Self::ClientClose(Alteration::read(input)),
            4 => {
                let (inner_type, content) = match input.byte() % 8 {
                    // Data, its length in two bytes.
                    0 | 1 => {
                        let len = usize::from(input.u16()) % 17_000;
                        (23, pattern(len, input.byte()))
                    }
                    // An alert, or a handshake message, written out.
                    2 | 3 => {
                        let len = usize::from(input.byte() % 4);
                        (21, input.bytes(len))
                    }
                    4 | 5 => {
                        let len = usize::from(input.byte() % 12);
                        (22, input.bytes(len))
                    }
                    // Any type.
                    _ => {
                        let inner_type = input.byte();
                        let len = usize::from(input.byte());
                        (inner_type, input.bytes(len))
                    }
                };
                let padding = match input.byte() % 4 {
                    0 => usize::from(input.u16()) % 17_000,
                    1 => usize::from(input.byte()),
                    _ => 0,
                };
                let version = match input.byte() % 8 {
                    0 => [input.byte(), input.byte()],
                    _ => [3, 3],
                };
                let crafted = Crafted {
                    content,
                    inner_type,
                    padding,
                    version,
                };
                Self::ClientCrafted(crafted, Alteration::read(input))
            }
            5 | 6 => {
                let len = usize::from(input.u16()) % 300_000;
                Self::ServerData(pattern(len, input.byte()))
            }
            7 => Self::ServerKeyUpdate,
            8 => Self::ServerClose,
            _ => Self::ReadSize(match input.byte() % 4 {
                0 => 1 + usize::from(input.u16()) % 4096,
                1 => 2 * MAX_RECORD,
                _ => 64 * 1024 + MAX_RECORD,
            }),
        }
    }
}

/// The rustls client, connected to both servers: what it sends goes to each, what it
/// reads comes from weft.
struct Client {
    conn: UnbufferedClientConnection,
    inbox: Vec<u8>,
    data: Vec<u8>,
    closed_by_peer: bool,
    closed: bool,
}

/// What the client is to seal.
enum Sending<'a> {
    Data(&'a [u8]),
    KeyUpdate,
    Close,
}

impl Client {
    /// The records the client seals for `what`.
    fn seal(&mut self, what: Sending<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        let mut what = Some(what);
        loop {
            let status = self.conn.process_tls_records(&mut []);
            match status.state.expect("the client's state") {
                ConnectionState::EncodeTlsData(mut e) => encode(&mut e, &mut out),
                ConnectionState::TransmitTlsData(t) => t.done(),
                ConnectionState::WriteTraffic(mut w) => {
                    let Some(what) = what.take() else {
                        return out;
                    };
                    let start = out.len();
                    out.resize(start + MAX_RECORD, 0);
                    let sealed = match what {
                        Sending::Data(data) => {
                            let records = data.len().div_ceil(1 << 14).max(1);
                            out.resize(start + data.len() + records * 32, 0);
                            w.encrypt(data, &mut out[start..])
                        }
                        Sending::Close => w.queue_close_notify(&mut out[start..]),
                        Sending::KeyUpdate => {
                            out.truncate(start);
                            w.refresh_traffic_keys().expect("a key update");
                            continue;
                        }
                    };
                    out.truncate(start + sealed.expect("room for the records"));
                    return out;
                }
                other => panic!("the client cannot send in state {other:?}"),
            }
        }
    }

    /// Reads what weft sent; rustls must take all of it.
    fn receive(&mut self, records: &[u8]) {
        self.inbox.extend_from_slice(records);
        let mut out = Vec::new();
        match pump!(self.conn, self.inbox, self.data, &mut out) {
            Ok(closed) => self.closed_by_peer |= closed,
            Err(e) => panic!("rustls refuses records weft sealed: {e}"),
        }
        assert!(self.inbox.is_empty(), "rustls left part of weft's records");
    }
}

/// A reader's verdict so far.
#[derive(Debug, Default)]
struct Reading {
    data: Vec<u8>,
    closed: bool,
    refused: Option<String>,
}

/// The rustls server.
struct RustlsServer {
    conn: UnbufferedServerConnection,
    inbox: Vec<u8>,
    reading: Reading,
}

impl RustlsServer {
    fn receive(&mut self, records: &[u8]) {
        if self.reading.refused.is_some() {
            return;
        }
        self.inbox.extend_from_slice(records);
        // What it answers (its own key update) goes nowhere: weft answers the client.
        let mut out = Vec::new();
        match pump!(self.conn, self.inbox, self.reading.data, &mut out) {
            Ok(closed) => self.reading.closed |= closed,
            Err(e) => self.reading.refused = Some(e.to_string()),
        }
    }

    /// Whether it holds the start of a record.
    fn waits(&self) -> bool {
        self.reading.refused.is_none() && !self.reading.closed && !self.inbox.is_empty()
    }
}

/// Bytes a reader reads, then `WouldBlock`.
#[derive(Default)]
struct Pipe {
    bytes: Vec<u8>,
    at: usize,
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.bytes.len() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let n = buf.len().min(self.bytes.len() - self.at);
        buf[..n].copy_from_slice(&self.bytes[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// weft's server: a link's two directions with the server's keys.
struct WeftServer {
    rx: Rx,
    tx: Tx,
    shared: Shared,
    pipe: Pipe,
    read_size: usize,
    reading: Reading,
}

impl WeftServer {
    fn new(server: UnbufferedServerConnection) -> Self {
        let (secrets, kernel) = server
            .dangerous_into_kernel_connection()
            .expect("the server's keys");
        let shared = Shared::new(Kernel::Server(kernel));
        let sealer = Sealer::new(&secrets.tx.1, secrets.tx.0, shared.seal_limit()).expect("keys");
        let opener = Opener::new(&secrets.rx.1, secrets.rx.0).expect("keys");
        Self {
            rx: Rx::new(opener, Vec::new()),
            tx: Tx::new(sealer),
            shared,
            pipe: Pipe::default(),
            read_size: 64 * 1024 + MAX_RECORD,
            reading: Reading::default(),
        }
    }

    fn receive(&mut self, records: &[u8]) {
        if self.reading.refused.is_some() {
            return;
        }
        self.pipe.bytes.drain(..self.pipe.at);
        self.pipe.at = 0;
        self.pipe.bytes.extend_from_slice(records);
        let mut buf = vec![0; self.read_size];
        loop {
            match self.rx.read(&mut self.pipe, &mut buf, true, &self.shared) {
                Ok(0) => {
                    self.reading.closed = true;
                    break;
                }
                Ok(n) => self.reading.data.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    self.reading.refused = Some(e.to_string());
                    break;
                }
            }
        }
    }

    fn waits(&self) -> bool {
        self.reading.refused.is_none()
            && !self.reading.closed
            && (self.rx.holds_partial_record() || self.pipe.at < self.pipe.bytes.len())
    }

    /// The records weft seals for `data` (all of it), after a key update if one is due.
    fn seal(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut bufs = [IoSlice::new(data)];
        let mut bufs = &mut bufs[..];
        loop {
            let n = self
                .tx
                .seal(bufs, &self.shared, super::traffic::SEAL_STEP)
                .expect("weft seals");
            IoSlice::advance_slices(&mut bufs, n);
            self.tx.flush(&mut out).expect("into memory");
            if bufs.is_empty() || bufs[0].is_empty() {
                return out;
            }
        }
    }

    fn close(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        self.tx.close_notify().expect("a close_notify");
        self.tx.flush(&mut out).expect("into memory");
        out
    }
}

/// Seals records with the client's keys as the input writes them; follows the client's
/// key updates with its own key schedule.
struct Crafter {
    key: LessSafeKey,
    iv: [u8; 12],
    seq: u64,
    kernel: Kernel,
}

impl Crafter {
    fn new(server: UnbufferedServerConnection) -> Self {
        let (secrets, kernel) = server
            .dangerous_into_kernel_connection()
            .expect("the server's keys");
        let (key, iv) = Self::keys(&secrets.rx.1);
        Self {
            key,
            iv,
            seq: secrets.rx.0,
            kernel: Kernel::Server(kernel),
        }
    }

    fn keys(secrets: &ConnectionTrafficSecrets) -> (LessSafeKey, [u8; 12]) {
        let (algorithm, key, iv) = match secrets {
            ConnectionTrafficSecrets::Aes128Gcm { key, iv } => (&ring::aead::AES_128_GCM, key, iv),
            ConnectionTrafficSecrets::Aes256Gcm { key, iv } => (&ring::aead::AES_256_GCM, key, iv),
            ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => {
                (&ring::aead::CHACHA20_POLY1305, key, iv)
            }
            _ => panic!("a suite TLS 1.3 does not define"),
        };
        let key = LessSafeKey::new(UnboundKey::new(algorithm, key.as_ref()).expect("a key"));
        (key, iv.as_ref().try_into().expect("a 12-byte IV"))
    }

    fn nonce(&self) -> Nonce {
        let mut nonce = self.iv;
        for (n, s) in nonce[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *n ^= s;
        }
        Nonce::assume_unique_for_key(nonce)
    }

    /// Counts the records the client sealed; after its key update, takes the next keys.
    fn follow(&mut self, records: &[u8], key_update: bool) {
        let mut at = 0;
        while at < records.len() {
            at += HEADER + usize::from(u16::from_be_bytes([records[at + 3], records[at + 4]]));
            self.seq += 1;
        }
        if key_update {
            let secrets = self.kernel.update_rx().expect("the next keys");
            (self.key, self.iv) = Self::keys(&secrets);
            self.seq = 0;
        }
    }

    /// The record `crafted` describes, in place of `sealed`, the client's one record
    /// sealed with the same sequence number (which must open with the keys followed);
    /// and the same with the legacy version 0x0303 when it has another.
    fn craft(&mut self, sealed: &[u8], crafted: &Crafted) -> (Vec<u8>, Option<Vec<u8>>) {
        let mut check = sealed.to_vec();
        let header: [u8; HEADER] = check[..HEADER].try_into().expect("a header");
        self.key
            .open_in_place(self.nonce(), Aad::from(header), &mut check[HEADER..])
            .expect("the crafter follows the client's keys");
        let record = self.seal(crafted, crafted.version);
        let with_0303 = (crafted.version != [3, 3]).then(|| self.seal(crafted, [3, 3]));
        self.seq += 1;
        (record, with_0303)
    }

    fn seal(&self, crafted: &Crafted, version: [u8; 2]) -> Vec<u8> {
        let mut inner = crafted.content.clone();
        inner.push(crafted.inner_type);
        inner.resize(inner.len() + crafted.padding, 0);
        let len = inner.len() + 16;
        let header = [23, version[0], version[1], (len >> 8) as u8, len as u8];
        let tag = self
            .key
            .seal_in_place_separate_tag(self.nonce(), Aad::from(header), &mut inner)
            .expect("sealed");
        let mut record = header.to_vec();
        record.extend_from_slice(&inner);
        record.extend_from_slice(tag.as_ref());
        record
    }
}

/// Both readers after the same records.
struct Readers {
    rustls: RustlsServer,
    weft: WeftServer,
    /// A record's header was altered: weft refused it, and the run is over.
    header_altered: bool,
    /// Records held back for weft and for rustls.
    held: (Vec<u8>, Vec<u8>),
}

/// Whether `at` is in the type or the legacy version of a record's header in `records`.
fn in_header(records: &[u8], at: usize) -> bool {
    let mut start = 0;
    while start + HEADER <= records.len() && start <= at {
        if at < start + 3 {
            return true;
        }
        start += HEADER + usize::from(u16::from_be_bytes([records[start + 3], records[start + 4]]));
    }
    false
}

impl Readers {
    /// Gives both `records` altered as asked, and compares what they make of them. A
    /// record rustls reads may differ in its legacy version only (`for_rustls`): weft
    /// authenticates the version as read, rustls as 0x0303.
    fn receive(&mut self, records: Vec<u8>, for_rustls: Option<Vec<u8>>, alteration: Alteration) {
        let mut for_rustls = for_rustls.unwrap_or_else(|| records.clone());
        let mut for_weft = std::mem::take(&mut self.held.0);
        for_weft.extend_from_slice(&records);
        for_rustls.splice(..0, std::mem::take(&mut self.held.1));
        match alteration {
            Alteration::Hold => self.held = (for_weft, for_rustls),
            Alteration::None => self.both(&for_rustls, &for_weft),
            Alteration::Flip { at, mask } => {
                if !for_weft.is_empty() {
                    let at = at % for_weft.len();
                    for_weft[at] ^= mask;
                    for_rustls[at] ^= mask;
                    if in_header(&for_rustls, at) {
                        // rustls builds a record's additional data as 23, 0x0303 and the
                        // length, whatever the header says: it may still open it. weft
                        // authenticates the header it read (RFC 8446 §5.2).
                        self.weft.receive(&for_weft);
                        if self.weft.waits() {
                            self.weft.receive(&[0; 2 * MAX_RECORD]);
                        }
                        // (After a close_notify, nothing is read.)
                        let reading = &self.weft.reading;
                        assert!(
                            reading.refused.is_some() || reading.closed,
                            "weft took a record whose header was altered"
                        );
                        self.header_altered = true;
                        return;
                    }
                }
                self.both(&for_rustls, &for_weft);
            }
            Alteration::Cut { keep } => {
                let keep = keep % (for_weft.len() + 1);
                self.both(&for_rustls[..keep], &for_weft[..keep]);
            }
            Alteration::Split { at } => {
                let at = at % (for_weft.len() + 1);
                self.both(&for_rustls[..at], &for_weft[..at]);
                self.both(&for_rustls[at..], &for_weft[at..]);
            }
        }
    }

    fn both(&mut self, for_rustls: &[u8], for_weft: &[u8]) {
        self.rustls.receive(for_rustls);
        self.weft.receive(for_weft);
        self.compare();
    }

    /// Both read the same data, closed alike, and refused alike: one that refused while
    /// the other waits for the rest of a record must be joined by the other when more
    /// bytes come.
    fn compare(&mut self) {
        let filler = vec![0; 2 * MAX_RECORD];
        match (&self.rustls.reading.refused, &self.weft.reading.refused) {
            (Some(_), None) if self.weft.waits() => self.weft.receive(&filler),
            (None, Some(_)) if self.rustls.waits() => self.rustls.receive(&filler),
            _ => {}
        }
        let (r, w) = (&self.rustls.reading, &self.weft.reading);
        assert_eq!(
            r.refused.is_some(),
            w.refused.is_some(),
            "rustls: {:?}, weft: {:?}",
            r.refused,
            w.refused
        );
        if r.refused.is_some() {
            let common = r.data.len().min(w.data.len());
            assert!(r.data[..common] == w.data[..common], "different data");
        } else {
            assert_eq!(r.data.len(), w.data.len(), "data read");
            assert!(r.data == w.data, "different data");
            assert_eq!(r.closed, w.closed, "close_notify");
        }
    }

    /// Whether the run is over: a reader refused what it read, or a header was altered.
    fn over(&self) -> bool {
        self.rustls.reading.refused.is_some() || self.header_altered
    }
}

/// One run: the suite and the operations `data` chooses.
#[cfg_attr(not(feature = "tls-internals"), allow(unreachable_pub))]
pub fn run(data: &[u8]) {
    let mut input = Input(data);
    let suite = match input.byte() % 3 {
        0 => provider::cipher_suite::TLS13_AES_128_GCM_SHA256,
        1 => provider::cipher_suite::TLS13_AES_256_GCM_SHA384,
        _ => provider::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
    };
    let (client_config, server_config) = configs(suite);
    let (client, rustls_server) = handshake(&client_config, &server_config);
    let (_, weft_server) = handshake(&client_config, &server_config);
    let (_, crafting_server) = handshake(&client_config, &server_config);
    let mut client = Client {
        conn: client,
        inbox: Vec::new(),
        data: Vec::new(),
        closed_by_peer: false,
        closed: false,
    };
    let mut readers = Readers {
        rustls: RustlsServer {
            conn: rustls_server,
            inbox: Vec::new(),
            reading: Reading::default(),
        },
        weft: WeftServer::new(weft_server),
        header_altered: false,
        held: (Vec::new(), Vec::new()),
    };
    let mut crafter = Crafter::new(crafting_server);
    let mut sent_by_client = Vec::new();
    let mut altered = false;
    let mut sent_by_weft = Vec::new();
    let mut weft_closed = false;
    for _ in 0..MAX_OPERATIONS {
        if input.0.is_empty() || readers.over() {
            break;
        }
        let operation = Operation::read(&mut input);
        match operation {
            Operation::ClientData(_, _)
            | Operation::ClientKeyUpdate(_)
            | Operation::ClientClose(_)
            | Operation::ClientCrafted(_, _)
                if client.closed => {}
            Operation::ClientData(data, alteration) => {
                let records = client.seal(Sending::Data(&data));
                crafter.follow(&records, false);
                altered |= !alteration.keeps_records();
                sent_by_client.extend_from_slice(&data);
                readers.receive(records, None, alteration);
            }
            Operation::ClientKeyUpdate(alteration) => {
                let records = client.seal(Sending::KeyUpdate);
                crafter.follow(&records, true);
                altered |= !alteration.keeps_records();
                readers.receive(records, None, alteration);
            }
            Operation::ClientClose(alteration) => {
                let records = client.seal(Sending::Close);
                crafter.follow(&records, false);
                client.closed = true;
                altered |= !alteration.keeps_records();
                readers.receive(records, None, alteration);
            }
            Operation::ClientCrafted(crafted, alteration) => {
                // The client seals one byte for the sequence number the crafted record
                // takes.
                let sealed = client.seal(Sending::Data(&[0]));
                let (record, for_rustls) = crafter.craft(&sealed, &crafted);
                altered = true;
                readers.receive(record, for_rustls, alteration);
            }
            Operation::ServerData(_) | Operation::ServerKeyUpdate | Operation::ServerClose
                if weft_closed => {}
            Operation::ServerData(data) => {
                let records = readers.weft.seal(&data);
                sent_by_weft.extend_from_slice(&data);
                client.receive(&records);
            }
            // As on a link, the key update goes before weft's next data (a link seals
            // none without data, so never two in a row).
            Operation::ServerKeyUpdate => readers.weft.shared.ask_update(),
            Operation::ServerClose => {
                let records = readers.weft.close();
                weft_closed = true;
                client.receive(&records);
                assert!(
                    client.closed_by_peer,
                    "rustls did not see weft's close_notify"
                );
            }
            Operation::ReadSize(size) => readers.weft.read_size = size,
        }
        assert!(
            client.data == sent_by_weft,
            "rustls read other data than weft sent"
        );
        if !altered && !readers.over() && readers.held.0.is_empty() {
            assert!(
                readers.weft.reading.data == sent_by_client,
                "weft read other data than rustls sent"
            );
        }
    }
}

#[cfg(test)]
mod tests;
