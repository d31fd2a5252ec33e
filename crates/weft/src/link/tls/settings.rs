//! TLS settings: Zenoh's `transport.link.tls.*` keys and their per-endpoint `#` forms,
//! and the rustls configurations built from them.
//!
//! Certificates and keys are PEM documents, named by path (`root_ca_certificate`, and
//! `root_ca_certificate_file` on an endpoint), inline in base64 (`*_base64`), or inline
//! as PEM text on an endpoint (`*_raw`). Files are read each time a configuration is
//! built: when a listener is bound, and for every connection attempt.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::{ParsedCertificate, WebPkiClientVerifier};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};

use super::TlsError;
use crate::endpoint::parse_buffer_size;

/// The one TLS version weft speaks (Zenoh's links negotiate it too): its record layer
/// (`record`) is TLS 1.3's.
const TLS13: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS13];
use crate::link::TcpBuffers;

/// Where a PEM document comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum PemSource {
    /// A file, read when a configuration is built.
    File(PathBuf),
    /// The document itself (decoded from a `*_base64` setting, or an endpoint's `*_raw`).
    Inline(Arc<[u8]>),
}

impl fmt::Debug for PemSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(p) => write!(f, "File({})", p.display()),
            // Private keys come this way: never printed.
            Self::Inline(d) => write!(f, "Inline({} bytes)", d.len()),
        }
    }
}

impl PemSource {
    /// The document a `*_base64` setting holds, if `text` is base64.
    pub(crate) fn from_base64(text: &str) -> Option<Self> {
        pem_source(Form::Base64, text).ok()
    }

    fn load(&self, what: &'static str) -> Result<Arc<[u8]>, TlsError> {
        match self {
            Self::Inline(d) => Ok(d.clone()),
            Self::File(path) => match std::fs::read(path) {
                Ok(bytes) if bytes.is_empty() => Err(TlsError::Empty {
                    what,
                    path: path.display().to_string(),
                }),
                Ok(bytes) => Ok(bytes.into()),
                Err(e) => Err(TlsError::Read {
                    what,
                    path: path.display().to_string(),
                    reason: e.to_string(),
                }),
            },
        }
    }
}

/// The PEM documents a TLS link may use, one slot each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    RootCa,
    ListenCertificate,
    ListenPrivateKey,
    ConnectCertificate,
    ConnectPrivateKey,
}

impl Slot {
    const ALL: [Self; 5] = [
        Self::RootCa,
        Self::ListenCertificate,
        Self::ListenPrivateKey,
        Self::ConnectCertificate,
        Self::ConnectPrivateKey,
    ];

    /// The setting's name (the file form's, in `transport.link.tls`).
    const fn name(self) -> &'static str {
        match self {
            Self::RootCa => "root_ca_certificate",
            Self::ListenCertificate => "listen_certificate",
            Self::ListenPrivateKey => "listen_private_key",
            Self::ConnectCertificate => "connect_certificate",
            Self::ConnectPrivateKey => "connect_private_key",
        }
    }
}

/// How a setting's value names its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    File,
    Base64,
    Raw,
}

/// TLS settings of a node (`transport.link.tls`), overridden per endpoint by its `#`
/// configuration ([`TlsSettings::for_endpoint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    /// `root_ca_certificate`: the CA that verifies the listener's certificate (connecting;
    /// added to the Web PKI roots, as Zenoh does) and, with mTLS, the clients' (listening).
    pub root_ca_certificate: Option<PemSource>,
    /// `listen_certificate`: the certificate chain a listener presents.
    pub listen_certificate: Option<PemSource>,
    /// `listen_private_key`: its private key (PKCS#1, PKCS#8 or SEC1).
    pub listen_private_key: Option<PemSource>,
    /// `connect_certificate`: the certificate chain a connecting node presents with mTLS.
    pub connect_certificate: Option<PemSource>,
    /// `connect_private_key`: its private key.
    pub connect_private_key: Option<PemSource>,
    /// `enable_mtls`: a listener requires a client certificate signed by
    /// `root_ca_certificate`, and a connecting node presents its own; TLS 1.3 only.
    pub enable_mtls: bool,
    /// `verify_name_on_connect`: the listener's certificate must name the host connected
    /// to (default true; when false, any name signed by a trusted CA is accepted).
    pub verify_name_on_connect: bool,
    /// `close_link_on_expiration`: a link is closed when the peer's certificate chain
    /// expires (a listener knows its clients' only with mTLS).
    pub close_link_on_expiration: bool,
    /// `so_sndbuf` / `so_rcvbuf`: kernel buffer sizes of TLS links.
    pub buffers: TcpBuffers,
    /// An endpoint's `tls_handshake_timeout_ms`: the TLS handshake's own limit, within
    /// the transport's open or accept timeout.
    pub handshake_timeout: Option<Duration>,
}

