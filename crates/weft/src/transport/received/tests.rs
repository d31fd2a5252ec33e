use super::*;

#[test]
fn payloads_of_a_batch_copied_whole_share_one_copy() {
    static B: Budget = Budget::new(1 << 20);
    let bytes: Vec<u8> = (0..=255).collect();
    let batch = ReceivedBatch::with_budget(&bytes, true, &B);
    let (first, r1) = batch.keep(&bytes[10..50]).expect("copied whole");
    let (second, r2) = batch.keep(&bytes[100..200]).expect("copied whole");
    assert!(Arc::ptr_eq(&first, &second), "one copy for the batch");
    assert_eq!(&first[r1], &bytes[10..50]);
    assert_eq!(&second[r2], &bytes[100..200]);
    assert_eq!(B.used(), bytes.len());
    drop((first, second, batch));
    assert_eq!(
        B.used(),
        0,
        "the copy gives its bytes back when the last payload goes"
    );
}

#[test]
fn a_batch_not_to_be_copied_whole_leaves_each_payload_to_copy_itself() {
    static B: Budget = Budget::new(1 << 20);
    let bytes = vec![1u8; 1000];
    let batch = ReceivedBatch::with_budget(&bytes, false, &B);
    assert!(batch.keep(&bytes[..500]).is_none());
    assert_eq!(B.used(), 0);
    assert!(
        batch.dense(),
        "half of it was kept: the next batch may be copied whole"
    );
}

#[test]
fn the_next_batch_is_copied_whole_only_after_a_quarter_was_kept() {
    let bytes = vec![0u8; 1000];
    let batch = ReceivedBatch::unshared();
    assert!(!batch.dense(), "an empty batch says nothing");
    let batch = ReceivedBatch::new(&bytes, false);
    assert!(!batch.dense());
    batch.keep(&bytes[..249]);
    assert!(!batch.dense());
    batch.keep(&bytes[300..301]);
    assert!(batch.dense());
}

#[test]
fn bytes_from_elsewhere_are_neither_shared_nor_counted() {
    static B: Budget = Budget::new(1 << 20);
    let bytes = vec![0u8; 100];
    let other = vec![0u8; 100];
    let batch = ReceivedBatch::with_budget(&bytes, true, &B);
    assert!(batch.keep(&other).is_none());
    assert!(!batch.dense());
    assert_eq!(B.used(), 0);
}

#[test]
fn past_the_budget_payloads_are_copied_one_by_one_until_copies_are_released() {
    static B: Budget = Budget::new(150);
    let first_bytes = vec![1u8; 100];
    let second_bytes = vec![2u8; 100];
    let first = ReceivedBatch::with_budget(&first_bytes, true, &B);
    let (kept, _) = first.keep(&first_bytes[..50]).expect("within the budget");
    let second = ReceivedBatch::with_budget(&second_bytes, true, &B);
    assert!(
        second.keep(&second_bytes[..50]).is_none(),
        "over the budget"
    );
    assert!(
        second.keep(&second_bytes[50..]).is_none(),
        "decided once per batch"
    );
    assert_eq!(B.used(), 100);
    drop((kept, first));
    assert_eq!(B.used(), 0);
    let third = ReceivedBatch::with_budget(&second_bytes, true, &B);
    assert!(third.keep(&second_bytes[..50]).is_some(), "room again");
}

#[test]
fn a_thread_writes_its_next_copy_into_the_buffer_of_one_it_released() {
    static B: Budget = Budget::new(1 << 20);
    let first = vec![1u8; 3000];
    let copy = SharedBatch::copy(&first, &B).expect("within the budget");
    let buffer = copy.as_ptr();
    let capacity = copy.bytes.capacity();
    drop(copy);
    let second = vec![2u8; 2000];
    let copy = SharedBatch::copy(&second, &B).expect("within the budget");
    assert_eq!(
        copy.as_ptr(),
        buffer,
        "the released buffer is written again"
    );
    assert_eq!(
        copy.bytes.capacity(),
        capacity,
        "not a new buffer of its own size"
    );
    assert_eq!(&copy[..], &second[..]);
    assert_eq!(
        B.used(),
        capacity,
        "a copy counts the whole buffer it holds"
    );
}

#[test]
fn a_small_batch_does_not_take_a_large_released_buffer() {
    static B: Budget = Budget::new(1 << 20);
    let large = SharedBatch::copy(&[1u8; 60_000], &B).expect("within the budget");
    let kept = SharedBatch::copy(&[1u8; 60_000], &B).expect("within the budget");
    drop(large);
    let small = SharedBatch::copy(&[2u8; 100], &B).expect("within the budget");
    assert!(small.bytes.capacity() < 200, "a buffer of its own size");
    assert_eq!(B.used(), kept.bytes.capacity() + small.bytes.capacity());
    drop((kept, small));
    assert_eq!(B.used(), 0);
}

#[test]
fn a_copy_released_on_a_thread_that_makes_none_is_not_kept_there() {
    static B: Budget = Budget::new(1 << 20);
    let copy = SharedBatch::copy(&[7u8; 100], &B).expect("within the budget");
    let kept_there = std::thread::spawn(move || {
        drop(copy);
        SPARE.with(|s| s.borrow().as_ref().map_or(0, Vec::len))
    })
    .join()
    .expect("the thread ends");
    assert_eq!(kept_there, 0);
    assert_eq!(B.used(), 0);
}
