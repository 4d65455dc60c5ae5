//! Device memory usage shared between a worker and its session processes
//! ([`crate::sandbox`]): each emulated device's capacity is worker-wide, as a GPU's is, so
//! every session's `hipMemGetInfo`, the worker's metrics and `hip-remote smi` see what all
//! sessions hold.
//!
//! The counters live in a memfd the worker creates and each session process maps: row 0
//! holds every device's total in use, row `slot` what session process `slot` holds. A
//! session process claims from the total (refused past the capacity) and records the
//! claim in its row; when it ends, however it ends, the worker gives back what its row
//! still holds. Session processes can write the whole table, so a hostile one can disturb
//! the figures others see and their claims (no more than it could by allocating); its own
//! allocations stay bounded by its private count (`DeviceMemory`).
//!
//! After the memory counters, one more counter per row: the device time the session process
//! has used (nanoseconds, [`crate::accounting`]), which the worker adds to the session's
//! tenant. A hostile process can misreport it, as it can its memory.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// The shared table of device memory in use, `(1 + slots) × devices` counters, then device
/// time used, `1 + slots` counters.
pub struct SharedUsage {
    base: *mut AtomicU64,
    devices: usize,
    slots: usize,
    file: File,
}

// SAFETY: the mapping is only accessed through atomics; it lives as long as `self`.
unsafe impl Send for SharedUsage {}
// SAFETY: as above.
unsafe impl Sync for SharedUsage {}

impl std::fmt::Debug for SharedUsage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedUsage").field("devices", &self.devices).field("slots", &self.slots).finish_non_exhaustive()
    }
}

impl SharedUsage {
    fn len_bytes(devices: usize, slots: usize) -> usize {
        (1 + slots) * (devices + 1) * std::mem::size_of::<AtomicU64>()
    }

    /// A new zeroed table for `devices` devices and `slots` session processes.
    pub fn create(devices: usize, slots: usize) -> io::Result<Self> {
        // SAFETY: memfd_create reads a NUL-terminated name; the result is checked.
        let fd = unsafe { libc::memfd_create(c"hip-worker-memory-usage".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor we own.
        let file = File::from(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        file.set_len(Self::len_bytes(devices, slots) as u64)?;
        Self::map(file, devices, slots)
    }

    /// Maps a table the worker created (a session process's inherited descriptor).
    pub fn open(fd: OwnedFd, devices: usize, slots: usize) -> io::Result<Self> {
        let file = File::from(fd);
        if file.metadata()?.len() < Self::len_bytes(devices, slots) as u64 {
            return Err(io::Error::other("the shared memory-usage table is smaller than announced"));
        }
        Self::map(file, devices, slots)
    }

    fn map(file: File, devices: usize, slots: usize) -> io::Result<Self> {
        use std::os::fd::AsRawFd;
        let len = Self::len_bytes(devices, slots);
        // SAFETY: maps `len` bytes of a file at least that long, shared; checked below.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len.max(1), libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self { base: base.cast(), devices, slots, file })
    }

    /// The table's descriptor, for a session process to inherit.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// Devices and session slots of the table.
    pub fn shape(&self) -> (usize, usize) {
        (self.devices, self.slots)
    }

    /// The counter of `device` in row `row` (0: the total).
    pub(super) fn counter(&self, row: usize, device: usize) -> Option<&AtomicU64> {
        if row > self.slots || device >= self.devices {
            return None;
        }
        // SAFETY: in bounds of the mapping (checked above), aligned (page-aligned base, u64
        // elements), and only ever accessed atomically.
        Some(unsafe { &*self.base.add(row * self.devices + device) })
    }

    /// The device-time counter of row `row` (0: unused).
    fn busy_counter(&self, row: usize) -> Option<&AtomicU64> {
        if row > self.slots {
            return None;
        }
        // SAFETY: in bounds of the mapping (the time block follows the `(1 + slots) × devices`
        // memory counters and has `1 + slots` entries; checked above), aligned, and only ever
        // accessed atomically.
        Some(unsafe { &*self.base.add((1 + self.slots) * self.devices + row) })
    }

    /// Adds `nanos` of device time to row `row`.
    pub fn add_busy(&self, row: usize, nanos: u64) {
        if let Some(counter) = self.busy_counter(row) {
            counter.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Device time row `row` has reported, nanoseconds.
    pub fn busy_nanos(&self, row: usize) -> u64 {
        self.busy_counter(row).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Takes row `row`'s device time, leaving zero for the row's next process.
    pub fn take_busy(&self, row: usize) -> u64 {
        self.busy_counter(row).map_or(0, |c| c.swap(0, Ordering::AcqRel))
    }

    /// Gives back everything session slot `slot` still holds (its process has ended) and
    /// clears the slot for the next one.
    pub fn release_slot(&self, slot: usize) {
        if slot == 0 {
            return;
        }
        for device in 0..self.devices {
            if let (Some(row), Some(total)) = (self.counter(slot, device), self.counter(0, device)) {
                let held = row.swap(0, Ordering::AcqRel);
                let _ = total.fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| Some(t.saturating_sub(held)));
            }
        }
        // Whatever the worker did not take (it takes a row's time before releasing it).
        self.take_busy(slot);
    }

    /// Bytes in use on `device`, by every session.
    pub fn in_use(&self, device: usize) -> u64 {
        self.counter(0, device).map_or(0, |c| c.load(Ordering::Acquire))
    }
}

impl Drop for SharedUsage {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in `map`; no reference into it outlives `self`.
        unsafe { libc::munmap(self.base.cast(), Self::len_bytes(self.devices, self.slots).max(1)) };
    }
}
