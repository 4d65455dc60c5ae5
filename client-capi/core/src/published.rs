//! What a session publishes to readers that must not wait for its connection.
//!
//! The driver's owner keeps each session behind a lock that a synchronising call holds while
//! it waits for the worker. Device queries (`hipGetDeviceProperties`, `hipDeviceGetAttribute`),
//! the scheduling flag a synchronisation reads, and the copy path's question "is this a device
//! pointer, and whose?" must not wait behind it. So the session keeps that state here, in an
//! [`Arc`] the owner clones once: every part has its own short lock that no I/O ever holds.

use crate::callbacks::CallbackChannel;
use crate::capture::CaptureCount;
use crate::graph_host::HostCopies;
use crate::memory_book::MemoryBook;
use proto_core::wire;
use std::any::Any;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// How many tables the API families above this crate may keep in a session
/// ([`FamilyTable`]).
pub const MAX_FAMILY_TABLES: usize = 16;

/// Names one table an API family of the layer above keeps in every session (texture objects,
/// graph kernel nodes...): its slot and its type. The layer above gives each table its own
/// slot; this crate never looks inside.
pub struct FamilyTable<T> {
    slot: usize,
    table: PhantomData<fn() -> T>,
}

impl<T> FamilyTable<T> {
    /// The table in `slot` (below [`MAX_FAMILY_TABLES`], checked when compiled in a `const`).
    pub const fn new(slot: usize) -> Self {
        assert!(slot < MAX_FAMILY_TABLES, "a family table's slot is below MAX_FAMILY_TABLES");
        Self { slot, table: PhantomData }
    }

    /// Its slot.
    pub const fn slot(&self) -> usize {
        self.slot
    }
}

/// The session's state readable without its connection (see the module's documentation).
#[derive(Debug, Default)]
pub struct Published {
    captures: CaptureCount,
    devices: Mutex<DeviceBook>,
    memory: Mutex<MemoryBook>,
    host_copies: Mutex<HostCopies>,
    callback_channel: Mutex<CallbackChannel>,
    /// The API families' tables, each made on first use.
    families: [OnceLock<Box<dyn Any + Send + Sync>>; MAX_FAMILY_TABLES],
}

/// A lock's guard whether or not a panic poisoned it: every part stays consistent between
/// two of its own method calls, which is all a later reader relies on.
fn guard<T>(lock: &Mutex<T>) -> MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|p| p.into_inner())
}

impl Published {
    /// A new, empty publication, ready to be shared.
    pub fn new_shared() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Stream captures begun on the session and not ended (an atomic: no lock).
    pub fn captures(&self) -> &CaptureCount {
        &self.captures
    }

    /// What the session learnt about its worker's devices.
    pub fn devices(&self) -> MutexGuard<'_, DeviceBook> {
        guard(&self.devices)
    }

    /// The device memory of the session's worker that the client knows.
    pub fn memory(&self) -> MutexGuard<'_, MemoryBook> {
        guard(&self.memory)
    }

    /// Graph memcpy nodes of the application's host memory, by graph and executable graph.
    pub fn host_copies(&self) -> MutexGuard<'_, HostCopies> {
        guard(&self.host_copies)
    }

    /// The state of the session's callback channel (held while it opens: one opening).
    pub fn callback_channel(&self) -> MutexGuard<'_, CallbackChannel> {
        guard(&self.callback_channel)
    }

    /// An API family's table in this session (empty until first used), behind its own lock.
    ///
    /// # Panics
    /// When two tables of different types were given one slot: a mistake of the layer above,
    /// which a test of its own rules out.
    pub fn family<T: Default + Send + 'static>(&self, table: &FamilyTable<T>) -> MutexGuard<'_, T> {
        let made = self.families[table.slot].get_or_init(|| Box::new(Mutex::new(T::default())));
        guard(made.downcast_ref::<Mutex<T>>().expect("two family tables of different types share a slot"))
    }
}

