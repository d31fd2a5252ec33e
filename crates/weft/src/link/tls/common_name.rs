//! The common name (CN) of a certificate's subject: what access control's
//! `cert_common_names` subjects match.
//!
//! As Zenoh reads it, with x509-parser: the first CN attribute of the subject, in the
//! order the certificate lists them (later ones are never tried), if its value is a
//! UTF8String, PrintableString, IA5String or NumericString holding UTF-8. A certificate
//! that does not parse, a subject without a CN, or one whose first CN is of another type
//! (a BMPString, say) has no name: then no `cert_common_names` subject matches the link
//! (one without that field may).

use x509_parser::prelude::{FromDer, X509Certificate};

/// The common name of the certificate `der` (see the module's documentation).
pub(crate) fn common_name(der: &[u8]) -> Option<String> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let first = cert.subject().iter_common_name().next()?;
    first.as_str().ok().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certificate(subject: rcgen::DistinguishedName) -> Vec<u8> {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = subject;
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn the_first_common_name_of_the_subject_is_read() {
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::OrganizationName, "weft");
        dn.push(rcgen::DnType::CommonName, "client-a");
        assert_eq!(common_name(&certificate(dn)).as_deref(), Some("client-a"));
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(
            rcgen::DnType::CommonName,
            rcgen::DnValue::PrintableString("router 1".try_into().unwrap()),
        );
        assert_eq!(common_name(&certificate(dn)).as_deref(), Some("router 1"));
    }

    #[test]
    fn a_subject_without_a_readable_common_name_has_none() {
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::OrganizationName, "weft");
        assert_eq!(common_name(&certificate(dn)), None);
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(
            rcgen::DnType::CommonName,
            rcgen::DnValue::BmpString("client-a".try_into().unwrap()),
        );
        assert_eq!(common_name(&certificate(dn)), None);
        assert_eq!(common_name(&[]), None);
        assert_eq!(common_name(&[0x30, 0x03, 0x30, 0x01, 0x02]), None);
    }

    /// What a peer's certificate can hold is not trusted to be well formed: a certificate
    /// cut at any length, or with any byte changed to a few telling values, is read
    /// without a panic (by this module and by `expiry`), and so is noise.
    #[test]
    fn damaged_certificates_and_noise_are_read_without_panic() {
        let mut dn = rcgen::DistinguishedName::new();
        dn.push(rcgen::DnType::CommonName, "client-a");
        let der = certificate(dn);
        for len in 0..der.len() {
            let _ = common_name(&der[..len]);
            let _ = super::super::expiry::not_after(&der[..len]);
        }
        let mut damaged = der.clone();
        for i in 0..der.len() {
            for value in [0x00, 0x7f, 0x80, 0x81, 0x84, 0xff] {
                damaged[i] = value;
                let _ = common_name(&damaged);
                let _ = super::super::expiry::not_after(&damaged);
            }
            damaged[i] = der[i];
        }
        // A fixed xorshift sequence: the same noise on every run.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut noise = vec![0u8; 600];
        for _ in 0..2_000 {
            for b in noise.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = state as u8;
            }
            // Most noise starts like a certificate, to get past the first tags.
            noise[..4].copy_from_slice(&der[..4]);
            let len = (state % 600) as usize;
            let _ = common_name(&noise[..len]);
            let _ = super::super::expiry::not_after(&noise[..len]);
        }
    }
}
