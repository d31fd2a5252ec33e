//! weft's TLS record layer against rustls's with the same keys: records, key updates,
//! alerts, padding and handshake messages sealed by one and opened by the other, flipped,
//! cut or split on the way (`weft::tls_internals::differential`). Runs also as
//! the tests of `link::tls::differential` without cargo fuzz.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weft::tls_internals::differential(data);
});