/// What a session learnt about its worker's devices, by the client's device ordinal: their
/// properties and extra attributes (fixed for the process: asked once) and each device's
/// scheduling flag (`hipSetDeviceFlags`, which ROCm keeps on the device object, so every
/// thread sees it).
#[derive(Debug, Default)]
pub struct DeviceBook {
    properties: HashMap<u32, wire::DeviceProperties>,
    attributes: HashMap<(u32, u32), i64>,
    schedule: HashMap<u32, u32>,
}

impl DeviceBook {
    /// `device`'s properties, if asked for before.
    pub fn properties(&self, device: u32) -> Option<&wire::DeviceProperties> {
        self.properties.get(&device)
    }

    /// Keeps `device`'s properties as the application sees them.
    pub fn remember_properties(&mut self, device: u32, props: wire::DeviceProperties) {
        self.properties.insert(device, props);
    }

    /// Attribute `attr` of `device` that the properties do not carry, if asked for before.
    pub fn attribute(&self, device: u32, attr: u32) -> Option<i64> {
        self.attributes.get(&(device, attr)).copied()
    }

    /// Keeps attribute `attr` of `device`.
    pub fn remember_attribute(&mut self, device: u32, attr: u32, value: i64) {
        self.attributes.insert((device, attr), value);
    }

    /// `device`'s scheduling flag, if set (`hipSetDeviceFlags`).
    pub fn schedule(&self, device: u32) -> Option<u32> {
        self.schedule.get(&device).copied()
    }

    /// Sets `device`'s scheduling flag.
    pub fn set_schedule(&mut self, device: u32, flag: u32) {
        self.schedule.insert(device, flag);
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn a_reader_sees_what_the_session_publishes_while_the_session_is_busy() {
        let published = Published::new_shared();
        let reader = published.clone();
        let props = wire::DeviceProperties { max_threads_per_block: 1024, ..Default::default() };
        published.devices().remember_properties(3, props);
        published.devices().set_schedule(3, 4);
        published.devices().remember_attribute(3, 41, 1 << 27);
        // Another part's lock held (a long writer) does not stop a device query.
        let memory = published.memory();
        assert_eq!(reader.devices().properties(3).map(|p| p.max_threads_per_block), Some(1024));
        assert_eq!(reader.devices().schedule(3), Some(4));
        assert_eq!(reader.devices().attribute(3, 41), Some(1 << 27));
        assert_eq!(reader.devices().properties(2).map(|p| p.max_threads_per_block), None);
        assert_eq!(reader.devices().schedule(2), None);
        assert_eq!(reader.devices().attribute(3, 40), None);
        drop(memory);
    }

    #[test]
    fn each_family_table_is_the_sessions_own() {
        const NAMES: FamilyTable<HashMap<u64, String>> = FamilyTable::new(0);
        const COUNT: FamilyTable<u32> = FamilyTable::new(MAX_FAMILY_TABLES - 1);
        let (a, b) = (Published::new_shared(), Published::new_shared());
        a.family(&NAMES).insert(7, "a's".into());
        *b.family(&COUNT) += 2;
        assert_eq!(a.family(&NAMES).get(&7).map(String::as_str), Some("a's"));
        assert!(b.family(&NAMES).is_empty(), "another session's table is its own");
        assert_eq!((*a.family(&COUNT), *b.family(&COUNT)), (0, 2));
    }

    #[test]
    #[should_panic(expected = "share a slot")]
    fn two_tables_in_one_slot_are_refused() {
        let published = Published::new_shared();
        let _ = *published.family(&FamilyTable::<u32>::new(1));
        let _ = *published.family(&FamilyTable::<u64>::new(1));
    }

    #[test]
    fn a_panic_while_a_part_is_locked_leaves_it_readable() {
        let published = Published::new_shared();
        published.devices().set_schedule(0, 1);
        let p = published.clone();
        let _ = std::thread::spawn(move || {
            let _book = p.devices();
            panic!("poison the lock");
        })
        .join();
        assert_eq!(published.devices().schedule(0), Some(1));
    }
}
