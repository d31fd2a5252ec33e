//! The common name (CN) of a certificate's subject, read from the DER encoding: what
//! access control's `cert_common_names` subjects match.
//!
//! As Zenoh reads it: the first CN attribute of the subject, in the order the
//! certificate lists them (later ones are never tried), if its value is one of the
//! directory string types taken byte for byte (UTF8String, PrintableString, IA5String,
//! NumericString, VisibleString, T61String, VideotexString, GraphicString,
//! GeneralString, and ObjectDescriptor) and valid UTF-8. A subject without a CN, or
//! whose first CN is of another type, has no name: then no `cert_common_names` subject
//! matches the link (one without that field may). Zenoh also takes a BMPString's UTF-16
//! bytes as if they were UTF-8, which turns `client-a` into a name with a NUL before
//! every letter that no configuration lists; weft gives it no name, and the same
//! subjects match.

use super::expiry::element;

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const VERSION: u8 = 0xa0;
const OID: u8 = 0x06;
/// 2.5.4.3, id-at-commonName.
const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];
/// The string types whose content is taken as UTF-8.
const STRING_TAGS: [u8; 10] = [
    0x0c, // UTF8String
    0x12, // NumericString
    0x13, // PrintableString
    0x14, // T61String
    0x15, // VideotexString
    0x16, // IA5String
    0x19, // GraphicString
    0x1a, // VisibleString
    0x1b, // GeneralString
    0x07, // ObjectDescriptor
];

/// The common name of the certificate `der` (see the module's documentation).
pub(crate) fn common_name(der: &[u8]) -> Option<String> {
    let value = first_common_name(subject(der)?)?;
    let (tag, content) = value;
    if !STRING_TAGS.contains(&tag) {
        return None;
    }
    std::str::from_utf8(content).ok().map(str::to_owned)
}

/// The subject `Name` of a certificate: the content of its SEQUENCE of RDNs.
fn subject(der: &[u8]) -> Option<&[u8]> {
    let (tag, cert, _) = element(der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, tbs, _) = element(cert)?;
    if tag != SEQUENCE {
        return None;
    }
    // [0] version (optional), serialNumber, signature, issuer, validity: skipped.
    let (tag, _, mut rest) = element(tbs)?;
    let skip = if tag == VERSION { 4 } else { 3 };
    for _ in 0..skip {
        rest = element(rest)?.2;
    }
    let (tag, name, _) = element(rest)?;
    (tag == SEQUENCE).then_some(name)
}

/// The tag and content of the first commonName attribute's value in `name`.
fn first_common_name(mut name: &[u8]) -> Option<(u8, &[u8])> {
    while !name.is_empty() {
        let (tag, mut rdn, rest) = element(name)?;
        name = rest;
        if tag != SET {
            return None;
        }
        while !rdn.is_empty() {
            let (tag, attribute, rest) = element(rdn)?;
            rdn = rest;
            if tag != SEQUENCE {
                return None;
            }
            let (tag, oid, value) = element(attribute)?;
            if tag == OID && oid == COMMON_NAME {
                let (tag, content, _) = element(value)?;
                return Some((tag, content));
            }
        }
    }
    None
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
