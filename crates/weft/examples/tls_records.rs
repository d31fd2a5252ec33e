//! TLS 1.3 records sealed and opened by weft's record layer against rustls's own, in
//! memory, after the same handshake and with the same cipher suite.
//!
//! `cargo run --release -p weft --features tls-internals --example tls_records [RUNS]`
//!
//! For each suite (TLS13_AES_128_GCM_SHA256, TLS13_AES_256_GCM_SHA384 (weft's default),
//! TLS13_CHACHA20_POLY1305_SHA256) and payload size (8 B, 1 KiB, 16 KiB, 64 KiB: a batch
//! is up to 64 KiB, four records), each
//! implementation seals a stream of payloads from a client's keys into one buffer, then
//! opens it with the server's keys into the reader's buffer, as a link does:
//!
//! - `weft`: `record::Sealer` (the plaintext copied into the output, sealed there) and
//!   `record::Opener` (each record decrypted where it lies, its plaintext moved to follow
//!   the last in the same pass).
//! - `rustls`: `UnbufferedClientConnection` in `WriteTraffic` (`encrypt` into a
//!   caller-owned buffer, one `process_tls_records` per payload as a link's write would
//!   need) and `UnbufferedServerConnection` in `ReadTraffic` (`next_record`, each
//!   record's plaintext copied into the reader's buffer).
//! - `rustls-1`: the same, with one `WriteTraffic` state for all the payloads of a pass
//!   (what rustls's sealing costs without its state machine's turn per write).
//!
//! Every measurement has its own handshake; the implementations take turns run by run
//! (the first of each run rotates), so that a slower moment of the machine falls on each
//! in turn. Printed: MB/s of plaintext and ns per payload, median (min–max) over the runs.

use std::io::IoSlice;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::client::UnbufferedClientConnection;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::UnbufferedServerConnection;
use rustls::unbuffered::{ConnectionState, EncodeError};
use rustls::{ClientConfig, RootCertStore, ServerConfig, SupportedCipherSuite};
use weft::tls_internals::{Opener, Sealer};

/// The payload sizes measured.
const SIZES: [usize; 4] = [8, 1024, 16 * 1024, 64 * 1024];
/// Plaintext sealed then opened in one pass (one buffer of records).
const PASS_BYTES: usize = 1 << 20;
/// Records in one pass at most (the 8-byte payloads).
const PASS_RECORDS: usize = 8192;
/// Time each measurement takes at least.
const MEASURE: Duration = Duration::from_millis(300);
/// Bytes a record adds to its plaintext (header, content type, tag).
const OVERHEAD: usize = 5 + 1 + 16;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Implementation {
    Weft,
    Rustls,
    RustlsOneState,
}

impl Implementation {
    const ALL: [Self; 3] = [Self::Weft, Self::Rustls, Self::RustlsOneState];

    const fn name(self) -> &'static str {
        match self {
            Self::Weft => "weft",
            Self::Rustls => "rustls",
            Self::RustlsOneState => "rustls-1",
        }
    }
}

/// Nanoseconds spent sealing and opening, for the bytes and payloads measured.
#[derive(Default, Clone, Copy)]
struct Measured {
    seal_ns: u128,
    open_ns: u128,
    bytes: u64,
    payloads: u64,
}

impl Measured {
    fn mb_per_s(self, ns: u128) -> f64 {
        self.bytes as f64 * 1e3 / ns as f64
    }

    fn ns_per_payload(self, ns: u128) -> f64 {
        ns as f64 / self.payloads as f64
    }
}

/// Client and server configurations offering one TLS 1.3 suite.
fn configs(suite: SupportedCipherSuite) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let provider = Arc::new(CryptoProvider {
        cipher_suites: vec![suite],
        ..ring::default_provider()
    });
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let cert = CertificateDer::from(certified.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let mut server = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .unwrap();
    server.enable_secret_extraction = true;
    server.send_tls13_tickets = 0;
    let mut roots = RootCertStore::empty();
    roots.add(cert).unwrap();
    let mut client = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    client.enable_secret_extraction = true;
    (Arc::new(client), Arc::new(server))
}

