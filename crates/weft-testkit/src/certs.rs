//! Certificates made at test time (no key is ever kept in the repository): a CA, and the
//! certificates it signs for listeners and clients, written as PEM files in a directory
//! removed when dropped.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use weft::config::{PemSource, TlsSettings};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A PEM file setting.
pub fn pem_file(path: &str) -> Option<PemSource> {
    Some(PemSource::File(path.into()))
}

/// A certificate authority.
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its private key, PEM.
pub struct Issued {
    /// The certificate.
    pub cert_pem: String,
    /// Its private key (PKCS#8).
    pub key_pem: String,
}

impl TestCa {
    /// A new CA named `name`.
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("a CA key");
        Self {
            issuer: CertifiedIssuer::self_signed(params, key).expect("a CA certificate"),
        }
    }

    /// The CA's certificate, PEM.
    pub fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A certificate for `names` (DNS names or IP addresses), good for servers and
    /// clients, valid until `not_after` (far in the future when `None`).
    pub fn issue(&self, names: &[&str], not_after: Option<SystemTime>) -> Issued {
        self.issue_named(names.first().copied().unwrap_or("weft"), names, not_after)
    }

    /// [`TestCa::issue`], its subject's common name `common_name` (any text: a
    /// hostile client's name).
    pub fn issue_named(
        &self,
        common_name: &str,
        names: &[&str],
        not_after: Option<SystemTime>,
    ) -> Issued {
        let names: Vec<String> = names.iter().map(|n| (*n).to_string()).collect();
        let mut params = CertificateParams::new(names).expect("leaf parameters");
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        if let Some(at) = not_after {
            let now = SystemTime::now();
            params.not_before = time::OffsetDateTime::from(now - Duration::from_secs(3600));
            params.not_after = time::OffsetDateTime::from(at);
        }
        let key = KeyPair::generate().expect("a leaf key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("a leaf certificate");
        Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }
}

/// A directory of PEM files, removed when dropped.
pub struct CertDir {
    dir: PathBuf,
}

impl CertDir {
    /// A fresh directory named after `label` (and this process).
    pub fn new(label: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("weft-tls-{label}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a certificate directory");
        Self { dir }
    }

    /// Writes `text` to `name` in the directory; returns its path as a string.
    pub fn write(&self, name: &str, text: &str) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, text).expect("write a PEM file");
        path.to_str().expect("a UTF-8 path").to_string()
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for CertDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The files of a test's PKI: a CA, a certificate for `localhost` and `127.0.0.1` (the
/// listener's), and one for a client.
pub struct Pki {
    /// Where the files are.
    pub dir: CertDir,
    /// The CA's certificate.
    pub ca: String,
    /// The listener's certificate and key.
    pub server_cert: String,
    /// See `server_cert`.
    pub server_key: String,
    /// A client's certificate and key, from the same CA.
    pub client_cert: String,
    /// See `client_cert`.
    pub client_key: String,
    /// The CA itself, to issue more.
    pub authority: TestCa,
}

impl Pki {
    /// A listener's TLS settings (Zenoh's `transport.link.tls` keys, also QUIC's): its
    /// certificate and key, and the CA, which with `mtls` checks the clients'.
    pub fn listening(&self, mtls: bool) -> TlsSettings {
        TlsSettings {
            root_ca_certificate: pem_file(&self.ca),
            listen_certificate: pem_file(&self.server_cert),
            listen_private_key: pem_file(&self.server_key),
            enable_mtls: mtls,
            ..TlsSettings::default()
        }
    }

    /// A connecting node's TLS settings: the CA, and with `mtls` the client's
    /// certificate and key.
    pub fn connecting(&self, mtls: bool) -> TlsSettings {
        TlsSettings {
            root_ca_certificate: pem_file(&self.ca),
            connect_certificate: pem_file(&self.client_cert),
            connect_private_key: pem_file(&self.client_key),
            enable_mtls: mtls,
            ..TlsSettings::default()
        }
    }

    /// The same as [`Pki::listening`], as `tests/interop/zenoh_node.py` arguments.
    pub fn zenoh_listening_args(&self, mtls: bool) -> Vec<&str> {
        let mut args = vec![
            "--tls-listen-cert",
            self.server_cert.as_str(),
            "--tls-listen-key",
            &self.server_key,
            "--tls-root-ca",
            &self.ca,
        ];
        if mtls {
            args.push("--tls-mtls");
        }
        args
    }

    /// The same as [`Pki::connecting`], as `tests/interop/zenoh_node.py` arguments.
    pub fn zenoh_connecting_args(&self, mtls: bool) -> Vec<&str> {
        let mut args = vec!["--tls-root-ca", self.ca.as_str()];
        if mtls {
            args.extend([
                "--tls-mtls",
                "--tls-connect-cert",
                &self.client_cert,
                "--tls-connect-key",
                &self.client_key,
            ]);
        }
        args
    }

    /// A new PKI in a fresh directory.
    pub fn new(label: &str) -> Self {
        let dir = CertDir::new(label);
        let authority = TestCa::new(&format!("weft test CA {label}"));
        let server = authority.issue(&["localhost", "127.0.0.1"], None);
        let client = authority.issue(&["client.weft.test"], None);
        Self {
            ca: dir.write("ca.pem", &authority.pem()),
            server_cert: dir.write("server.pem", &server.cert_pem),
            server_key: dir.write("server-key.pem", &server.key_pem),
            client_cert: dir.write("client.pem", &client.cert_pem),
            client_key: dir.write("client-key.pem", &client.key_pem),
            dir,
            authority,
        }
    }
}

/// `text` in standard base64 (with padding), as the `*_base64` settings take a PEM
/// document.
pub fn base64(text: &str) -> String {
    STANDARD.encode(text)
}
