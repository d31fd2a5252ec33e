//! What the crate's in-memory tests share.

use weft_proto::core::{WhatAmI, ZenohId};

use crate::establish::{Acceptor, Initiator, LocalParams, Negotiated, Progress};

/// Both ends' view of one handshake run in memory (initiator's, acceptor's), each
/// announcing `batch_size` and, if given, a lease of `lease_ms`.
pub(crate) fn negotiated(batch_size: u16, lease_ms: Option<u64>) -> (Negotiated, Negotiated) {
    let params = |zid| {
        let mut p = LocalParams::new(ZenohId::new(zid).unwrap(), WhatAmI::Peer);
        p.batch_size = batch_size;
        if let Some(lease) = lease_ms {
            p.lease_ms = lease;
        }
        p
    };
    let mut i = Initiator::new(params(1));
    let mut a = Acceptor::new(params(2), [3; 16]);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    i.start(&mut x).unwrap();
    a.on_batch(&x, &mut y).unwrap();
    i.on_batch(&y, &mut x).unwrap();
    let Progress::Established(at_a) = a.on_batch(&x, &mut y).unwrap() else {
        panic!("the acceptor did not finish")
    };
    let Progress::Established(at_i) = i.on_batch(&y, &mut x).unwrap() else {
        panic!("the initiator did not finish")
    };
    (at_i, at_a)
}