impl Default for TlsSettings {
    fn default() -> Self {
        Self {
            root_ca_certificate: None,
            listen_certificate: None,
            listen_private_key: None,
            connect_certificate: None,
            connect_private_key: None,
            enable_mtls: false,
            verify_name_on_connect: true,
            close_link_on_expiration: false,
            buffers: TcpBuffers::default(),
            handshake_timeout: None,
        }
    }
}

/// A setting that cannot be used: its name (never its value, which may be a key), and
/// what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSetting {
    /// The setting's name, as written.
    pub key: String,
    /// What is wrong or expected.
    pub expected: &'static str,
}

impl TlsSettings {
    fn slot_mut(&mut self, slot: Slot) -> &mut Option<PemSource> {
        match slot {
            Slot::RootCa => &mut self.root_ca_certificate,
            Slot::ListenCertificate => &mut self.listen_certificate,
            Slot::ListenPrivateKey => &mut self.listen_private_key,
            Slot::ConnectCertificate => &mut self.connect_certificate,
            Slot::ConnectPrivateKey => &mut self.connect_private_key,
        }
    }

    /// These settings overridden by an endpoint's `#` configuration, Zenoh's names:
    /// `root_ca_certificate_file` / `_raw` / `_base64` (and likewise for the listen and
    /// connect certificates and keys), `enable_mtls`, `verify_name_on_connect`,
    /// `close_link_on_expiration`, `tls_handshake_timeout_ms`, `so_sndbuf`, `so_rcvbuf`.
    /// Any other key is refused: what it asks for would not be done.
    pub fn for_endpoint(&self, config: &[(String, String)]) -> Result<Self, BadSetting> {
        let mut s = self.clone();
        for (key, value) in config {
            let bad = |expected| BadSetting {
                key: key.clone(),
                expected,
            };
            let flag = || match value.as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad("true or false")),
            };
            match key.as_str() {
                "enable_mtls" => s.enable_mtls = flag()?,
                "verify_name_on_connect" => s.verify_name_on_connect = flag()?,
                "close_link_on_expiration" => s.close_link_on_expiration = flag()?,
                "tls_handshake_timeout_ms" => {
                    let ms = value
                        .parse::<u64>()
                        .ok()
                        .filter(|ms| *ms > 0)
                        .ok_or_else(|| bad("a positive number of milliseconds"))?;
                    s.handshake_timeout = Some(Duration::from_millis(ms));
                }
                "so_sndbuf" | "so_rcvbuf" => {
                    let size = parse_buffer_size(value)
                        .ok_or_else(|| bad("a buffer size in bytes, 4096..=1073741824"))?;
                    if key == "so_sndbuf" {
                        s.buffers.send = size;
                    } else {
                        s.buffers.recv = size;
                    }
                }
                _ => {
                    let (slot, form) = document_key(key, true).ok_or_else(|| {
                        bad(
                            "a TLS setting weft implements (certificates, keys, enable_mtls, \
                             verify_name_on_connect, close_link_on_expiration, \
                             tls_handshake_timeout_ms, so_sndbuf, so_rcvbuf)",
                        )
                    })?;
                    *s.slot_mut(slot) =
                        Some(pem_source(form, value).map_err(|_| bad("base64 of a PEM document"))?);
                }
            }
        }
        Ok(s)
    }

    /// The configuration of a TLS listener: its certificate and key, and with mTLS the
    /// verifier of client certificates. TLS 1.3 only.
    pub fn server_config(&self) -> Result<Arc<ServerConfig>, TlsError> {
        let (Some(cert), Some(key)) = (&self.listen_certificate, &self.listen_private_key) else {
            return Err(TlsError::Missing(
                "listening on TLS needs listen_certificate and listen_private_key",
            ));
        };
        let chain = certificates(&cert.load("listen_certificate")?, "listen_certificate")?;
        let key = private_key(&key.load("listen_private_key")?, "listen_private_key")?;
        let provider = provider();
        let builder =
            ServerConfig::builder_with_provider(provider.clone()).with_protocol_versions(TLS13)?;
        let mut config = if self.enable_mtls {
            let roots = self.roots()?.ok_or(TlsError::Missing(
                "enable_mtls needs root_ca_certificate (the CA of the clients' certificates)",
            ))?;
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .map_err(|e| TlsError::Config(e.to_string()))?;
            builder
                .with_client_cert_verifier(verifier)
                .with_single_cert(chain, key)?
        } else {
            builder.with_no_client_auth().with_single_cert(chain, key)?
        };
        // weft's record layer takes the traffic keys once the handshake is done.
        config.enable_secret_extraction = true;
        Ok(Arc::new(config))
    }

    /// The configuration of a TLS connection: the Web PKI roots and
    /// `root_ca_certificate`, and with mTLS the certificate to present. TLS 1.3 only.
    pub fn client_config(&self) -> Result<Arc<ClientConfig>, TlsError> {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        if let Some(ca) = self.roots()? {
            roots.roots.extend(ca.roots);
        }
        let provider = provider();
        let builder =
            ClientConfig::builder_with_provider(provider.clone()).with_protocol_versions(TLS13)?;
        let builder = if self.verify_name_on_connect {
            builder.with_root_certificates(roots)
        } else {
            tracing::warn!("TLS: the names in servers' certificates are not verified (verify_name_on_connect: false)");
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyNameVerifier::new(roots, &provider)?))
        };
        let mut config = if self.enable_mtls {
            let (Some(cert), Some(key)) = (&self.connect_certificate, &self.connect_private_key)
            else {
                return Err(TlsError::Missing(
                    "enable_mtls needs connect_certificate and connect_private_key to connect",
                ));
            };
            let chain = certificates(&cert.load("connect_certificate")?, "connect_certificate")?;
            let key = private_key(&key.load("connect_private_key")?, "connect_private_key")?;
            builder.with_client_auth_cert(chain, key)?
        } else {
            builder.with_no_client_auth()
        };
        config.enable_secret_extraction = true;
        Ok(Arc::new(config))
    }

    /// The trust anchors of `root_ca_certificate`, if set.
    fn roots(&self) -> Result<Option<RootCertStore>, TlsError> {
        let Some(ca) = &self.root_ca_certificate else {
            return Ok(None);
        };
        let mut store = RootCertStore::empty();
        for cert in certificates(&ca.load("root_ca_certificate")?, "root_ca_certificate")? {
            store
                .add(cert)
                .map_err(|e| TlsError::BadDocument("root_ca_certificate", e.to_string()))?;
        }
        Ok(Some(store))
    }
}

