//! Arbitrary bytes as a TCP byte stream: `FrameDecoder::decode_head` (the TCP transport's
//! receive path) and `FrameDecoder::decode` in a loop, which must agree, then every frame found through `Request::parse`, `Response::parse` and
//! `ErrorReply::parse`. Whatever parses must re-encode to exactly the bytes consumed
//! (`hip_remote_fuzz::check_frame`). Seeds: `fuzz/corpus/frame/` (one valid frame per opcode
//! and direction, plus a stream of several).
#![no_main]

use hip_remote_fuzz::check_frame;
use libfuzzer_sys::fuzz_target;
use proto_core::{Deframed, DeframedHead, FrameDecoder, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    loop {
        let head = FrameDecoder::decode_head(rest);
        let whole = FrameDecoder::decode(rest);
        match (&head, &whole) {
            // A whole frame has a whole head: the same header and control part.
            (Ok(DeframedHead::Head { header, control, consumed }), Ok(Deframed::Frame { frame, .. })) => {
                assert_eq!(*header, frame.header);
                assert_eq!(*control, frame.control);
                assert!(*consumed <= rest.len());
            }
            (Ok(DeframedHead::NeedMore { needed }), Ok(Deframed::NeedMore { needed: total })) => assert!(needed <= total),
            (Ok(DeframedHead::Head { .. }), Ok(Deframed::NeedMore { .. })) | (Ok(DeframedHead::Head { .. }), Err(_)) => {}
            (Err(e), Err(f)) => assert_eq!(e, f, "head and frame refused for different reasons"),
            (head, whole) => panic!("decode_head {head:?} but decode {whole:?}"),
        }
        match whole {
            Ok(Deframed::Frame { consumed, frame }) => {
                assert!(consumed >= HEADER_LEN && consumed <= rest.len(), "consumed {consumed} of {}", rest.len());
                check_frame(&rest[..consumed], frame);
                rest = &rest[consumed..];
            }
            Ok(Deframed::NeedMore { needed }) => {
                // Never asks for what it already has, and never for a hostile length (the
                // header was validated against the limits first).
                assert!(needed > rest.len(), "NeedMore {needed} with {} bytes buffered", rest.len());
                assert!(needed <= proto_core::limits::MAX_FRAME_LEN);
                break;
            }
            // A stream with a bad frame is dropped by the transport; nothing more to read.
            Err(_) => break,
        }
    }
});
