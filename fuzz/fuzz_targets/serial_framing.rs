//! The serial line's decoder (COBS frames with flags, length and check) fed arbitrary
//! bytes in chunks of a size the first byte chooses.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weft_proto_fuzz::check_serial(data);
});
