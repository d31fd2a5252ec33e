//! Values kept past the batch they came in: the payloads of a batch dense with kept values
//! share one copy of it (`ReceivedBatch`). They read back intact however
//! many reads came after theirs, and the copies go with the last payload holding them.
//! (One test in this file: the copies are counted per process.)

use std::time::{Duration, Instant};

mod common;
use common::session;
use weft::{PutOptions, Sample, WhatAmI};

const COUNT: usize = 3000;
const SIZE: usize = 200;

/// The `i`-th value: its index, then bytes that differ from one value to the next.
fn value(i: usize) -> Vec<u8> {
    let mut v = (i as u32).to_le_bytes().to_vec();
    v.extend((0..SIZE - 4).map(|k| (i * 7 + k) as u8));
    v
}

#[test]
fn kept_values_read_back_intact_and_release_their_batches() {
    let listener = session(WhatAmI::Peer, true, None);
    let (_sub, rx) = listener
        .declare_subscriber_channel("kept/**", COUNT)
        .unwrap();
    let endpoint = listener.listen_endpoints()[0].clone();
    let sender = session(WhatAmI::Peer, false, Some(&endpoint));

    for i in 0..COUNT {
        sender
            .put("kept/values", &value(i), &PutOptions::default())
            .unwrap();
    }
    // Every sample is kept until the last has come: later reads into the I/O thread's
    // buffer must not reach the values kept before them.
    let kept: Vec<Sample> = (0..COUNT)
        .map(|i| {
            rx.recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("sample {i} of {COUNT} did not come"))
        })
        .collect();
    assert!(
        weft::metrics::shared_batch_bytes() > 0,
        "values this dense share copies of their batches"
    );
    for (i, sample) in kept.iter().enumerate() {
        assert_eq!(sample.payload, value(i), "value {i}");
    }
    drop(kept);
    // The I/O thread lets go of the last batch's copy once it has handed the batch on,
    // which may be just after the last sample came.
    let deadline = Instant::now() + Duration::from_secs(10);
    while weft::metrics::shared_batch_bytes() != 0 && Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert_eq!(
        weft::metrics::shared_batch_bytes(),
        0,
        "the copies go with the last payload holding them"
    );
}
