//! The handshake state machines (acceptor and initiator, with and without user/password
//! authentication) fed an arbitrary stream of batches from the other side.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    weft_proto_fuzz::check_handshake(data);
});
