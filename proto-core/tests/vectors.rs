//! The test vectors of `docs/PROTOCOL.md`, checked byte for byte.
//!
//! Every fenced block with the info string `hex vector=<name>` is extracted; the message named
//! `<name>` is built here, encoded, and must give exactly the block's bytes; the bytes are then
//! deframed and parsed and must give the message back. Vectors missing from the document,
//! unknown names and duplicates fail too, so the specification cannot drift from the code.
//!
//! To print the vectors after an intentional wire change:
//! `cargo test -p proto-core --test vectors -- --ignored --nocapture`.

use proto_core::field::{Bytes, Str};
use proto_core::frame::FrameMeta;
use proto_core::wire::features::{BULK_STREAMING, FIRE_AND_FORGET};
use proto_core::wire::*;
use proto_core::*;

const PROTOCOL_MD: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/PROTOCOL.md"));

/// A frame as a test vector describes it.
#[allow(clippy::large_enum_variant)] // test values, never stored in bulk
#[derive(Debug, PartialEq)]
enum Vector<'a> {
    Req(Request<'a>, Flags, u64),
    Resp(Response<'a>, u64, i32),
    Error(Opcode, ErrorReply<'a>, u64, i32),
}

/// Kernel arguments of the `launch_kernel` vector: `float* x`, `float* y`, `float a`, packed
/// at the offsets `hipModuleGetFunction` reported (0, 8, 16).
const LAUNCH_ARGS: [u8; 20] = {
    let mut a = [0u8; 20];
    let x = 0x7f00_0000_1000u64.to_le_bytes();
    let y = 0x7f00_0000_2000u64.to_le_bytes();
    let s = 2.0f32.to_bits().to_le_bytes();
    let mut i = 0;
    while i < 8 {
        a[i] = x[i];
        a[8 + i] = y[i];
        if i < 4 {
            a[16 + i] = s[i];
        }
        i += 1;
    }
    a
};

/// Every vector the document must contain, in document order.
const NAMES: &[&str] = &[
    "hello",
    "welcome",
    "ping",
    "pong",
    "malloc",
    "allocation",
    "memcpy_htod",
    "empty_reply",
    "memcpy_dtoh",
    "memcpy_data",
    "launch_kernel",
    "error_reply",
    "memset_no_reply",
    "deferred_aux",
];

fn vector(name: &str) -> Vector<'static> {
    match name {
        "hello" => Vector::Req(
            Request::Hello(Hello {
                min_version: 2,
                max_version: 2,
                features: FIRE_AND_FORGET | BULK_STREAMING,
                client_name: Str("saxpy@node7"),
                resume_session: 0,
                auth_token: Bytes(b""),
            }),
            Flags::empty(),
            1,
        ),
        "welcome" => Vector::Resp(
            Response::Hello(Welcome {
                version: 2,
                features: FIRE_AND_FORGET | BULK_STREAMING,
                session_id: 0x1122_3344_5566_7788,
                resumed: false,
                worker_name: Str("gpu0"),
                backend: Str("hip"),
                auth_challenge: Bytes(b""),
                rdma_endpoint: Str(""),
                resume_secret: Bytes(b""),
            }),
            1,
            0,
        ),
        "ping" => Vector::Req(Request::Ping(Ping { nonce: 0xdead_beef, payload: Bytes(b"hi") }), Flags::empty(), 2),
        "pong" => Vector::Resp(Response::Ping(Pong { nonce: 0xdead_beef, worker_time_ns: 1_000_000_000, payload: Bytes(b"hi") }), 2, 0),
        "malloc" => Vector::Req(Request::Malloc(Malloc { device: 0, size: 4096, flags: 0 }), Flags::empty(), 3),
        "allocation" => Vector::Resp(Response::Malloc(Allocation { ptr: 0x7f00_0000_1000 }), 3, 0),
        "memcpy_htod" => Vector::Req(
            Request::MemcpyHtoD(MemcpyHtoD { dst: 0x7f00_0000_1000, stream: 0, sync: true, data: Bulk(&[0xde, 0xad, 0xbe, 0xef]) }),
            Flags::BULK,
            4,
        ),
        "empty_reply" => Vector::Resp(Response::MemcpyHtoD(Empty {}), 4, 0),
        "memcpy_dtoh" => Vector::Req(Request::MemcpyDtoH(MemcpyDtoH { src: 0x7f00_0000_1000, len: 4, stream: 0 }), Flags::empty(), 5),
        "memcpy_data" => Vector::Resp(Response::MemcpyDtoH(MemcpyData { data: Bulk(&[0xde, 0xad, 0xbe, 0xef]) }), 5, 0),
        "launch_kernel" => Vector::Req(
            Request::LaunchKernel(LaunchKernel {
                function: 0x10,
                grid: [4, 1, 1],
                block: [256, 1, 1],
                shared_mem: 0,
                stream: 0,
                args: Bytes(&LAUNCH_ARGS),
            }),
            Flags::empty(),
            6,
        ),
        "error_reply" => Vector::Error(Opcode::Malloc, ErrorReply { status: Status::OUT_OF_MEMORY, message: Str("out of memory") }, 7, 0),
        "memset_no_reply" => Vector::Req(
            Request::Memset(Memset { dst: 0x7f00_0000_1000, value: 0, width: MemsetWidth::Byte, count: 4096, stream: 0, sync: false }),
            Flags::NO_REPLY,
            8,
        ),
        "deferred_aux" => Vector::Resp(Response::StreamSynchronize(Empty {}), 9, Status::INVALID_DEVICE_POINTER.0),
        other => panic!("PROTOCOL.md has a vector named {other:?} that tests/vectors.rs does not know"),
    }
}

/// The vector's frame as it goes on the wire: head, then bulk.
fn encode(v: &Vector<'_>) -> Vec<u8> {
    let mut buf = [0u8; 256];
    let enc = match v {
        Vector::Req(r, flags, id) => r.encode_frame(&mut buf, *flags, *id),
        Vector::Resp(r, id, aux) => r.encode_frame(&mut buf, *id, *aux),
        Vector::Error(op, e, id, aux) => {
            let meta = FrameMeta { opcode: op.raw(), flags: Flags::RESPONSE | Flags::ERROR, request_id: *id, credits: 0, aux: *aux };
            encode_frame(&mut buf, meta, e)
        }
    }
    .expect("vector encodes");
    let mut wire = buf[..enc.head_len].to_vec();
    wire.extend_from_slice(enc.bulk);
    wire
}

/// Parses `bytes` the way a receiver expecting `like` would.
fn parse<'b>(like: &Vector<'_>, bytes: &'b [u8]) -> Vector<'b> {
    let frame = match FrameDecoder::decode(bytes) {
        Ok(Deframed::Frame { consumed, frame }) if consumed == bytes.len() => frame,
        other => panic!("does not deframe: {other:?}"),
    };
    let h = frame.header;
    assert_eq!(h.version, PROTOCOL_VERSION);
    match like {
        Vector::Req(..) => {
            assert!(!h.flags.contains(Flags::RESPONSE));
            Vector::Req(Request::parse(h.opcode, frame.control, frame.bulk).unwrap(), h.flags, h.request_id)
        }
        Vector::Resp(..) => {
            assert!(h.flags.contains(Flags::RESPONSE) && !h.flags.contains(Flags::ERROR));
            Vector::Resp(Response::parse(h.opcode, frame.control, frame.bulk).unwrap(), h.request_id, h.aux)
        }
        Vector::Error(..) => {
            assert!(h.flags.contains(Flags::RESPONSE | Flags::ERROR));
            let op = Opcode::from_u16(h.opcode).expect("known opcode");
            Vector::Error(op, ErrorReply::parse(frame.control, frame.bulk).unwrap(), h.request_id, h.aux)
        }
    }
}

/// `(name, bytes)` of every `hex vector=` block, in document order.
fn doc_vectors(doc: &str) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else { continue };
        let mut words = info.split_whitespace();
        if words.next() != Some("hex") {
            // Skip other fenced blocks whole, so a ``` inside them is not mistaken for ours.
            for inner in lines.by_ref() {
                if inner.trim_start().starts_with("```") {
                    break;
                }
            }
            continue;
        }
        let name = words.find_map(|w| w.strip_prefix("vector=")).unwrap_or_else(|| panic!("hex block without vector=: {line:?}")).to_string();
        let mut bytes = Vec::new();
        for body in lines.by_ref() {
            if body.trim_start().starts_with("```") {
                break;
            }
            for tok in body.split_whitespace() {
                assert_eq!(tok.len(), 2, "vector {name}: {tok:?} is not one hex byte");
                bytes.push(u8::from_str_radix(tok, 16).unwrap_or_else(|_| panic!("vector {name}: {tok:?} is not hex")));
            }
        }
        out.push((name, bytes));
    }
    out
}

