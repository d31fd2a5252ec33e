//! BatchReader over arbitrary bytes, on a normal and on a low-latency link.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weft_proto_fuzz::check_batch(data, false);
    weft_proto_fuzz::check_batch(data, true);
});
