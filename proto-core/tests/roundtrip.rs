//! Property tests over the whole opcode table: every request and response survives
//! encode → deframe → parse → re-encode byte for byte, hostile bytes never panic a decoder,
//! truncations and extensions are refused with the right error, limits are enforced before
//! anything is read, and the encoder's size reporting is exact.
//!
//! Iterating `Opcode::ALL` (never a hand-written list) means a new line in the opcode table
//! is covered here without touching this file.

use arbitrary::Unstructured;
use proptest::prelude::*;
use proto_core::field::{Bytes, DecodeCx, Name, Str};
use proto_core::frame::FrameMeta;
use proto_core::header::RawHeader;
use proto_core::limits::*;
use proto_core::wire::*;
use proto_core::*;
use zerocopy::FromBytes;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Something that becomes one frame: a request, a success response or an error reply.
#[allow(clippy::large_enum_variant)] // test values, never stored in bulk
#[derive(Debug, Clone, PartialEq)]
enum Msg<'a> {
    Req(Request<'a>, Flags, u64),
    Resp(Response<'a>, u64, i32),
    Error(u16, ErrorReply<'a>, u64, i32),
}

impl<'a> Msg<'a> {
    fn encode(&self, buf: &mut [u8]) -> Result<EncodedFrame<'a>, EncodeError> {
        match self {
            Msg::Req(r, flags, id) => r.encode_frame(buf, *flags, *id),
            Msg::Resp(r, id, aux) => r.encode_frame(buf, *id, *aux),
            Msg::Error(op, e, id, aux) => {
                let meta = FrameMeta { opcode: *op, flags: Flags::RESPONSE | Flags::ERROR, request_id: *id, credits: 0, aux: *aux };
                encode_frame(buf, meta, e)
            }
        }
    }

    /// Parses `frame` the way a receiver expecting this kind of message would.
    fn parse_like<'b>(&self, frame: &Frame<'b>) -> Result<Msg<'b>, DecodeError> {
        let h = frame.header;
        Ok(match self {
            Msg::Req(..) => Msg::Req(Request::parse(h.opcode, frame.control, frame.bulk)?, h.flags, h.request_id),
            Msg::Resp(..) => Msg::Resp(Response::parse(h.opcode, frame.control, frame.bulk)?, h.request_id, h.aux),
            Msg::Error(..) => Msg::Error(h.opcode, ErrorReply::parse(frame.control, frame.bulk)?, h.request_id, h.aux),
        })
    }

    fn parse_parts<'b>(&self, opcode: u16, control: &'b [u8], bulk: &'b [u8]) -> Result<(), DecodeError> {
        match self {
            Msg::Req(..) => Request::parse(opcode, control, bulk).map(drop),
            Msg::Resp(..) => Response::parse(opcode, control, bulk).map(drop),
            Msg::Error(..) => ErrorReply::parse(control, bulk).map(drop),
        }
    }

    /// The message itself, without the frame's addressing (flags differ by BULK).
    fn body(&self) -> String {
        match self {
            Msg::Req(r, _, id) => format!("{r:?} #{id}"),
            Msg::Resp(r, id, aux) => format!("{r:?} #{id} aux={aux}"),
            Msg::Error(op, e, id, aux) => format!("{op:#06x} {e:?} #{id} aux={aux}"),
        }
    }

    fn body_eq(&self, other: &Msg<'_>) -> bool {
        match (self, other) {
            (Msg::Req(a, _, i), Msg::Req(b, _, j)) => a == b && i == j,
            (Msg::Resp(a, i, x), Msg::Resp(b, j, y)) => a == b && i == j && x == y,
            (Msg::Error(o, a, i, x), Msg::Error(p, b, j, y)) => o == p && a == b && i == j && x == y,
            _ => false,
        }
    }

    fn opcode(&self) -> u16 {
        match self {
            Msg::Req(r, ..) => r.opcode().raw(),
            Msg::Resp(r, ..) => r.opcode().raw(),
            Msg::Error(op, ..) => *op,
        }
    }

    /// The flags a correct encoder must put in the header (BULK derived from the data).
    fn expected_flags(&self, has_bulk: bool) -> Flags {
        let base = match self {
            Msg::Req(_, f, _) => Flags::from_bits(f.bits() & !Flags::BULK.bits()).unwrap(),
            Msg::Resp(..) => Flags::RESPONSE,
            Msg::Error(..) => Flags::RESPONSE | Flags::ERROR,
        };
        if has_bulk {
            base | Flags::BULK
        } else {
            base
        }
    }
}

