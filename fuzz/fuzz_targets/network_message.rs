//! NetworkMessage::decode and decode_exact over arbitrary bytes, and the data messages
//! (Put/Del, Query), TsStack and link-state bodies decoded on their own.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weft_proto_fuzz::check_network(data);
    weft_proto_fuzz::check_data(data);
});
