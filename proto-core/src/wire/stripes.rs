//! Striped TCP bulk: extra connections of one session that carry the chunks of large copies
//! in parallel (`docs/TRANSPORTS.md`, section "Striped TCP").
//!
//! Chunk `k` of a striped copy of `len` bytes covers bytes `k * chunk_bytes ..` (the last one
//! shorter) and travels on stripe `k % stripes`, in order on each stripe; both sides compute
//! this schedule from the copy's request, so a chunk frame only names its copy and offset.

use crate::field::{Blob, Bulk};

/// Length of [`StripesGrant::join_key`].
pub const STRIPE_JOIN_KEY_LEN: usize = 32;

message! {
    /// Asks for `count` stripe connections (session family, after authentication).
    pub struct StripesOpen {
        /// Stripes wanted.
        pub count: u32,
    }
}

message! {
    /// Answer to [`StripesOpen`]; `granted` 0: striping refused, copies take the main
    /// connection (a relayed session process, RDMA, `--max-stripes 0`).
    pub struct StripesGrant<'a> {
        /// Stripe connections the client may join, with indices `0..granted`.
        pub granted: u32,
        /// Bytes per chunk of a striped copy (the last chunk of a copy is shorter).
        pub chunk_bytes: u64,
        /// Secret each stripe presents in [`StripeJoin`] ([`STRIPE_JOIN_KEY_LEN`] random bytes).
        pub join_key: Blob<'a>,
    }
}

message! {
    /// First and only request of a stripe connection: binds it to a session as stripe `index`.
    pub struct StripeJoin<'a> {
        /// The session's id (WELCOME).
        pub session_id: u64,
        /// Stripe index, below the granted count; each index joins once.
        pub index: u32,
        /// The grant's join key.
        pub join_key: Blob<'a>,
    }
}

message! {
    /// One chunk of a striped copy, on a stripe connection: client to worker for uploads,
    /// worker to client (as a response frame with request id 0) for downloads. A download
    /// chunk with the ERROR flag and no bytes says the copy failed (the worker still sends
    /// one frame per scheduled chunk, so the stripe stays in step).
    pub struct StripeChunk<'a> {
        /// The copy's id, from its request on the main connection.
        pub copy_id: u64,
        /// Offset of the chunk in the copy.
        pub offset: u64,
        /// The chunk's bytes (the frame's bulk section).
        pub data: Bulk<'a>,
    }
}

message! {
    /// Host-to-device copy whose bytes come as [`StripeChunk`]s on the session's stripes;
    /// answered once every chunk has been written.
    pub struct MemcpyHtoDStriped {
        /// Destination device address.
        pub dst: u64,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// Complete the copy on the device before responding.
        pub sync: bool,
        /// Names the copy in its chunk frames.
        pub copy_id: u64,
        /// Stripes the chunks are spread over (every joined stripe).
        pub stripes: u32,
    }
}

message! {
    /// Device-to-host copy whose bytes go back as [`StripeChunk`]s on the session's stripes;
    /// answered (empty) after the last chunk was sent.
    pub struct MemcpyDtoHStriped {
        /// Source device address.
        pub src: u64,
        /// Bytes.
        pub len: u64,
        /// Stream (0 = null stream); the copy waits for its earlier work.
        pub stream: u64,
        /// Names the copy in its chunk frames.
        pub copy_id: u64,
        /// Stripes the chunks are spread over (every joined stripe).
        pub stripes: u32,
    }
}

/// The chunks of a striped copy that travel on stripe `index` of `stripes`: `(offset, len)`
/// in order. Empty for a zero chunk size or stripe count.
pub fn stripe_chunks(len: u64, chunk_bytes: u64, stripes: u32, index: u32) -> impl Iterator<Item = (u64, u64)> {
    let chunks = if chunk_bytes == 0 || stripes == 0 { 0 } else { len.div_ceil(chunk_bytes) };
    let step = u64::from(stripes).max(1);
    (u64::from(index)..chunks).step_by(step as usize).map(move |k| {
        let offset = k * chunk_bytes;
        (offset, chunk_bytes.min(len - offset))
    })
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn chunks_cover_the_copy_once_round_robin() {
        let (len, chunk) = (10 * 4 + 3, 4);
        let mut seen = [0u8; 43];
        for index in 0..3 {
            let mut last = None;
            for (offset, n) in stripe_chunks(len, chunk, 3, index) {
                assert_eq!((offset / chunk) % 3, u64::from(index));
                assert!(last.is_none_or(|l| l < offset), "in order on a stripe");
                last = Some(offset);
                seen[offset as usize..(offset + n) as usize].iter_mut().for_each(|b| *b += 1);
            }
        }
        assert!(seen.iter().all(|&b| b == 1));
        assert_eq!(stripe_chunks(8, 4, 4, 3).count(), 0);
        assert_eq!(stripe_chunks(8, 0, 4, 0).count(), 0);
    }
}
