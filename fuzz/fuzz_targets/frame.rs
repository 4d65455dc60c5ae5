//! Arbitrary bytes as a TCP byte stream: `FrameDecoder::decode` in a loop, as a transport's
//! receive path does, then every frame found through `Request::parse`, `Response::parse` and
//! `ErrorReply::parse`. Whatever parses must re-encode to exactly the bytes consumed
//! (`hip_remote_fuzz::check_frame`). Seeds: `fuzz/corpus/frame/` (one valid frame per opcode
//! and direction, plus a stream of several).
#![no_main]

use hip_remote_fuzz::check_frame;
use libfuzzer_sys::fuzz_target;
use proto_core::{Deframed, FrameDecoder, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    loop {
        match FrameDecoder::decode(rest) {
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
