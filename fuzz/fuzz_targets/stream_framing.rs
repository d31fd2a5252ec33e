//! The receive path of a stream link: length prefixes (2 or 4 bytes), the compression
//! header and LZ4, batches, and fragment reassembly, over an arbitrary byte stream.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weft_proto_fuzz::check_stream(data);
});