/// The cryptography: `ring`.
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The slot and form a document setting's name asks for: `NAME` (a path) and
/// `NAME_base64` in `transport.link.tls`; `NAME_file`, `NAME_raw`, `NAME_base64` on an
/// endpoint.
fn document_key(key: &str, endpoint: bool) -> Option<(Slot, Form)> {
    Slot::ALL.into_iter().find_map(|slot| {
        let suffix = key.strip_prefix(slot.name())?;
        let form = match suffix {
            "_base64" => Form::Base64,
            "" if !endpoint => Form::File,
            "_file" if endpoint => Form::File,
            "_raw" if endpoint => Form::Raw,
            _ => return None,
        };
        Some((slot, form))
    })
}

/// Whether an endpoint's `#` configuration key is one a TLS endpoint takes.
pub(crate) fn is_endpoint_key(key: &str) -> bool {
    matches!(
        key,
        "enable_mtls"
            | "verify_name_on_connect"
            | "close_link_on_expiration"
            | "tls_handshake_timeout_ms"
            | "so_sndbuf"
            | "so_rcvbuf"
    ) || document_key(key, true).is_some()
}

fn pem_source(form: Form, text: &str) -> Result<PemSource, base64::DecodeError> {
    Ok(match form {
        Form::File => PemSource::File(PathBuf::from(text)),
        Form::Raw => PemSource::Inline(text.as_bytes().into()),
        Form::Base64 => PemSource::Inline(
            base64::engine::general_purpose::STANDARD
                .decode(text.trim())?
                .into(),
        ),
    })
}