/// One turn of a connection's handshake: processes `inbox`, appends what it sends to
/// `outbox`; true once it may send data and no longer handshakes.
macro_rules! turn {
    ($conn:expr, $inbox:expr, $outbox:expr) => {{
        loop {
            let status = $conn.process_tls_records(&mut $inbox[..]);
            let discard = status.discard;
            let next = match status.state.expect("handshake") {
                ConnectionState::EncodeTlsData(mut e) => {
                    let start = $outbox.len();
                    $outbox.resize(start + 20_000, 0);
                    match e.encode(&mut $outbox[start..]) {
                        Ok(n) => $outbox.truncate(start + n),
                        Err(EncodeError::AlreadyEncoded) => $outbox.truncate(start),
                        Err(e) => panic!("{e}"),
                    }
                    None
                }
                ConnectionState::TransmitTlsData(t) => {
                    t.done();
                    None
                }
                ConnectionState::BlockedHandshake => Some(false),
                ConnectionState::WriteTraffic(_) => Some(true),
                other => panic!("{other:?} during the handshake"),
            };
            $inbox.drain(..discard);
            if let Some(done) = next {
                break done && !$conn.is_handshaking();
            }
        }
    }};
}

/// A client and a server of `suite` after their handshake, in memory.
fn handshake(
    suite: SupportedCipherSuite,
) -> (UnbufferedClientConnection, UnbufferedServerConnection) {
    let (client_config, server_config) = configs(suite);
    let mut client =
        UnbufferedClientConnection::new(client_config, "localhost".try_into().unwrap()).unwrap();
    let mut server = UnbufferedServerConnection::new(server_config).unwrap();
    let (mut to_server, mut to_client) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let client_done = turn!(client, to_client, to_server);
        let server_done = turn!(server, to_server, to_client);
        if client_done && server_done && to_server.is_empty() && to_client.is_empty() {
            assert_eq!(client.negotiated_cipher_suite(), Some(suite));
            return (client, server);
        }
    }
    panic!("the handshake did not finish");
}

/// What one pass seals and opens: `count` payloads of `size` bytes.
struct Pass {
    payload: Vec<u8>,
    count: usize,
}

impl Pass {
    fn new(size: usize) -> Self {
        Self {
            payload: (0..size).map(|i| (i * 7 + 3) as u8).collect(),
            count: (PASS_BYTES / size).clamp(1, PASS_RECORDS),
        }
    }

    fn plaintext(&self) -> usize {
        self.payload.len() * self.count
    }

    /// Room for the records of a pass.
    fn ciphertext_room(&self) -> usize {
        self.plaintext() + (self.plaintext() / (16 * 1024) + self.count + 1) * OVERHEAD
    }
}

/// Seals then opens passes of `size` with weft's record layer for at least `MEASURE`.
fn measure_weft(suite: SupportedCipherSuite, size: usize) -> Measured {
    let (client, server) = handshake(suite);
    let (client, _) = client.dangerous_into_kernel_connection().unwrap();
    let (server, _) = server.dangerous_into_kernel_connection().unwrap();
    let mut sealer = Sealer::new(&client.tx.1, client.tx.0).unwrap();
    let mut opener = Opener::new(&server.rx.1, server.rx.0).unwrap();
    let pass = Pass::new(size);
    let mut sealed = Vec::with_capacity(pass.ciphertext_room());
    let mut reader = vec![0u8; pass.ciphertext_room()];
    let mut m = Measured::default();
    let mut passes = 0;
    loop {
        sealed.clear();
        let bufs = [IoSlice::new(&pass.payload)];
        let t = Instant::now();
        for _ in 0..pass.count {
            sealer.seal(&bufs, &mut sealed).unwrap();
        }
        let seal_ns = t.elapsed().as_nanos();
        // As the socket would put them in the reader's buffer (not timed).
        reader[..sealed.len()].copy_from_slice(&sealed);
        let t = Instant::now();
        let (plain, used) = opener.open(&mut reader[..sealed.len()]).unwrap();
        let open_ns = t.elapsed().as_nanos();
        check(&pass, &reader[..plain], passes);
        assert_eq!(used, sealed.len());
        if passes > 0 {
            m.add(seal_ns, open_ns, &pass);
            if m.seal_ns + m.open_ns > MEASURE.as_nanos() {
                return m;
            }
        }
        passes += 1;
    }
}

