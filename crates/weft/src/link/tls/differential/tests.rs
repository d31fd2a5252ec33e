//! The differential run without cargo fuzz: over inputs written to reach each operation,
//! and over inputs generated from fixed seeds (`WEFT_TLS_DIFFERENTIAL_RUNS` of them, 300
//! unless set).

use super::run;

/// Operation codes, as `Operation::read` takes them (the byte modulo 10).
const CLIENT_DATA: u8 = 0;
const CLIENT_KEY_UPDATE: u8 = 2;
const CLIENT_CLOSE: u8 = 3;
const CLIENT_CRAFTED: u8 = 4;
const SERVER_DATA: u8 = 5;
const SERVER_KEY_UPDATE: u8 = 7;
const SERVER_CLOSE: u8 = 8;
const READ_SIZE: u8 = 9;
/// An alteration byte that leaves the records as they are, one that holds them back to
/// be read with the next.
const AS_IS: u8 = 7;
const HOLD: u8 = 3;

#[test]
fn data_and_key_updates_both_ways_in_every_suite() {
    for suite in 0..3 {
        run(&[
            suite,
            CLIENT_DATA,
            0x9c,
            0x40,
            1,
            AS_IS, // 40,000 bytes, three records
            CLIENT_KEY_UPDATE,
            AS_IS,
            CLIENT_DATA,
            0,
            8,
            2,
            AS_IS,
            SERVER_DATA,
            0xff,
            0xff,
            3, // 65,535 bytes
            SERVER_KEY_UPDATE,
            SERVER_DATA,
            0,
            1,
            4,
            READ_SIZE,
            0,
            0,
            100, // reads of 101 bytes
            CLIENT_DATA,
            0x40,
            0,
            5,
            AS_IS,
            CLIENT_CLOSE,
            AS_IS,
            SERVER_CLOSE,
        ]);
    }
}

#[test]
fn altered_records_are_refused_by_both() {
    for suite in 0..3 {
        // A byte flipped in the header, in the ciphertext, in the tag; cut short; split.
        for [alteration, hi, lo] in [
            [0, 0, 0],
            [0, 0, 3],
            [0, 0, 40],
            [0, 0xff, 0xff],
            [1, 0, 20],
            [2, 0, 7],
        ] {
            run(&[
                suite,
                CLIENT_DATA,
                0,
                64,
                1,
                alteration,
                hi,
                lo,
                0x10,
                CLIENT_DATA,
                0,
                64,
                1,
                AS_IS,
            ]);
        }
    }
}

#[test]
fn crafted_records_padding_alerts_and_handshake_messages() {
    let crafted = |kind: u8, body: &[u8], padding: &[u8]| {
        let mut input = vec![0, CLIENT_DATA, 0, 10, 1, AS_IS, CLIENT_CRAFTED, kind];
        input.extend_from_slice(body);
        input.extend_from_slice(padding);
        input.extend_from_slice(&[1, AS_IS, CLIENT_DATA, 0, 10, 2, AS_IS]);
        run(&input);
    };
    let no_padding: &[u8] = &[2];
    let some_padding: &[u8] = &[1, 200];
    // 16,128 bytes of padding: the record fits, its inner plaintext is over 2^14 + 1.
    let long_padding: &[u8] = &[0, 0x3f, 0x00];
    // 16,999: the record is over 2^14 + 256.
    let too_much_padding: &[u8] = &[0, 0x42, 0x67];
    for padding in [no_padding, some_padding, long_padding, too_much_padding] {
        // Data of 300 bytes.
        crafted(0, &[1, 44, 9], padding);
        // Alerts: close_notify, user_canceled, a fatal one, unknown levels, too short.
        for alert in [[1, 0], [2, 0], [3, 0], [1, 90], [2, 90], [2, 20], [1, 10]] {
            crafted(2, &[2, alert[0], alert[1]], padding);
        }
        crafted(2, &[1, 1], padding);
        crafted(2, &[0], padding);
        // Handshake messages: key updates (asked, not asked, malformed), a ticket, a
        // fragment, nothing.
        crafted(4, &[5, 24, 0, 0, 1, 0], padding);
        crafted(4, &[5, 24, 0, 0, 1, 1], padding);
        crafted(4, &[5, 24, 0, 0, 1, 2], padding);
        crafted(4, &[6, 24, 0, 0, 2, 0, 0], padding);
        crafted(4, &[4, 4, 0, 0, 10], padding);
        crafted(4, &[0], padding);
        // Other inner types: none, change_cipher_spec, heartbeat, unknown.
        for inner_type in [0, 20, 24, 99] {
            crafted(6, &[inner_type, 3, 1, 2, 3], padding);
        }
    }
}

