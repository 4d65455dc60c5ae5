//! Structured direction: a request or response of any opcode built by `arbitrary_for`
//! (bytes 0–1 a raw opcode, LE — a number the table does not hold picks `Opcode::ALL[raw % len]`;
//! bit 0 of byte 2 the direction; the rest feeds `Unstructured`), encoded with `Request::encode_frame`/`Response::encode_frame`, parsed back with `parse_frame` and
//! `Request::parse`/`Response::parse`. Asserts: the generators only make encodable values;
//! a too-small buffer reports the exact size needed and leaves no parseable header behind;
//! the parsed value is Debug-equal to the original (Debug, not PartialEq, so NaN floats
//! compare); and re-encoding the parsed value is byte-identical.
#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use proto_core::frame::parse_frame;
use proto_core::{EncodeError, EncodedFrame, Flags, FrameHeader, Opcode, Request, Response};

/// Runs `encode` first on a 64-byte buffer, then (if that was too small) on a buffer of
/// exactly the reported size; returns the frame as it goes on the wire (head, then bulk).
fn encode_checked<'a>(msg: &dyn core::fmt::Debug, mut encode: impl FnMut(&mut [u8]) -> Result<EncodedFrame<'a>, EncodeError>) -> Vec<u8> {
    let mut small = [0u8; 64];
    let (head, bulk) = match encode(&mut small) {
        Ok(enc) => (small[..enc.head_len].to_vec(), enc.bulk),
        Err(EncodeError::BufferTooSmall { required }) => {
            assert!(required > small.len(), "BufferTooSmall {{ required: {required} }} for a {}-byte buffer", small.len());
            // An interrupted encode leaves the over-limit placeholder length, never a frame.
            assert!(FrameHeader::parse(&small).is_err(), "failed encode left a parseable header");
            let mut buf = vec![0u8; required];
            let enc = encode(&mut buf).unwrap_or_else(|e| panic!("encode into the required {required} bytes failed: {e}\n{msg:?}"));
            assert_eq!(enc.head_len, required, "BufferTooSmall reported {required}, encoding used {}", enc.head_len);
            (buf, enc.bulk)
        }
        Err(e) => panic!("arbitrary value does not encode: {e}\n{msg:?}"),
    };
    [head.as_slice(), bulk].concat()
}

fuzz_target!(|data: &[u8]| {
    let [lo, hi, dir, rest @ ..] = data else { return };
    let raw = u16::from_le_bytes([*lo, *hi]);
    let op = Opcode::from_u16(raw).unwrap_or(Opcode::ALL[usize::from(raw) % Opcode::ALL.len()]);
    let mut u = Unstructured::new(rest);
    if dir & 1 == 0 {
        let Ok(req) = Request::arbitrary_for(op, &mut u) else { return };
        let wire = encode_checked(&req, |buf| req.encode_frame(buf, Flags::empty(), 7));
        let frame = parse_frame(&wire).expect("encoded request frame does not parse");
        let back = Request::parse(frame.header.opcode, frame.control, frame.bulk).expect("encoded request does not parse");
        assert_eq!(format!("{back:?}"), format!("{req:?}"));
        assert_eq!(encode_checked(&back, |buf| back.encode_frame(buf, Flags::empty(), 7)), wire, "re-encoded request differs");
    } else {
        let Ok(resp) = Response::arbitrary_for(op, &mut u) else { return };
        let wire = encode_checked(&resp, |buf| resp.encode_frame(buf, 7, 0));
        let frame = parse_frame(&wire).expect("encoded response frame does not parse");
        let back = Response::parse(frame.header.opcode, frame.control, frame.bulk).expect("encoded response does not parse");
        assert_eq!(format!("{back:?}"), format!("{resp:?}"));
        assert_eq!(encode_checked(&back, |buf| back.encode_frame(buf, 7, 0)), wire, "re-encoded response differs");
    }
});