/// Seals then opens passes of `size` with rustls's unbuffered connections for at least
/// `MEASURE`; `one_state`: one `WriteTraffic` state per pass, else one per payload.
fn measure_rustls(suite: SupportedCipherSuite, size: usize, one_state: bool) -> Measured {
    let (mut client, mut server) = handshake(suite);
    let pass = Pass::new(size);
    let mut sealed = vec![0u8; pass.ciphertext_room()];
    let mut incoming = vec![0u8; pass.ciphertext_room()];
    let mut reader = vec![0u8; pass.plaintext()];
    let mut m = Measured::default();
    let mut passes = 0;
    loop {
        let mut len = 0;
        let t = Instant::now();
        if one_state {
            let Ok(ConnectionState::WriteTraffic(mut w)) =
                client.process_tls_records(&mut []).state
            else {
                panic!("not in WriteTraffic");
            };
            for _ in 0..pass.count {
                len += w.encrypt(&pass.payload, &mut sealed[len..]).unwrap();
            }
        } else {
            for _ in 0..pass.count {
                let Ok(ConnectionState::WriteTraffic(mut w)) =
                    client.process_tls_records(&mut []).state
                else {
                    panic!("not in WriteTraffic");
                };
                len += w.encrypt(&pass.payload, &mut sealed[len..]).unwrap();
            }
        }
        let seal_ns = t.elapsed().as_nanos();
        incoming[..len].copy_from_slice(&sealed[..len]);
        let t = Instant::now();
        let (mut at, mut plain) = (0, 0);
        loop {
            let status = server.process_tls_records(&mut incoming[at..len]);
            let mut discard = status.discard;
            match status.state.unwrap() {
                ConnectionState::ReadTraffic(mut r) => {
                    while let Some(record) = r.next_record() {
                        let record = record.unwrap();
                        discard += record.discard;
                        let n = record.payload.len();
                        reader[plain..plain + n].copy_from_slice(record.payload);
                        plain += n;
                    }
                }
                ConnectionState::WriteTraffic(_) => {
                    at += discard;
                    break;
                }
                other => panic!("{other:?} while reading"),
            }
            at += discard;
        }
        let open_ns = t.elapsed().as_nanos();
        check(&pass, &reader[..plain], passes);
        assert_eq!(at, len);
        if passes > 0 {
            m.add(seal_ns, open_ns, &pass);
            if m.seal_ns + m.open_ns > MEASURE.as_nanos() {
                return m;
            }
        }
        passes += 1;
    }
}

impl Measured {
    fn add(&mut self, seal_ns: u128, open_ns: u128, pass: &Pass) {
        self.seal_ns += seal_ns;
        self.open_ns += open_ns;
        self.bytes += pass.plaintext() as u64;
        self.payloads += pass.count as u64;
    }
}

/// The plaintext opened is the plaintext sealed (all of it on the first pass, its length
/// and its ends after).
fn check(pass: &Pass, opened: &[u8], passes: usize) {
    assert_eq!(opened.len(), pass.plaintext());
    let size = pass.payload.len();
    if passes == 0 {
        assert!(opened.chunks(size).all(|c| c == &pass.payload[..]));
    } else {
        assert_eq!(&opened[..size], &pass.payload[..]);
        assert_eq!(&opened[opened.len() - size..], &pass.payload[..]);
    }
}

fn median_min_max(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(7, |a| a.parse().expect("RUNS: a number"));
    let suites = [
        (
            "TLS13_AES_128_GCM_SHA256",
            ring::cipher_suite::TLS13_AES_128_GCM_SHA256,
        ),
        // What weft negotiates by default (rustls's order).
        (
            "TLS13_AES_256_GCM_SHA384",
            ring::cipher_suite::TLS13_AES_256_GCM_SHA384,
        ),
        (
            "TLS13_CHACHA20_POLY1305_SHA256",
            ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256,
        ),
    ];
    println!("{runs} alternated runs; median (min-max) over the runs");
    for (suite_name, suite) in suites {
        for size in SIZES {
            let mut results: Vec<Vec<Measured>> = vec![Vec::new(); Implementation::ALL.len()];
            for run in 0..runs {
                for k in 0..Implementation::ALL.len() {
                    let i = (run + k) % Implementation::ALL.len();
                    let m = match Implementation::ALL[i] {
                        Implementation::Weft => measure_weft(suite, size),
                        Implementation::Rustls => measure_rustls(suite, size, false),
                        Implementation::RustlsOneState => measure_rustls(suite, size, true),
                    };
                    results[i].push(m);
                }
            }
            for (i, imp) in Implementation::ALL.iter().enumerate() {
                for (op, ns) in [
                    ("seal", (|m: &Measured| m.seal_ns) as fn(&Measured) -> u128),
                    ("open", |m: &Measured| m.open_ns),
                ] {
                    let (mb, mb_min, mb_max) =
                        median_min_max(results[i].iter().map(|m| m.mb_per_s(ns(m))).collect());
                    let (t, t_min, t_max) = median_min_max(
                        results[i].iter().map(|m| m.ns_per_payload(ns(m))).collect(),
                    );
                    println!(
                        "{suite_name:<31} {size:>6} B  {op}  {:<9} {mb:>8.0} MB/s ({mb_min:.0}-{mb_max:.0})  {t:>9.1} ns/payload ({t_min:.1}-{t_max:.1})",
                        imp.name()
                    );
                }
            }
        }
    }
}
