//! What the session keeps per stream that the worker does not hold: the attributes HIP lets a
//! program set (its CU mask, its synchronization policy).

use std::collections::BTreeMap;

/// A stream's attributes kept here, dropped when the stream is destroyed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamExtras {
    /// The CU mask it was created with (`hipExtStreamCreateWithCUMask`).
    pub cu_mask: Vec<u32>,
    /// Its synchronization policy (`hipSynchronizationPolicy`), if one was set.
    pub sync_policy: Option<u32>,
}

/// The attributes of every stream that has some, by wire stream id.
#[derive(Debug, Default)]
pub struct StreamTable(BTreeMap<u64, StreamExtras>);

impl StreamTable {
    /// The attributes of stream `id`, made empty if it has none yet.
    pub fn entry(&mut self, id: u64) -> &mut StreamExtras {
        self.0.entry(id).or_default()
    }

    /// The attributes of stream `id`, if it has some.
    pub fn get(&self, id: u64) -> Option<&StreamExtras> {
        self.0.get(&id)
    }

    /// Forgets what was kept about a destroyed stream.
    pub fn forget(&mut self, id: u64) {
        self.0.remove(&id);
    }
}
