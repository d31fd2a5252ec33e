//! ScoutingMessage::decode over arbitrary datagrams.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weft_proto_fuzz::check_scouting(data);
});
