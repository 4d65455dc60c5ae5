//! The fuzz seed corpus (`fuzz/corpus/<target>/*.bin`): valid inputs for every opcode in both
//! directions, so each fuzz target starts from frames that reach every message decoder.
//!
//! By default this test *checks* the committed corpus: a seed exists for every opcode and
//! direction in each target's directory, every frame seed decodes and parses completely, and
//! the corpus stays under 1 MiB. When the opcode table grows, regenerate with
//!
//! ```text
//! HIP_REMOTE_WRITE_CORPUS=1 cargo test -p hip-remote-benches --test fuzz_seeds
//! ```
//!
//! Seeds are made by `Request::arbitrary_for`/`Response::arbitrary_for` from two fixed byte
//! streams: `min` (empty: every field at its default) and `mix` (a fixed xorshift stream),
//! then encoded with the production encoder. Their exact bytes depend on the `arbitrary`
//! crate's algorithm, so the check is validity, not byte equality. Each seed is keyed by its raw
//! opcode (the request id and the targets' opcode bytes are the raw number, not a position in
//! the table), so a new line in the opcode table adds seeds and changes no other seed file.

use arbitrary::Unstructured;
use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::wire::ErrorReply;
use proto_core::{Deframed, EncodeError, EncodedFrame, Flags, FrameDecoder, Message, Opcode, Request, Response, Status};
use std::path::{Path, PathBuf};

const TARGETS: [&str; 3] = ["frame", "message", "roundtrip"];
const MAX_CORPUS_BYTES: u64 = 1 << 20;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus")
}

/// A fixed pseudo-random stream (xorshift64), so regenerating gives the same seeds.
fn mix_stream(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly printable ASCII, so strings come out readable and non-empty.
            if x & 0x300 == 0 {
                (x >> 24) as u8
            } else {
                b' ' + (x >> 32) as u8 % 95
            }
        })
        .collect()
}

/// Runs an encoder on a buffer of the size it asks for; returns head ++ bulk.
fn encode_wire<'a>(mut encode: impl FnMut(&mut [u8]) -> Result<EncodedFrame<'a>, EncodeError>) -> Vec<u8> {
    let required = match encode(&mut []) {
        Err(EncodeError::BufferTooSmall { required }) => required,
        other => panic!("measuring the encoding: {other:?}"),
    };
    let mut head = vec![0u8; required];
    let enc = encode(&mut head).expect("seed encodes");
    [&head[..enc.head_len], enc.bulk].concat()
}

/// Splits an encoded frame into (control, bulk).
fn payload(wire: &[u8]) -> (&[u8], &[u8]) {
    match FrameDecoder::decode(wire) {
        Ok(Deframed::Frame { frame, .. }) => (frame.control, frame.bulk),
        other => panic!("seed frame does not decode: {other:?}"),
    }
}

/// The `message` target's input: raw opcode (u16 LE), split byte, control, bulk.
fn message_input(op: Opcode, control: &[u8], bulk: &[u8]) -> Option<Vec<u8>> {
    let split = match (bulk.is_empty(), u8::try_from(control.len())) {
        (true, _) => 255,
        (false, Ok(n)) if n < 255 => n,
        _ => return None, // not expressible with one split byte
    };
    Some([&op.raw().to_le_bytes()[..], &[split], control, bulk].concat())
}

/// Every seed: (target, file name, bytes).
fn seeds() -> Vec<(&'static str, String, Vec<u8>)> {
    let streams: [(&str, Vec<u8>); 2] = [("min", Vec::new()), ("mix", mix_stream(192))];
    let mut out = Vec::new();
    let mut all_requests = Vec::new();
    for &op in Opcode::ALL {
        for (variant, stream) in &streams {
            for (dir, dir_byte) in [("req", 0u8), ("resp", 1u8)] {
                let name = format!("{dir}-{}-{variant}.bin", op.name());
                let mut u = Unstructured::new(stream);
                let id = u64::from(op.raw());
                let wire = if dir_byte == 0 {
                    let req = Request::arbitrary_for(op, &mut u).expect("arbitrary request");
                    encode_wire(|buf| req.encode_frame(buf, Flags::empty(), id))
                } else {
                    let resp = Response::arbitrary_for(op, &mut u).expect("arbitrary response");
                    encode_wire(|buf| resp.encode_frame(buf, id, 0))
                };
                let (control, bulk) = payload(&wire);
                if let Some(input) = message_input(op, control, bulk) {
                    out.push(("message", name.clone(), input));
                }
                out.push(("roundtrip", name.clone(), [&op.raw().to_le_bytes()[..], &[dir_byte], stream].concat()));
                if dir_byte == 0 && *variant == "mix" {
                    all_requests.extend_from_slice(&wire);
                }
                out.push(("frame", name, wire));
            }
        }
    }
    // A stream of several frames, and an error reply with a deferred status in `aux`.
    out.push(("frame", "stream-all-requests.bin".into(), all_requests));
    let reply = ErrorReply { status: Status::INVALID_HANDLE, message: "no such stream".into() };
    let meta = FrameMeta {
        opcode: Opcode::StreamSynchronize.raw(),
        flags: Flags::RESPONSE | Flags::ERROR,
        request_id: 9,
        credits: 0,
        aux: Status::OUT_OF_MEMORY.0,
    };
    out.push(("frame", "err-StreamSynchronize.bin".into(), encode_wire(|buf| encode_frame(buf, meta, &reply))));
    out
}