fn hex_lines(bytes: &[u8]) -> String {
    bytes.chunks(16).map(|c| c.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join("\n")
}

#[test]
fn protocol_md_vectors_match_the_code() {
    let vectors = doc_vectors(PROTOCOL_MD);
    let names: Vec<&str> = vectors.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, NAMES, "the vectors in docs/PROTOCOL.md (in order)");
    for (name, doc_bytes) in &vectors {
        let v = vector(name);
        let ours = encode(&v);
        assert!(ours == *doc_bytes, "vector {name}: PROTOCOL.md has\n{}\nbut the code encodes\n{}", hex_lines(doc_bytes), hex_lines(&ours));
        assert_eq!(parse(&v, doc_bytes), v, "vector {name} parses to a different message");
    }
}

/// The extractor itself: a changed byte is seen, and malformed blocks are refused.
#[test]
fn extractor_sees_every_byte() {
    let doc = "text\n```rust\nlet x = 1;\n```\n```hex vector=ping\n48 49\n50 52\n```\n";
    assert_eq!(doc_vectors(doc), vec![("ping".to_string(), b"HIPR".to_vec())]);

    let (name, mut bytes) = doc_vectors(PROTOCOL_MD).into_iter().find(|(n, _)| n == "memcpy_htod").unwrap();
    let v = vector(&name);
    for i in 0..bytes.len() {
        bytes[i] ^= 0x01;
        assert_ne!(encode(&v), bytes);
        bytes[i] ^= 0x01;
    }
    assert!(std::panic::catch_unwind(|| doc_vectors("```hex vector=x\n4g\n```\n")).is_err());
}