/// xorshift64*: inputs that are the same from run to run.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// An input of operations, mostly plain ones, some altered or crafted.
    fn input(&mut self) -> Vec<u8> {
        let len = 8 + (self.next() % 120) as usize;
        (0..len).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn weft_and_rustls_agree_on_generated_inputs() {
    let runs = std::env::var("WEFT_TLS_DIFFERENTIAL_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(300);
    let mut generator = Generator(0x005e_ed0f_7e1f);
    for i in 0..runs {
        let input = generator.input();
        let outcome = std::panic::catch_unwind(|| run(&input));
        assert!(outcome.is_ok(), "generated input {i}: {input:?}");
    }
}

/// rustls's limits, which weft keeps: four user_canceled warnings, 32 key updates between
/// two records of data, 32 empty records in a row; and a client sends no ticket.
#[test]
fn limits_on_what_carries_no_data() {
    let repeat = |times: usize, operation: &[u8]| {
        let mut input = vec![1];
        for _ in 0..times {
            input.extend_from_slice(operation);
        }
        input.extend_from_slice(&[CLIENT_DATA, 0, 10, 2, AS_IS]);
        run(&input);
    };
    let user_canceled = [CLIENT_CRAFTED, 2, 2, 1, 90, 2, 1, AS_IS];
    let empty_data = [CLIENT_CRAFTED, 0, 0, 0, 0, 2, 1, AS_IS];
    for times in [4, 5] {
        repeat(times, &user_canceled);
    }
    for times in [32, 33] {
        repeat(times, &[CLIENT_KEY_UPDATE, AS_IS]);
        repeat(times, &empty_data);
    }
    // A key update after data, 32 times: allowed again.
    let mut input = vec![2];
    for _ in 0..20 {
        input.extend_from_slice(&[CLIENT_KEY_UPDATE, AS_IS, CLIENT_KEY_UPDATE, AS_IS]);
        input.extend_from_slice(&[CLIENT_DATA, 0, 1, 3, AS_IS]);
    }
    run(&input);
    // A whole ticket from the client; the start of a key update of 2^16 - 1 bytes
    // (taken, it waits for the rest), of 2^16 (refused).
    let crafted_handshake = |message: &[u8]| {
        let mut input = vec![0, CLIENT_CRAFTED, 4, message.len() as u8];
        input.extend_from_slice(message);
        input.extend_from_slice(&[2, 1, AS_IS]);
        run(&input);
    };
    crafted_handshake(&[4, 0, 0, 6, 1, 2, 3, 4, 5, 6]);
    crafted_handshake(&[24, 0, 0xff, 0xff]);
    crafted_handshake(&[24, 1, 0, 0]);
}

/// Records after a close_notify, read with it, are not read (weft's reader with room for
/// a whole record, and with less).
#[test]
fn nothing_is_read_after_a_close_notify() {
    // Reads of 64 KiB and a record, of 201 bytes.
    for read_size in [&[2][..], &[0, 0, 200]] {
        let mut input = vec![0, READ_SIZE];
        input.extend_from_slice(read_size);
        input.extend_from_slice(&[CLIENT_CRAFTED, 2, 2, 1, 0, 2, 1, HOLD]);
        input.extend_from_slice(&[CLIENT_DATA, 0, 100, 1, AS_IS]);
        run(&input);
    }
}

/// Inputs the fuzz target found, kept as they were.
#[test]
fn found_by_the_fuzz_target() {
    // weft asked to update its keys 34 times without data in between (a link seals a
    // key update only before data).
    let mut input = vec![0xe3; 34];
    input.extend_from_slice(&[0x91, 9, 9, 0x40, 2, 1, 0xfa, 4, 0x5b]);
    run(&input);
    // A key update whose length says no body, followed by a byte.
    run(&[2, 0, 0, 10, 0x5a, 7, 4, 4, 5, 24, 0, 0, 0, 0, 2, 1, 7]);
    // A header altered after weft read a close_notify.
    run(&[
        0, 9, 2, 4, 2, 2, 1, 0, 2, 4, 2, 2, 1, 0, 2, 1, 3, 0, 0x38, 1, 3, 0, 0x38, 0, 0x64, 1,
        0x93, 2, 1, 0, 2, 7,
    ]);
}