/// The certificates of a PEM document (at least one).
fn certificates(pem: &[u8], what: &'static str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let chain = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::BadDocument(what, e.to_string()))?;
    if chain.is_empty() {
        return Err(TlsError::BadDocument(what, "no CERTIFICATE in it".into()));
    }
    Ok(chain)
}

/// The first private key of a PEM document: PKCS#1 (RSA), PKCS#8 or SEC1 (EC).
fn private_key(pem: &[u8], what: &'static str) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| TlsError::BadDocument(what, e.to_string()))
}

/// Verifies a listener's certificate chain against the trusted roots (signatures,
/// validity, usage) without matching its names to the host connected to
/// (`verify_name_on_connect: false`).
#[derive(Debug)]
struct AnyNameVerifier {
    roots: Arc<RootCertStore>,
    algorithms: WebPkiSupportedAlgorithms,
    /// For the signature schemes only.
    inner: Arc<WebPkiServerVerifier>,
}

impl AnyNameVerifier {
    fn new(roots: RootCertStore, provider: &Arc<CryptoProvider>) -> Result<Self, TlsError> {
        let roots = Arc::new(roots);
        let inner = WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .map_err(|e| TlsError::Config(e.to_string()))?;
        Ok(Self {
            roots,
            algorithms: provider.signature_verification_algorithms,
            inner,
        })
    }
}

impl ServerCertVerifier for AnyNameVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let cert = ParsedCertificate::try_from(end_entity)?;
        rustls::client::verify_server_cert_signed_by_trust_anchor(
            &cert,
            &self.roots,
            intermediates,
            now,
            self.algorithms.all,
        )?;
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_keys_override_and_unknown_ones_are_refused() {
        let base = TlsSettings::default();
        let config = [
            (
                "root_ca_certificate_file".to_string(),
                "/ca.pem".to_string(),
            ),
            ("connect_certificate_raw".to_string(), "PEM".to_string()),
            ("enable_mtls".to_string(), "true".to_string()),
            ("tls_handshake_timeout_ms".to_string(), "2500".to_string()),
            ("so_rcvbuf".to_string(), "65536".to_string()),
        ];
        let s = base.for_endpoint(&config).unwrap();
        assert_eq!(
            s.root_ca_certificate,
            Some(PemSource::File("/ca.pem".into()))
        );
        assert_eq!(
            s.connect_certificate,
            Some(PemSource::Inline(b"PEM"[..].into()))
        );
        assert!(s.enable_mtls);
        assert_eq!(s.handshake_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(s.buffers.recv, 65536);
        for bad in [
            ("iface", "lo"),
            ("enable_mtls", "1"),
            ("root_ca_certificate", "/x"),
        ] {
            let config = [(bad.0.to_string(), bad.1.to_string())];
            assert!(base.for_endpoint(&config).is_err(), "{bad:?}");
            assert!(!is_endpoint_key(bad.0) || bad.0 == "enable_mtls");
        }
    }

    #[test]
    fn missing_documents_are_named() {
        let s = TlsSettings::default();
        assert!(s
            .server_config()
            .unwrap_err()
            .to_string()
            .contains("listen_certificate"));
        let s = TlsSettings {
            listen_certificate: Some(PemSource::File("/nonexistent/cert.pem".into())),
            listen_private_key: Some(PemSource::Inline(b"x"[..].into())),
            ..TlsSettings::default()
        };
        let e = s.server_config().unwrap_err().to_string();
        assert!(e.contains("/nonexistent/cert.pem"), "{e}");
        let s = TlsSettings {
            enable_mtls: true,
            ..TlsSettings::default()
        };
        assert!(s
            .client_config()
            .unwrap_err()
            .to_string()
            .contains("connect_certificate"));
    }
}