/// A single-message frame seed carries its opcode's raw number as its request id: nothing in
/// it depends on the opcode's place in the table, so a new table line changes no other seed.
fn check_keyed_by_opcode(path: &Path, bytes: &[u8]) {
    let name = path.file_name().unwrap().to_string_lossy();
    if !(name.starts_with("req-") || name.starts_with("resp-")) {
        return;
    }
    let Ok(Deframed::Frame { frame, .. }) = FrameDecoder::decode(bytes) else { return };
    assert_eq!(
        frame.header.request_id,
        u64::from(frame.header.opcode),
        "{name}: request id {} is not its opcode {:#06x}; regenerate: HIP_REMOTE_WRITE_CORPUS=1 cargo test -p hip-remote-benches --test fuzz_seeds",
        frame.header.request_id,
        frame.header.opcode
    );
}

/// Decodes every frame of a frame seed; each must parse as a request, response or error reply.
fn check_frame_seed(name: &str, mut bytes: &[u8]) {
    assert!(!bytes.is_empty(), "{name}: empty");
    while !bytes.is_empty() {
        let (consumed, frame) = match FrameDecoder::decode(bytes) {
            Ok(Deframed::Frame { consumed, frame }) => (consumed, frame),
            other => panic!("{name}: not a sequence of whole frames: {other:?}"),
        };
        let h = frame.header;
        let ok = Request::parse(h.opcode, frame.control, frame.bulk).is_ok()
            || Response::parse(h.opcode, frame.control, frame.bulk).is_ok()
            || ErrorReply::parse(frame.control, frame.bulk).is_ok();
        assert!(ok, "{name}: frame of opcode {:#06x} parses as nothing", h.opcode);
        bytes = &bytes[consumed..];
    }
}

#[test]
fn fuzz_seed_corpus() {
    let root = corpus_dir();
    if std::env::var_os("HIP_REMOTE_WRITE_CORPUS").is_some() {
        for (target, name, bytes) in seeds() {
            let dir = root.join(target);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(name), bytes).unwrap();
        }
    }

    let regenerate = "regenerate: HIP_REMOTE_WRITE_CORPUS=1 cargo test -p hip-remote-benches --test fuzz_seeds";
    let mut total = 0;
    for target in TARGETS {
        let dir = root.join(target);
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}; {regenerate}", dir.display())) {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            total += bytes.len() as u64;
            if target == "frame" {
                check_frame_seed(&path.display().to_string(), &bytes);
                check_keyed_by_opcode(&path, &bytes);
            }
        }
        for op in Opcode::ALL {
            for dir_name in ["req", "resp"] {
                let name = format!("{dir_name}-{}-min.bin", op.name());
                assert!(dir.join(&name).exists(), "{target}: no seed {name}; {regenerate}");
            }
        }
    }
    assert!(total < MAX_CORPUS_BYTES, "seed corpus is {total} bytes, over 1 MiB");
}

#[test]
fn message_seeds_parse_by_the_targets_rule() {
    for (target, name, bytes) in seeds() {
        if target != "message" {
            continue;
        }
        let op = Opcode::from_u16(u16::from_le_bytes([bytes[0], bytes[1]])).unwrap_or_else(|| panic!("message seed {name}: not a raw opcode"));
        assert!(name.contains(&format!("-{}-", op.name())), "message seed {name} names another opcode than its {}", op.name());
        let rest = &bytes[3..];
        let (control, bulk) = if bytes[2] == 255 { (rest, &[][..]) } else { rest.split_at(usize::from(bytes[2])) };
        let ok =
            if name.starts_with("req") { Request::parse(op.raw(), control, bulk).is_ok() } else { Response::parse(op.raw(), control, bulk).is_ok() };
        assert!(ok, "message seed {name} does not parse");
    }
}