/// Prints every vector in the document's format (for regenerating PROTOCOL.md).
#[test]
#[ignore]
fn print_vectors() {
    for name in NAMES {
        println!("```hex vector={name}\n{}\n```\n", hex_lines(&encode(&vector(name))));
    }
}

/// Type name and field names, in wire order, of a message as its `Debug` form shows them; the
/// fields of a nested message are named with its field's name in front (`copy.dst.array`).
fn shape(debug: &str) -> (String, Vec<String>) {
    // "Variant(Type { a: .., b: Inner { c: .. } })" or "Variant(Type)"; values of default
    // messages are numbers, empty strings and lists, and nested messages.
    let inner = &debug[debug.find('(').unwrap() + 1..];
    let ty: String = inner.chars().take_while(|c| c.is_alphanumeric()).collect();
    let mut fields = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let body = inner.find('{').map_or("", |at| &inner[at + 1..]);
    let mut rest = body;
    while let Some(at) = rest.find([':', '}']) {
        if rest.as_bytes()[at] == b'}' {
            if path.pop().is_none() {
                break;
            }
            rest = &rest[at + 1..];
            continue;
        }
        let name = rest[..at].rsplit([',', '{', ' ']).next().unwrap().to_string();
        let value = rest[at + 1..].trim_start();
        let nested: String = value.chars().take_while(|c| c.is_alphanumeric()).collect();
        if !nested.is_empty() && value[nested.len()..].starts_with(" {") {
            path.push(name);
            rest = &value[nested.len() + 2..];
        } else {
            fields.push(path.iter().chain([&name]).cloned().collect::<Vec<_>>().join("."));
            rest = &rest[at + 1..];
        }
    }
    (ty, fields)
}

/// Field names of the first table documenting message `ty`.
fn documented_fields(doc: &str, ty: &str) -> Option<Vec<String>> {
    let key = format!("`{ty}` — ");
    let mut lines = doc.lines().skip_while(|l| !((l.starts_with("**Request:**") || l.starts_with("**Response:**")) && l.contains(&key)));
    lines.next()?;
    let rows = lines.skip_while(|l| l.trim().is_empty()).take_while(|l| l.starts_with('|')).skip(2);
    Some(rows.map(|row| row.split('|').nth(2).unwrap().trim().trim_matches('`').to_string()).collect())
}

/// Section 12 lists every opcode of the table with its request and response types, bulk way
/// and delivery, and each
/// message's fields in wire order, so a new or changed table line fails here until documented.
#[test]
fn opcode_table_is_documented() {
    let empty = || arbitrary::Unstructured::new(&[]);
    for &op in Opcode::ALL {
        let req = format!("{:?}", Request::arbitrary_for(op, &mut empty()).unwrap());
        let resp = format!("{:?}", Response::arbitrary_for(op, &mut empty()).unwrap());
        let (req_ty, req_fields) = shape(&req);
        let (resp_ty, resp_fields) = shape(&resp);
        let bulk = match op.bulk() {
            BulkWay::None => "—",
            BulkWay::Request => "request",
            BulkWay::RequestToDevice => "request → device",
            BulkWay::Reply => "reply",
        };
        let delivery = match op.delivery() {
            Delivery::Call => "call",
            Delivery::Post => "post",
        };
        let row = format!("| `{:#06x}` | {} | `{req_ty}` | `{resp_ty}` | {bulk} | {delivery} |", op.raw(), op.name());
        assert!(PROTOCOL_MD.contains(&row), "PROTOCOL.md lacks the overview row {row}");
        let heading = format!("#### `{:#06x}` {}", op.raw(), op.name());
        assert!(PROTOCOL_MD.contains(&heading), "PROTOCOL.md lacks {heading}");
        for (ty, fields) in [(req_ty, req_fields), (resp_ty, resp_fields)] {
            if ty == "Empty" {
                continue;
            }
            let doc = documented_fields(PROTOCOL_MD, &ty).unwrap_or_else(|| panic!("PROTOCOL.md has no table for {ty}"));
            assert_eq!(doc, fields, "fields of {ty} in PROTOCOL.md");
        }
    }
    let err = format!("{:?}", ErrorReply::default());
    assert_eq!(shape(&format!("X({err})")).1, ["status", "message"]);
}
