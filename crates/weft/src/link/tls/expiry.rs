//! When a certificate stops being valid: its `notAfter` (X.509, RFC 5280 section 4.1),
//! as x509-parser reads it, in either of its forms (UTCTime, GeneralizedTime).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use x509_parser::prelude::{FromDer, X509Certificate};

/// The earliest `notAfter` of a certificate chain: when the chain stops being valid.
/// `None` when the chain is empty or a certificate cannot be read.
pub(crate) fn chain_not_after<'a, I>(chain: I) -> Option<SystemTime>
where
    I: IntoIterator<Item = &'a [u8]>,
{
    let mut earliest: Option<SystemTime> = None;
    for der in chain {
        let at = not_after(der)?;
        earliest = Some(earliest.map_or(at, |e| e.min(at)));
    }
    earliest
}

/// A certificate's `notAfter`.
pub(crate) fn not_after(der: &[u8]) -> Option<SystemTime> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let seconds = cert.validity().not_after.timestamp();
    match u64::try_from(seconds) {
        Ok(s) => UNIX_EPOCH.checked_add(Duration::from_secs(s)),
        Err(_) => UNIX_EPOCH.checked_sub(Duration::from_secs(seconds.unsigned_abs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    /// A self-signed certificate valid until `year`-`month`-`day` at midnight.
    fn valid_until(year: i32, month: u8, day: u8) -> Vec<u8> {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(vec!["expiry".to_string()]).unwrap();
        params.not_after = rcgen::date_time_ymd(year, month, day);
        params.self_signed(&key).unwrap().der().to_vec()
    }

    #[test]
    fn both_time_forms_are_read() {
        // Until 2049 a UTCTime, from 2050 a GeneralizedTime (RFC 5280).
        let (y2049, y2050) = (valid_until(2049, 12, 31), valid_until(2050, 1, 1));
        assert_eq!(not_after(&y2049), Some(at(2_524_521_600)));
        assert_eq!(not_after(&y2050), Some(at(2_524_608_000)));
        assert_eq!(
            not_after(&valid_until(2024, 2, 29)),
            Some(at(1_709_164_800))
        );
        assert_eq!(
            chain_not_after([&y2050[..], &y2049[..]]),
            Some(at(2_524_521_600))
        );
    }

    #[test]
    fn a_short_or_malformed_certificate_has_no_expiry() {
        assert_eq!(not_after(&[]), None);
        assert_eq!(not_after(&[0x30, 0x05, 0x30]), None);
        assert_eq!(chain_not_after([&[0x02u8, 0x01, 0x00][..]]), None);
        assert_eq!(chain_not_after(std::iter::empty()), None);
    }
}
