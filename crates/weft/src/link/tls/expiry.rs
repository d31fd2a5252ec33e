//! When a certificate stops being valid: its `notAfter`, read from the DER encoding.
//!
//! Only the path down to `tbsCertificate.validity.notAfter` is walked (X.509, RFC 5280
//! section 4.1); the certificates this is asked about have already been verified by the
//! TLS handshake, so anything else in them is someone else's business.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// DER tags met on the way.
const SEQUENCE: u8 = 0x30;
const VERSION: u8 = 0xa0;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

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
    let (tag, cert, _) = element(der)?;
    if tag != SEQUENCE {
        return None;
    }
    let (tag, mut tbs, _) = element(cert)?;
    if tag != SEQUENCE {
        return None;
    }
    // [0] version (optional), serialNumber, signature, issuer: skipped.
    let (tag, _, rest) = element(tbs)?;
    let skip = if tag == VERSION { 3 } else { 2 };
    tbs = rest;
    for _ in 0..skip {
        tbs = element(tbs)?.2;
    }
    let (tag, validity, _) = element(tbs)?;
    if tag != SEQUENCE {
        return None;
    }
    let (_, _, rest) = element(validity)?;
    let (tag, time, _) = element(rest)?;
    match tag {
        UTC_TIME => parse_time(time, false),
        GENERALIZED_TIME => parse_time(time, true),
        _ => None,
    }
}

/// Splits one DER element off `input`: its tag, its content, and what follows it.
pub(super) fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let (bytes, after) = rest.split_at(count);
        rest = after;
        bytes.iter().fold(0usize, |n, b| (n << 8) | usize::from(*b))
    };
    if rest.len() < len {
        return None;
    }
    let (content, after) = rest.split_at(len);
    Some((tag, content, after))
}

/// `YYMMDDHHMMSSZ` (UTCTime, years 1950..=2049) or `YYYYMMDDHHMMSSZ` (GeneralizedTime).
fn parse_time(text: &[u8], four_digit_year: bool) -> Option<SystemTime> {
    let digits = |range: std::ops::Range<usize>| -> Option<u64> {
        let part = text.get(range)?;
        part.iter().try_fold(0u64, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + u64::from(c - b'0'))
        })
    };
    let (year, at) = if four_digit_year {
        (digits(0..4)?, 4)
    } else {
        let yy = digits(0..2)?;
        (if yy >= 50 { 1900 + yy } else { 2000 + yy }, 2)
    };
    if text.len() != at + 11 || text[at + 10] != b'Z' {
        return None;
    }
    let month = digits(at..at + 2)?;
    let day = digits(at + 2..at + 4)?;
    let hour = digits(at + 4..at + 6)?;
    let minute = digits(at + 6..at + 8)?;
    let second = digits(at + 8..at + 10)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    let days = days_from_civil(i64::try_from(year).ok()?, month, day);
    let seconds = days * 86_400 + i64::try_from(hour * 3600 + minute * 60 + second).ok()?;
    match u64::try_from(seconds) {
        Ok(s) => UNIX_EPOCH.checked_add(Duration::from_secs(s)),
        Err(_) => UNIX_EPOCH.checked_sub(Duration::from_secs(seconds.unsigned_abs())),
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: u64, day: u64) -> i64 {
    let (month, day) = (month as i64, day as i64);
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn both_time_forms_are_read() {
        assert_eq!(parse_time(b"700101000000Z", false), Some(at(0)));
        // 2049-12-31T23:59:59Z and 2050 written as a GeneralizedTime.
        assert_eq!(parse_time(b"491231235959Z", false), Some(at(2_524_607_999)));
        assert_eq!(
            parse_time(b"20500101000000Z", true),
            Some(at(2_524_608_000))
        );
        assert_eq!(
            parse_time(b"20240229120000Z", true),
            Some(at(1_709_208_000))
        );
        assert_eq!(parse_time(b"2024022912000Z", true), None);
        assert_eq!(parse_time(b"20241329120000Z", true), None);
    }

    #[test]
    fn a_short_or_malformed_certificate_has_no_expiry() {
        assert_eq!(not_after(&[]), None);
        assert_eq!(not_after(&[0x30, 0x05, 0x30]), None);
        assert_eq!(chain_not_after([&[0x02u8, 0x01, 0x00][..]]), None);
        assert_eq!(chain_not_after(std::iter::empty()), None);
    }
}