/// Encodes `msg` into a generously sized buffer; returns the frame as it travels on the wire
/// (head followed by bulk), or `None` when the value may not be encoded at all.
fn wire_of(msg: &Msg<'_>) -> Option<(Vec<u8>, usize)> {
    let mut buf = vec![0xa5u8; 1 << 16];
    let enc = match msg.encode(&mut buf) {
        Ok(enc) => enc,
        Err(EncodeError::BufferTooSmall { required }) => {
            assert!(required > buf.len(), "{required} bytes would have fit in {}", buf.len());
            buf.resize(required, 0xa5);
            msg.encode(&mut buf).expect("the size BufferTooSmall asked for must suffice")
        }
        Err(EncodeError::InvalidValue { .. }) => return None,
    };
    let mut wire = buf[..enc.head_len].to_vec();
    wire.extend_from_slice(enc.bulk);
    Some((wire, enc.head_len))
}

/// The full round-trip property for one message. Returns whether it could be encoded.
fn check_roundtrip(msg: &Msg<'_>) -> bool {
    let Some((wire, head_len)) = wire_of(msg) else { return false };
    let ctx = format!("{msg:?}");

    // Deframing from a stream, with and without bytes of a next frame behind it.
    let mut stream = wire.clone();
    stream.extend_from_slice(b"HIPR next frame");
    for input in [&wire[..], &stream[..]] {
        match FrameDecoder::decode(input) {
            Ok(Deframed::Frame { consumed, frame }) => {
                assert_eq!(consumed, wire.len(), "{ctx}");
                assert_eq!(frame, parse_frame(&wire).unwrap(), "{ctx}");
            }
            other => panic!("{ctx}: deframing gave {other:?}"),
        }
    }

    let frame = parse_frame(&wire).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let h = frame.header;
    assert_eq!(h.version, PROTOCOL_VERSION);
    assert_eq!(h.opcode, msg.opcode(), "{ctx}");
    assert_eq!(HEADER_LEN + frame.control.len(), head_len, "{ctx}");
    assert_eq!(h.flags, msg.expected_flags(!frame.bulk.is_empty()), "{ctx}");

    let parsed = msg.parse_like(&frame).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(parsed.body(), msg.body());
    if !ctx.contains("NaN") {
        assert!(parsed.body_eq(msg), "{ctx}");
    }
    let (again, _) = wire_of(&parsed).expect("a parsed message re-encodes");
    assert_eq!(again, wire, "{ctx}: re-encoding differs");

    check_truncations(msg, &wire, &frame);
    check_extensions(msg, &wire, &frame);
    check_buffer_sizes(msg, &wire, head_len);
    true
}

/// Every proper prefix of a frame is "need more" to the deframer and "truncated" to
/// `parse_frame`; every proper prefix of the control part is "truncated" to the message.
fn check_truncations(msg: &Msg<'_>, wire: &[u8], frame: &Frame<'_>) {
    for cut in 0..wire.len() {
        let part = &wire[..cut];
        let needed = if cut < HEADER_LEN { HEADER_LEN } else { wire.len() };
        assert_eq!(FrameDecoder::decode(part), Ok(Deframed::NeedMore { needed }), "cut at {cut}");
        assert!(matches!(parse_frame(part), Err(DecodeError::Truncated { .. })), "cut at {cut}");
    }
    let control = frame.control;
    // Quadratic in the control length: every cut for small ones, a spread of cuts otherwise.
    let cuts: Vec<usize> = if control.len() <= 1024 {
        (0..control.len()).collect()
    } else {
        (0..64).chain((64..control.len()).step_by(control.len() / 128)).chain(control.len() - 64..control.len()).collect()
    };
    for cut in cuts {
        let got = msg.parse_parts(frame.header.opcode, &control[..cut], frame.bulk);
        assert!(matches!(got, Err(DecodeError::Truncated { .. })), "control cut at {cut}/{}: {got:?}", control.len());
    }
}

