//! Managed memory and device-visible host memory: one address range both the client's CPU
//! and the device use, kept coherent by moving only the pages that changed (see
//! docs/MANAGED_MEMORY.md).
//!
//! Both sides keep, per [`MANAGED_PAGE`]-byte page, the [`page_hash`] of the contents they
//! last agreed on. The client sends the pages whose contents no longer match (PUSH); the
//! worker answers a PULL with the device pages whose contents no longer match. Each side
//! updates its hashes with what crossed, so the two tables stay equal.

use crate::field::{Bulk, List};
use zerocopy::byteorder::little_endian::U32;

/// Granularity of coherence: pages of this many bytes move whole.
pub const MANAGED_PAGE: u64 = 4096;

/// Most pages one PUSH or PULL frame carries (16 MiB of data).
pub const MAX_PAGES_PER_FRAME: usize = 4096;

message! {
    /// `hipMallocManaged`, `hipHostRegister`, `hipHostMalloc(hipHostMallocMapped)`: device
    /// memory the client mirrors, placed at `hint` if the backend can (one address on both
    /// sides), elsewhere otherwise.
    pub struct ManagedAlloc {
        /// Device ordinal.
        pub device: u32,
        /// Bytes (a whole number of [`MANAGED_PAGE`]s).
        pub size: u64,
        /// Address the client would like the range at (its own reservation); 0: anywhere.
        pub hint: u64,
        /// What the device side is: [`TWIN_MANAGED`] or [`TWIN_DEVICE`].
        pub twin: u32,
    }
}

/// [`ManagedAlloc::twin`]: managed memory (`hipMallocManaged`, `hipHostMalloc` mapped).
pub const TWIN_MANAGED: u32 = 0;
/// [`ManagedAlloc::twin`]: plain device memory, which stream memory operations address
/// (signal memory, registered memory); GPU drivers refuse them on managed memory.
pub const TWIN_DEVICE: u32 = 1;

message! {
    /// The device range of a managed or mapped allocation (its contents are zero).
    pub struct ManagedAllocation {
        /// Device address: `hint` if it could be had.
        pub ptr: u64,
    }
}

message! {
    /// Frees a managed or mapped allocation (`hipFree`, `hipHostUnregister`, `hipHostFree`).
    pub struct ManagedFree {
        /// Device address from [`ManagedAllocation`].
        pub ptr: u64,
    }
}

message! {
    /// Pages the client's CPU changed: page `pages[i]` of the allocation at `ptr` is
    /// `data[i * MANAGED_PAGE..][..MANAGED_PAGE]`. Written before any later request runs.
    pub struct ManagedPush<'a> {
        /// Device address of the allocation.
        pub ptr: u64,
        /// Page indices, ascending.
        pub pages: List<'a, U32, MAX_PAGES_PER_FRAME>,
        /// The pages' bytes, back to back.
        pub data: Bulk<'a>,
    }
}

message! {
    /// Asks for the device pages of the allocation at `ptr`, from page `from` on, whose
    /// contents differ from what the client last saw.
    pub struct ManagedPull {
        /// Device address of the allocation.
        pub ptr: u64,
        /// First page to examine.
        pub from: u32,
    }
}

message! {
    /// Changed device pages (as in [`ManagedPush`]), and where to go on.
    pub struct ManagedPages<'a> {
        /// Page indices, ascending.
        pub pages: List<'a, U32, MAX_PAGES_PER_FRAME>,
        /// First page not yet examined (the page count when the scan is complete).
        pub next: u32,
        /// The pages' bytes, back to back.
        pub data: Bulk<'a>,
    }
}

/// Hash of one page's contents (xxHash64's round and avalanche over 8-byte lanes, seed 0).
/// Equal contents hash equal; a change goes unseen only on a 64-bit collision.
pub fn page_hash(bytes: &[u8]) -> u64 {
    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;
    let round = |acc: u64, lane: u64| acc.wrapping_add(lane.wrapping_mul(P2)).rotate_left(31).wrapping_mul(P1);
    let lane = |chunk: &[u8]| u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
    let mut acc = [P1.wrapping_add(P2), P2, 0, 0u64.wrapping_sub(P1)];
    let mut stripes = bytes.chunks_exact(32);
    for stripe in &mut stripes {
        for (i, a) in acc.iter_mut().enumerate() {
            *a = round(*a, lane(&stripe[i * 8..i * 8 + 8]));
        }
    }
    let mut h = acc[0].rotate_left(1).wrapping_add(acc[1].rotate_left(7)).wrapping_add(acc[2].rotate_left(12)).wrapping_add(acc[3].rotate_left(18));
    for a in acc {
        h = (h ^ round(0, a)).wrapping_mul(P1).wrapping_add(P4);
    }
    h = h.wrapping_add(bytes.len() as u64);
    for (i, &b) in stripes.remainder().iter().enumerate() {
        h = (h ^ (u64::from(b) << (8 * (i % 8)))).wrapping_mul(P5).rotate_left(11).wrapping_mul(P1);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(P2);
    h ^= h >> 29;
    h = h.wrapping_mul(P3);
    h ^ (h >> 32)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn page_hash_sees_every_single_word_change() {
        let page = [7u8; MANAGED_PAGE as usize];
        let base = page_hash(&page);
        assert_eq!(base, page_hash(&page.clone()));
        for word in 0..MANAGED_PAGE as usize / 8 {
            let mut changed = page;
            changed[word * 8] ^= 1;
            assert_ne!(page_hash(&changed), base, "word {word}");
        }
        assert_ne!(page_hash(&[0u8; 4096]), page_hash(&[0u8; 4095]));
    }
}
