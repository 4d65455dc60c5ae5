//! One message without framing: the first two bytes are a raw opcode (LE; a number the table
//! does not hold picks `Opcode::ALL[raw % len]`, so every input reaches a decoder), the next byte splits the rest into control part and bulk section
//! (`0..=254`: that many control bytes, the remainder bulk; `255`: everything is control),
//! and both are parsed as request and as response. What parses must re-encode to the same
//! control bytes and the same borrowed bulk (rustls `fuzz/fuzzers/message.rs`).
#![no_main]

use hip_remote_fuzz::{assert_reencodes, Encode};
use libfuzzer_sys::fuzz_target;
use proto_core::frame::FrameMeta;
use proto_core::{Flags, Opcode, Request, Response};

fuzz_target!(|data: &[u8]| {
    let [lo, hi, split, rest @ ..] = data else { return };
    let raw = u16::from_le_bytes([*lo, *hi]);
    let op = Opcode::from_u16(raw).unwrap_or(Opcode::ALL[usize::from(raw) % Opcode::ALL.len()]);
    let (control, bulk) = match *split {
        255 => (rest, &[][..]),
        n => rest.split_at(usize::from(n).min(rest.len())),
    };

    let meta = FrameMeta { opcode: op.raw(), flags: Flags::empty(), request_id: 1, credits: 0, aux: 0 };
    if let Ok(req) = Request::parse(op.raw(), control, bulk) {
        assert_eq!(req.opcode(), op);
        let _ = assert_reencodes("request", meta, &Encode(&req), control, bulk);
    }
    let meta = FrameMeta { flags: Flags::RESPONSE, ..meta };
    if let Ok(resp) = Response::parse(op.raw(), control, bulk) {
        assert_eq!(resp.opcode(), op);
        let _ = assert_reencodes("response", meta, &Encode(&resp), control, bulk);
    }
});
