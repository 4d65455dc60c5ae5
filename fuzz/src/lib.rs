//! Checks shared by the proto-core fuzz targets (`fuzz_targets/*.rs`).
//!
//! The property every target asserts, as rustls's `fuzz/fuzzers/message.rs` does: whatever
//! proto-core accepts, it re-encodes to exactly the bytes it accepted. A message has one wire
//! form, so a peer cannot smuggle a second meaning past a decoder that re-serialises (logs,
//! proxies, the worker's replay of a session). And the bulk section is never copied: the
//! re-encoded frame's bulk is the very slice the decoder borrowed.
//!
//! Only production paths are used (`FrameDecoder`, `Request::parse`, `encode_frame`); nothing
//! in proto-core is compiled differently for fuzzing.

use proto_core::field::{DecodeCx, EncodeCx};
use proto_core::frame::{encode_frame, FrameMeta};
use proto_core::wire::ErrorReply;
use proto_core::{DecodeError, EncodeError, Frame, FrameHeader, Message, Request, Response, HEADER_LEN, PROTOCOL_VERSION};

/// Lets [`encode_frame`] write a [`Request`] or [`Response`] under any [`FrameMeta`]: the
/// `encode_frame` methods of those enums fix flags, credits and aux, and proto-core's own
/// adapter is private. Encode-only.
pub struct Encode<'r, T>(pub &'r T);

impl<'a> Message<'a> for Encode<'_, Request<'a>> {
    const MAX_CONTROL_LEN: usize = proto_core::limits::MAX_CONTROL_LEN;
    const HAS_BULK: bool = true;
    fn decode(_: &mut DecodeCx<'a>) -> Result<Self, DecodeError> {
        Err(DecodeError::InvalidValue { what: "Encode is encode-only" })
    }
    fn encode<'w>(&self, cx: &mut EncodeCx<'w, 'a>) -> Result<(), EncodeError> {
        self.0.encode(cx)
    }
}

impl<'a> Message<'a> for Encode<'_, Response<'a>> {
    const MAX_CONTROL_LEN: usize = proto_core::limits::MAX_CONTROL_LEN;
    const HAS_BULK: bool = true;
    fn decode(_: &mut DecodeCx<'a>) -> Result<Self, DecodeError> {
        Err(DecodeError::InvalidValue { what: "Encode is encode-only" })
    }
    fn encode<'w>(&self, cx: &mut EncodeCx<'w, 'a>) -> Result<(), EncodeError> {
        self.0.encode(cx)
    }
}

/// The addressing part of a parsed header, to re-encode under.
pub fn meta_of(h: &FrameHeader) -> FrameMeta {
    FrameMeta { opcode: h.opcode, flags: h.flags, request_id: h.request_id, credits: h.credits, aux: h.aux }
}

/// Encodes `msg` under `meta` into a head buffer sized for exactly `control.len()` control
/// bytes and asserts that the result is `control` followed by the borrowed `bulk` (same bytes
/// and, when non-empty, the same slice). Returns the head (header + control part).
pub fn assert_reencodes<'a, M: Message<'a> + core::fmt::Debug>(what: &str, meta: FrameMeta, msg: &M, control: &[u8], bulk: &[u8]) -> Vec<u8> {
    let mut head = vec![0xa5u8; HEADER_LEN + control.len()];
    let enc = match encode_frame(&mut head, meta, msg) {
        Ok(enc) => enc,
        Err(e) => panic!("{what} {:#06x} parsed but does not re-encode into {} control bytes: {e}\n{msg:?}", meta.opcode, control.len()),
    };
    assert_eq!(enc.head_len, head.len(), "{what} {:#06x}: re-encoded control length differs\n{msg:?}", meta.opcode);
    assert_eq!(&head[HEADER_LEN..], control, "{what} {:#06x}: re-encoded control part differs\n{msg:?}", meta.opcode);
    assert_eq!(enc.bulk, bulk, "{what} {:#06x}: re-encoded bulk differs", meta.opcode);
    if !bulk.is_empty() {
        assert!(core::ptr::eq(enc.bulk, bulk), "{what} {:#06x}: bulk was copied, not borrowed", meta.opcode);
    }
    head
}

/// Checks one frame found by `FrameDecoder::decode`: whichever of request, success response
/// and error reply its payload parses as must re-encode, under the same header fields, to
/// exactly the `consumed` bytes (header included).
pub fn check_frame(consumed: &[u8], frame: Frame<'_>) {
    let h = frame.header;
    assert_eq!(consumed.len(), HEADER_LEN + frame.control.len() + frame.bulk.len(), "consumed != header + payload");
    assert_eq!(&consumed[HEADER_LEN..HEADER_LEN + frame.control.len()], frame.control);
    assert_eq!(&consumed[HEADER_LEN + frame.control.len()..], frame.bulk);
    assert_eq!(FrameHeader::parse(consumed), Ok(h), "header does not parse the same twice");

    // encode_frame always writes this crate's version; every other header field comes from
    // the meta, so with one supported version the whole head must match byte for byte.
    let expect_header = FrameHeader { version: PROTOCOL_VERSION, ..h }.emit();
    let check_head = |what: &str, head: Vec<u8>| {
        assert_eq!(head[..HEADER_LEN], expect_header, "{what} {:#06x}: re-encoded header differs", h.opcode);
        if h.version == PROTOCOL_VERSION {
            assert_eq!(head[..], consumed[..head.len()], "{what}: re-encoded frame differs");
        }
    };
    if let Ok(req) = Request::parse(h.opcode, frame.control, frame.bulk) {
        assert_eq!(req.opcode().raw(), h.opcode);
        check_head("request", assert_reencodes("request", meta_of(&h), &Encode(&req), frame.control, frame.bulk));
    }
    if let Ok(resp) = Response::parse(h.opcode, frame.control, frame.bulk) {
        assert_eq!(resp.opcode().raw(), h.opcode);
        check_head("response", assert_reencodes("response", meta_of(&h), &Encode(&resp), frame.control, frame.bulk));
    }
    if let Ok(err) = ErrorReply::parse(frame.control, frame.bulk) {
        check_head("error reply", assert_reencodes("error reply", meta_of(&h), &err, frame.control, frame.bulk));
    }
}

/// Makes glibc's allocator keep freed memory in the process instead of handing it back to the
/// kernel. A target that builds and drops a few hundred kilobytes per execution (an RDMA link's
/// rings, a session's buffers) otherwise shrinks the heap at the end of every execution and
/// grows it again at the start of the next: a `brk` and a page fault per page each time, which
/// cost several times what the code under test does. Called once from a target's `init`.
pub fn keep_freed_memory() {
    /// Free memory at the top of the heap beyond this is given back (glibc: 128 KiB, adapted
    /// upwards as large blocks are freed).
    const TRIM_THRESHOLD: libc::c_int = 1 << 30;
    // SAFETY: `mallopt` only changes tuning parameters of glibc's allocator; it is called
    // before the target's first execution, and takes the allocator's own lock. Under
    // AddressSanitizer its allocator is in charge and refuses (returns 0): it has no such
    // parameter, so there is nothing to tune.
    unsafe { libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD) };
}

impl<T: core::fmt::Debug> core::fmt::Debug for Encode<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.0.fmt(f)
    }
}