/// One byte too many, anywhere it can go, is refused.
fn check_extensions(msg: &Msg<'_>, wire: &[u8], frame: &Frame<'_>) {
    // After the control part, inside the frame (payload_len grown to match).
    let mut control = frame.control.to_vec();
    control.push(0);
    let got = msg.parse_parts(frame.header.opcode, &control, frame.bulk);
    assert!(matches!(got, Err(DecodeError::LengthMismatch { .. })), "{got:?}");

    let h = frame.header;
    let grown = FrameHeader { control_len: h.control_len + 1, ..h };
    let mut bytes = grown.emit().to_vec();
    bytes.extend_from_slice(&control);
    bytes.extend_from_slice(frame.bulk);
    let f = parse_frame(&bytes).expect("the grown frame is well-framed");
    let got = msg.parse_like(&f);
    assert!(matches!(got, Err(DecodeError::LengthMismatch { .. })), "{got:?}");

    // After the whole frame: a frame is exactly its bytes.
    let mut longer = wire.to_vec();
    longer.push(0);
    assert!(matches!(parse_frame(&longer), Err(DecodeError::LengthMismatch { .. })));

    // Bulk data for a message that has none.
    if frame.bulk.is_empty() {
        let got = msg.parse_parts(frame.header.opcode, frame.control, &[7]);
        let has_bulk_field = match msg {
            Msg::Req(r, ..) => r.opcode().request_has_bulk(),
            Msg::Resp(r, ..) => r.opcode().response_has_bulk(),
            Msg::Error(..) => false,
        };
        if has_bulk_field {
            assert!(got.is_ok(), "{got:?}");
        } else {
            assert!(matches!(got, Err(DecodeError::LengthMismatch { .. })), "{got:?}");
        }
    }
}

/// Short buffers report exactly the size needed, and exactly that size works; what a failed
/// encode leaves behind never parses as a frame.
fn check_buffer_sizes(msg: &Msg<'_>, wire: &[u8], head_len: usize) {
    let mut sizes = vec![0, 1, HEADER_LEN - 1, HEADER_LEN, head_len - 1];
    sizes.retain(|&s| s < head_len);
    sizes.dedup();
    for size in sizes {
        // Start from a valid frame's bytes, so a stale frame would show.
        let mut buf = wire[..head_len].to_vec();
        buf.truncate(size);
        assert_eq!(msg.encode(&mut buf), Err(EncodeError::BufferTooSmall { required: head_len }), "buffer of {size}");
        if size >= HEADER_LEN {
            assert_placeholder(&buf);
        }
    }
    let mut exact = vec![0x5au8; head_len];
    let enc = msg.encode(&mut exact).expect("exactly `required` bytes suffice");
    assert_eq!(enc.head_len, head_len);
    assert_eq!(&exact[..], &wire[..head_len]);
}

/// The bytes of an interrupted encode: their header announces a payload above every limit,
/// so neither the deframer nor `parse_frame` accepts them, however many bytes follow.
fn assert_placeholder(buf: &[u8]) {
    let raw = RawHeader::ref_from_bytes(&buf[..HEADER_LEN]).unwrap();
    assert!(raw.payload_len.get() as usize > MAX_FRAME_LEN, "placeholder payload_len {}", raw.payload_len.get());
    assert!(matches!(FrameHeader::parse(buf), Err(DecodeError::TooLarge { .. })));
    assert!(matches!(FrameDecoder::decode(buf), Err(DecodeError::TooLarge { .. })));
    let mut padded = buf.to_vec();
    padded.resize(buf.len() + 4096, 0);
    assert!(parse_frame(&padded).is_err());
    assert!(FrameDecoder::decode(&padded).is_err());
}

fn request_from(op: Opcode, bytes: &[u8], flags: Flags, id: u64) -> Option<Msg<'_>> {
    Request::arbitrary_for(op, &mut Unstructured::new(bytes)).ok().map(|r| Msg::Req(r, flags, id))
}

fn response_from(op: Opcode, bytes: &[u8], id: u64, aux: i32) -> Option<Msg<'_>> {
    Response::arbitrary_for(op, &mut Unstructured::new(bytes)).ok().map(|r| Msg::Resp(r, id, aux))
}

