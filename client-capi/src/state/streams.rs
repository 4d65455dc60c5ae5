//! What this library keeps per created stream: the attributes HIP lets a program set and the
//! worker does not hold (its CU mask, its synchronization policy).

use crate::abi::hipSynchronizationPolicy;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

/// A stream's attributes kept here. Dropped with the stream's entry when the stream is
/// destroyed ([`forget_stream`]).
#[derive(Clone, Default)]
pub struct StreamExtras {
    /// The CU mask it was created with (`hipExtStreamCreateWithCUMask`).
    pub cu_mask: Vec<u32>,
    /// Its synchronization policy, if one was set.
    pub sync_policy: Option<hipSynchronizationPolicy>,
}

/// The attributes of every stream that has some, by wire stream id.
pub fn extras() -> MutexGuard<'static, BTreeMap<u64, StreamExtras>> {
    static EXTRAS: Mutex<BTreeMap<u64, StreamExtras>> = Mutex::new(BTreeMap::new());
    EXTRAS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Forgets what was kept about a destroyed stream.
pub fn forget_stream(id: u64) {
    extras().remove(&id);
}
