//! Content-addressed uploads (`features::CONTENT_STORE`): a large host-to-device copy is
//! first named by the hash of its bytes ([`MemcpyHtoDByHash`](crate::wire::MemcpyHtoDByHash));
//! a worker that holds that content for the session's tenant copies it itself, so the bytes
//! cross the network once per tenant, not once per run. Both ends hash with [`content_hash`].

use sha2::{Digest, Sha256};

/// Bytes of a content hash (SHA-256).
pub const CONTENT_HASH_LEN: usize = 32;

/// Smallest host-to-device copy the client names by hash first: below it the extra round
/// trip of a miss costs more than the bytes.
pub const CONTENT_ADDRESSED_MIN_BYTES: usize = 1 << 20;

/// The content hash of `bytes`.
pub fn content_hash(bytes: &[u8]) -> [u8; CONTENT_HASH_LEN] {
    Sha256::digest(bytes).into()
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn content_hash_is_sha256() {
        // FIPS 180-2 test vector "abc".
        let want = [
            0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a,
            0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
        ];
        assert_eq!(content_hash(b"abc"), want);
    }
}