fn error_from(op: Opcode, bytes: &[u8], id: u64, aux: i32) -> Option<Msg<'_>> {
    use arbitrary::Arbitrary;
    ErrorReply::arbitrary(&mut Unstructured::new(bytes)).ok().map(|e| Msg::Error(op.raw(), e, id, aux))
}

/// Deterministic bytes (xorshift64*), so the coverage test needs no randomness.
fn seeded_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

fn request_flags() -> impl Strategy<Value = Flags> {
    prop_oneof![Just(Flags::empty()), Just(Flags::NO_REPLY), Just(Flags::BULK), Just(Flags::NO_REPLY | Flags::BULK)]
}

// ---------------------------------------------------------------------------------------------
// Round trips
// ---------------------------------------------------------------------------------------------

/// Every opcode, deterministically: each must round-trip at least one request and one
/// response (so an opcode whose messages can never be encoded fails here).
#[test]
fn every_opcode_round_trips() {
    for &op in Opcode::ALL {
        let (mut requests, mut responses, mut errors) = (0, 0, 0);
        for seed in 0..24u64 {
            let bytes = seeded_bytes(seed * 131 + u64::from(op.raw()), [0, 8, 64, 300, 1500, 5000][seed as usize % 6]);
            let flags = if seed % 2 == 0 { Flags::empty() } else { Flags::NO_REPLY };
            if request_from(op, &bytes, flags, seed).is_some_and(|m| check_roundtrip(&m)) {
                requests += 1;
            }
            let aux = if seed % 3 == 0 { 0 } else { 10_000 + seed as i32 };
            if response_from(op, &bytes, seed, aux).is_some_and(|m| check_roundtrip(&m)) {
                responses += 1;
            }
            if error_from(op, &bytes, seed, aux).is_some_and(|m| check_roundtrip(&m)) {
                errors += 1;
            }
        }
        assert!(requests > 0, "{op}: no request round-tripped");
        assert!(responses > 0, "{op}: no response round-tripped");
        assert!(errors > 0, "{op}: no error reply round-tripped");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary requests and responses of every opcode.
    #[test]
    fn arbitrary_messages_round_trip(
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        flags in request_flags(),
        id in any::<u64>(),
        aux in any::<i32>(),
    ) {
        for &op in Opcode::ALL {
            if let Some(m) = request_from(op, &bytes, flags, id) {
                check_roundtrip(&m);
            }
            if let Some(m) = response_from(op, &bytes, id, aux) {
                check_roundtrip(&m);
            }
        }
        if let Some(m) = error_from(Opcode::ALL[id as usize % Opcode::ALL.len()], &bytes, id, aux) {
            check_roundtrip(&m);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile input never panics
// ---------------------------------------------------------------------------------------------

fn any_opcode() -> impl Strategy<Value = u16> {
    prop_oneof![any::<u16>(), proptest::sample::select(Opcode::ALL).prop_map(Opcode::raw)]
}

/// Runs every decoder on `bytes` as a frame; whatever the result, no panic.
fn decode_everything(bytes: &[u8]) {
    let _ = FrameHeader::parse(bytes);
    if let Ok(Deframed::Frame { frame, .. }) = FrameDecoder::decode(bytes) {
        let h = frame.header;
        let _ = Request::parse(h.opcode, frame.control, frame.bulk);
        let _ = Response::parse(h.opcode, frame.control, frame.bulk);
        let _ = ErrorReply::parse(frame.control, frame.bulk);
    }
    if let Ok(frame) = parse_frame(bytes) {
        let _ = Request::parse(frame.header.opcode, frame.control, frame.bulk);
        let _ = Response::parse(frame.header.opcode, frame.control, frame.bulk);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_parts_never_panic(
        opcode in any_opcode(),
        control in proptest::collection::vec(any::<u8>(), 0..512),
        bulk in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let req = Request::parse(opcode, &control, &bulk);
        let resp = Response::parse(opcode, &control, &bulk);
        if Opcode::from_u16(opcode).is_none() {
            prop_assert_eq!(req, Err(DecodeError::UnknownOpcode { opcode }));
            prop_assert_eq!(resp, Err(DecodeError::UnknownOpcode { opcode }));
        }
        let _ = ErrorReply::parse(&control, &bulk);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        decode_everything(&bytes);
    }

    /// Bytes behind a plausible header, so decoding gets past the magic and the lengths.
    #[test]
    fn arbitrary_frames_never_panic(
        opcode in any_opcode(),
        flags in 0u16..32,
        aux in prop_oneof![Just(0i32), any::<i32>()],
        control in proptest::collection::vec(any::<u8>(), 0..512),
        bulk in proptest::collection::vec(any::<u8>(), 0..64),
        slack in -2i64..3,
    ) {
        let header = FrameHeader {
            version: PROTOCOL_VERSION, opcode, flags: Flags::from_bits(flags & 0xf).unwrap(), credits: 0,
            request_id: 1, control_len: control.len() as u32, bulk_len: bulk.len() as u32, aux,
        };
        let mut bytes = header.emit().to_vec();
        bytes.extend_from_slice(&control);
        bytes.extend_from_slice(&bulk);
        let len = (bytes.len() as i64 + slack).max(0) as usize;
        bytes.resize(len, 0);
        decode_everything(&bytes);
    }

    /// Valid frames of every opcode with a few bytes changed: decoders refuse or accept, never
    /// panic, and whatever they accept re-encodes to a frame that parses again.
    #[test]
    fn mutated_frames_never_panic(
        seed in proptest::collection::vec(any::<u8>(), 0..512),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        for &op in Opcode::ALL {
            let msgs = [request_from(op, &seed, Flags::empty(), 9), response_from(op, &seed, 9, 0)];
            for m in msgs.iter().flatten() {
                let Some((mut wire, _)) = wire_of(m) else { continue };
                for (at, byte) in &edits {
                    let i = at.index(wire.len());
                    wire[i] = *byte;
                }
                decode_everything(&wire);
                if let Ok(frame) = parse_frame(&wire) {
                    if let Ok(parsed) = m.parse_like(&frame) {
                        let (again, _) = wire_of(&parsed).expect("accepted values re-encode");
                        let f2 = parse_frame(&again).expect("and parse again");
                        prop_assert_eq!(m.parse_like(&f2).unwrap().body(), parsed.body());
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Wire enums, booleans, flags
// ---------------------------------------------------------------------------------------------

fn decode_field<'a, T: WireField<'a>>(bytes: &'a [u8]) -> Result<T, DecodeError> {
    let mut cx = DecodeCx::new(bytes, &[]);
    let v = T::decode(&mut cx, "field")?;
    cx.finish()?;
    Ok(v)
}

#[test]
fn bool_accepts_only_zero_and_one() {
    for b in 0..=255u8 {
        let got = decode_field::<bool>(&[b]);
        match b {
            0 => assert_eq!(got, Ok(false)),
            1 => assert_eq!(got, Ok(true)),
            _ => assert_eq!(got, Err(DecodeError::InvalidValue { what: "field" })),
        }
    }
}

#[test]
fn u8_wire_enums_refuse_unknown_values() {
    for b in 0..=255u8 {
        let fam = decode_field::<Family>(&[b]);
        match Family::from_raw(b) {
            Some(f) => assert_eq!(fam, Ok(f)),
            None => assert_eq!(fam, Err(DecodeError::InvalidValue { what: "field" })),
        }
        let width = decode_field::<MemsetWidth>(&[b]);
        match b {
            1 => assert_eq!(width, Ok(MemsetWidth::Byte)),
            2 => assert_eq!(width, Ok(MemsetWidth::Half)),
            4 => assert_eq!(width, Ok(MemsetWidth::Word)),
            _ => assert_eq!(width, Err(DecodeError::InvalidValue { what: "field" })),
        }
    }
    assert_eq!(Family::ALL.len(), 14);
}

proptest! {
    #[test]
    fn module_format_refuses_unknown_values(raw in prop_oneof![0u32..16, any::<u32>()]) {
        let got = decode_field::<ModuleFormat>(&raw.to_le_bytes());
        if raw <= 6 {
            prop_assert_eq!(got.map(ModuleFormat::raw), Ok(raw));
        } else {
            prop_assert_eq!(got, Err(DecodeError::InvalidValue { what: "field" }));
        }
    }
}

#[test]
fn wire_enum_values_round_trip() {
    for &v in MemsetWidth::ALL {
        assert_eq!(MemsetWidth::from_raw(v.raw()), Some(v));
    }
    for &v in ModuleFormat::ALL {
        assert_eq!(decode_field::<ModuleFormat>(&v.raw().to_le_bytes()), Ok(v));
    }
    for &v in Family::ALL {
        assert_eq!(decode_field::<Family>(&[v.raw()]), Ok(v));
    }
}

/// Out-of-range values inside real messages are named in the error.
#[test]
fn messages_refuse_out_of_range_fields() {
    // Memset: dst u64, value u32, width u8 (offset 12), count u64, stream u64, sync bool (offset 29).
    let m = Memset { dst: 1, value: 2, width: MemsetWidth::Word, count: 3, stream: 0, sync: true };
    let (wire, _) = wire_of(&Msg::Req(Request::Memset(m.clone()), Flags::empty(), 1)).unwrap();
    let control = &wire[HEADER_LEN..];
    assert_eq!(control.len(), 30);
    assert_eq!(Request::parse(0x0206, control, &[]), Ok(Request::Memset(m.clone())));
    let mut bad = control.to_vec();
    bad[12] = 3;
    assert_eq!(Request::parse(0x0206, &bad, &[]), Err(DecodeError::InvalidValue { what: "Memset.width" }));
    let mut bad = control.to_vec();
    bad[29] = 2;
    assert_eq!(Request::parse(0x0206, &bad, &[]), Err(DecodeError::InvalidValue { what: "Memset.sync" }));

    // ModuleLoad: device u32, then format u32.
    let ml = ModuleLoad { device: 0, format: ModuleFormat::Auto, origin: Str("a.co"), image: Bulk(&[1, 2]) };
    let (wire, head) = wire_of(&Msg::Req(Request::ModuleLoad(ml), Flags::empty(), 1)).unwrap();
    let mut bad = wire[HEADER_LEN..head].to_vec();
    bad[4] = 7;
    assert_eq!(Request::parse(0x0501, &bad, &wire[head..]), Err(DecodeError::InvalidValue { what: "ModuleLoad.format" }));

    // Unknown flag bits, and aux on a request.
    let mut bad = wire.clone();
    bad[9] = 0x01; // flags bit 8
    assert_eq!(parse_frame(&bad), Err(DecodeError::InvalidValue { what: "header.flags" }));
    let mut bad = wire.clone();
    bad[28] = 1;
    assert_eq!(parse_frame(&bad), Err(DecodeError::InvalidValue { what: "header.aux on a request" }));
    // BULK flag and bulk_len must agree.
    let mut bad = wire.clone();
    bad[8] &= !(Flags::BULK.bits() as u8);
    assert_eq!(parse_frame(&bad), Err(DecodeError::InvalidValue { what: "header.flags BULK disagrees with bulk_len" }));
    // Unknown opcode.
    assert_eq!(Request::parse(0x0600, &[], &[]), Err(DecodeError::UnknownOpcode { opcode: 0x0600 }));
}

proptest! {
    #[test]
    fn header_refuses_undefined_flag_bits(bits in any::<u16>()) {
        let h = FrameHeader { version: PROTOCOL_VERSION, opcode: 3, flags: Flags::empty(), credits: 0, request_id: 0, control_len: 0, bulk_len: 0, aux: 0 };
        let mut b = h.emit();
        b[8..10].copy_from_slice(&bits.to_le_bytes());
        let got = FrameHeader::parse(&b);
        if bits & !0b1111 != 0 {
            prop_assert_eq!(got, Err(DecodeError::InvalidValue { what: "header.flags" }));
        } else if bits & Flags::BULK.bits() != 0 {
            prop_assert!(got.is_err()); // BULK without bulk data
        } else {
            prop_assert_eq!(got.map(|h| h.flags.bits()), Ok(bits));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Limits: refused before anything is read
// ---------------------------------------------------------------------------------------------

fn le32(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

/// `control` announces `len` in a prefix and stops: above the limit that must be `TooLarge`
/// (the check comes first), at the limit `Truncated` (the bytes are then looked for).
fn check_prefix_limit(opcode: u16, response: bool, prefix: &[u8], what: &'static str, max: usize, prefix_width: usize) {
    let parse = |control: &[u8]| {
        if response {
            Response::parse(opcode, control, &[]).map(drop)
        } else {
            Request::parse(opcode, control, &[]).map(drop)
        }
    };
    for (len, expect_too_large) in [(max + 1, true), (u32::MAX as usize, true), (max, false)] {
        if prefix_width == 2 && len > u16::MAX as usize {
            continue;
        }
        let mut control = prefix.to_vec();
        control.extend_from_slice(&(len as u32).to_le_bytes()[..prefix_width]);
        let got = parse(&control);
        if expect_too_large {
            assert_eq!(got, Err(DecodeError::TooLarge { what, len: len as u64, max: max as u64 }), "{what} = {len}");
        } else {
            assert_eq!(got, Err(DecodeError::Truncated { what }), "{what} = {len}");
        }
    }
}

#[test]
fn length_prefixes_over_their_limits_are_refused_first() {
    // Hello: min u16, max u16, features u64, client_name Name.
    check_prefix_limit(0x0001, false, &[1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0], "Hello.client_name", MAX_NAME_LEN, 4);
    // Ping: nonce u64, payload Blob.
    check_prefix_limit(0x0003, false, &[0; 8], "Ping.payload", MAX_BLOB_LEN, 4);
    // LaunchKernel: function u64, grid 3×u32, block 3×u32, shared u32, stream u64, args ArgBlob.
    check_prefix_limit(0x0505, false, &[0; 8 + 12 + 12 + 4 + 8], "LaunchKernel.args", MAX_KERNEL_ARGS_LEN, 4);
    // RtcCompile: device u32, name Name, source Text.
    check_prefix_limit(0x0601, false, &[0; 4], "RtcCompile.name", MAX_NAME_LEN, 4);
    check_prefix_limit(0x0601, false, &[0; 8], "RtcCompile.source", MAX_TEXT_LEN, 4);
    // RtcCompile.header_names: StrList byte length.
    check_prefix_limit(0x0601, false, &[0; 12], "RtcCompile.header_names", MAX_TEXT_LEN, 4);
    // FunctionInfo (response): function u64, params List<ParamDesc> count.
    check_prefix_limit(0x0503, true, &[0; 8], "FunctionInfo.params", MAX_KERNEL_PARAMS, 4);
    // DeviceProperties (response): name FixedStr<256>, u16 length.
    check_prefix_limit(0x0103, true, &[], "DeviceProperties.name", DEVICE_NAME_CAP, 2);
    check_prefix_limit(0x0103, true, &[0, 0], "DeviceProperties.arch_name", ARCH_NAME_CAP, 2);
    // ErrorReply: status i32, message Name.
    let mut control = vec![0; 4];
    control.extend_from_slice(&le32(MAX_NAME_LEN as u32 + 1));
    assert!(matches!(ErrorReply::parse(&control, &[]), Err(DecodeError::TooLarge { .. })));
}

#[test]
fn string_list_item_count_is_limited() {
    let ok = "\0".repeat(MAX_LIST_ITEMS);
    let too_many = "\0".repeat(MAX_LIST_ITEMS + 1);
    for (items, good) in [(&ok, true), (&too_many, false)] {
        let mut control = vec![0u8; 12]; // device 0, empty name, empty source
        control.extend_from_slice(&le32(items.len() as u32));
        control.extend_from_slice(items.as_bytes());
        control.extend_from_slice(&[0; 12]); // three empty lists
        let got = Request::parse(0x0601, &control, &[]);
        if good {
            assert!(got.is_ok(), "{got:?}");
        } else {
            assert_eq!(got, Err(DecodeError::TooLarge { what: "RtcCompile.header_names", len: items.len() as u64, max: MAX_LIST_ITEMS as u64 }));
        }
    }
    // An unterminated item or invalid UTF-8 is refused.
    for body in [&b"abc"[..], &b"a\0\xff\0"[..]] {
        let mut control = vec![0u8; 12];
        control.extend_from_slice(&le32(body.len() as u32));
        control.extend_from_slice(body);
        control.extend_from_slice(&[0; 12]);
        assert_eq!(Request::parse(0x0601, &control, &[]), Err(DecodeError::InvalidValue { what: "RtcCompile.header_names" }));
    }
}

#[test]
fn strings_refuse_nul_and_bad_utf8() {
    for body in [&b"a\0b"[..], &b"\xc3\x28"[..]] {
        let mut control = vec![0u8; 8];
        control.extend_from_slice(&le32(body.len() as u32));
        control.extend_from_slice(body);
        assert_eq!(Request::parse(0x0503, &control, &[]), Err(DecodeError::InvalidValue { what: "SymbolLookup.name" }));
    }
}

#[test]
fn header_lengths_over_limits_are_refused_before_the_payload() {
    let base = FrameHeader {
        version: PROTOCOL_VERSION,
        opcode: 0x0203,
        flags: Flags::BULK,
        credits: 0,
        request_id: 5,
        control_len: 17,
        bulk_len: 4,
        aux: 0,
    };
    let cases = [
        (FrameHeader { control_len: MAX_CONTROL_LEN as u32 + 1, ..base }, "control part", MAX_CONTROL_LEN),
        (FrameHeader { bulk_len: MAX_BULK_LEN as u32 + 1, ..base }, "bulk section", MAX_BULK_LEN),
    ];
    for (h, what, max) in cases {
        let bytes = h.emit();
        let len = if what == "control part" { h.control_len } else { h.bulk_len };
        let err = DecodeError::TooLarge { what, len: len.into(), max: max as u64 };
        // Only the 32 header bytes are present: the length is refused, not waited for.
        assert_eq!(FrameDecoder::decode(&bytes), Err(err));
        assert_eq!(FrameHeader::parse(&bytes), Err(err));
        assert_eq!(parse_frame(&bytes), Err(err));
    }
    // At the limits, the deframer asks for the bytes.
    let h = FrameHeader { control_len: MAX_CONTROL_LEN as u32, bulk_len: MAX_BULK_LEN as u32, ..base };
    assert_eq!(FrameDecoder::decode(&h.emit()), Ok(Deframed::NeedMore { needed: MAX_FRAME_LEN }));
    // bulk_len > payload_len.
    let mut raw = base.emit();
    raw[20..24].copy_from_slice(&le32(3));
    assert!(matches!(FrameDecoder::decode(&raw), Err(DecodeError::LengthMismatch { .. })));
}

#[test]
fn encoder_refuses_values_over_limits() {
    let long = "x".repeat(MAX_NAME_LEN + 1);
    let req = Request::ModuleGetFunction(SymbolLookup { module: 1, name: Name::from(long.as_str()) });
    let mut buf = vec![0u8; 1 << 16];
    assert_eq!(req.encode_frame(&mut buf, Flags::empty(), 1), Err(EncodeError::InvalidValue { what: "SymbolLookup.name" }));
    assert_placeholder(&buf);

    let blob = vec![0u8; MAX_BLOB_LEN + 1];
    let req = Request::Ping(Ping { nonce: 1, payload: Bytes(&blob) });
    let mut buf = vec![0u8; 1 << 17];
    assert_eq!(req.encode_frame(&mut buf, Flags::empty(), 1), Err(EncodeError::InvalidValue { what: "Ping.payload" }));
    assert_placeholder(&buf);
}

// ---------------------------------------------------------------------------------------------
// Interrupted encodes
// ---------------------------------------------------------------------------------------------

/// A field that fails after others were written leaves only a placeholder header, even in a
/// buffer that held a valid frame before.
#[test]
fn failed_encode_never_leaves_a_valid_frame() {
    let ping = Request::Ping(Ping { nonce: 7, payload: Bytes(b"hello") });
    let (old, head) = wire_of(&Msg::Req(ping, Flags::empty(), 1)).unwrap();
    assert!(parse_frame(&old).is_ok());

    let bad_name = "abc\0def";
    let bad = [
        Request::ModuleGetFunction(SymbolLookup { module: 3, name: Str(bad_name) }),
        Request::Hello(Hello { min_version: 1, max_version: 1, features: 0, client_name: Str(bad_name), resume_session: 0, auth_token: Bytes(b"") }),
        Request::ModuleLoad(ModuleLoad { device: 0, format: ModuleFormat::Auto, origin: Str(bad_name), image: Bulk(b"image") }),
    ];
    for req in &bad {
        let mut buf = old.clone();
        buf.resize(head.max(64), 0);
        let got = req.encode_frame(&mut buf, Flags::empty(), 2);
        assert!(matches!(got, Err(EncodeError::InvalidValue { .. })), "{got:?}");
        assert_placeholder(&buf);
    }
}
