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
//! After the memory counters, three more per row ([`crate::accounting`]): the device time the
//! session process has used (nanoseconds), which the worker adds to the session's tenant; its
//! virtual device time and when it last worked, by which session processes pace themselves so
//! that busy sessions get equal device time. A hostile process can misreport them, as it can
//! its memory; pacing bounds what that costs the others (`accounting::MAX_PACE_WAIT`).

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};

/// Device-time counters of a row: used, virtual, last active.
const TIME_COUNTERS: usize = 3;
const BUSY: usize = 0;
const VIRTUAL: usize = 1;
const ACTIVE_AT: usize = 2;
/// In row 0, which has no time of its own: the highest row given to a session process so far.
const HIGHEST_ROW: usize = 0;

/// The shared table of device memory in use, `(1 + slots) × devices` counters, then
/// [`TIME_COUNTERS`] counters of device time per row.
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
        (1 + slots) * (devices + TIME_COUNTERS) * std::mem::size_of::<AtomicU64>()
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

    /// Device-time counter `which` of row `row` (row 0: unused).
    fn time_counter(&self, row: usize, which: usize) -> Option<&AtomicU64> {
        if row > self.slots || which >= TIME_COUNTERS {
            return None;
        }
        // SAFETY: in bounds of the mapping (the time block follows the `(1 + slots) × devices`
        // memory counters and has TIME_COUNTERS entries per row; checked above), aligned, and
        // only ever accessed atomically.
        Some(unsafe { &*self.base.add((1 + self.slots) * self.devices + row * TIME_COUNTERS + which) })
    }

    /// Time counter `which` of session row `row` (not row 0, which holds the table's own).
    fn row_counter(&self, row: usize, which: usize) -> Option<&AtomicU64> {
        if row == 0 {
            return None;
        }
        self.time_counter(row, which)
    }

    /// Adds `nanos` of device time to row `row`.
    pub fn add_busy(&self, row: usize, nanos: u64) {
        if let Some(counter) = self.row_counter(row, BUSY) {
            counter.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Advances row `row`'s virtual time by `nanos`.
    pub fn add_virtual(&self, row: usize, nanos: u64) {
        if let Some(counter) = self.row_counter(row, VIRTUAL) {
            counter.fetch_add(nanos, Ordering::Relaxed);
        }
    }

    /// Device time row `row` has reported, nanoseconds.
    pub fn busy_nanos(&self, row: usize) -> u64 {
        self.row_counter(row, BUSY).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Takes row `row`'s device time, leaving zero for the row's next process.
    pub fn take_busy(&self, row: usize) -> u64 {
        for which in [VIRTUAL, ACTIVE_AT] {
            if let Some(counter) = self.row_counter(row, which) {
                counter.store(0, Ordering::Relaxed);
            }
        }
        self.row_counter(row, BUSY).map_or(0, |c| c.swap(0, Ordering::AcqRel))
    }

    /// Row `row`'s virtual device time and when it last worked (`CLOCK_MONOTONIC`
    /// nanoseconds).
    pub fn pace_state(&self, row: usize) -> (u64, u64) {
        let load = |which| self.row_counter(row, which).map_or(0, |c| c.load(Ordering::Relaxed));
        (load(VIRTUAL), load(ACTIVE_AT))
    }

    /// Marks row `row` working at `now`, its virtual time raised to at least `floor`.
    pub fn mark_active(&self, row: usize, now: u64, floor: Option<u64>) {
        if let (Some(floor), Some(virtual_time)) = (floor, self.row_counter(row, VIRTUAL)) {
            virtual_time.fetch_max(floor, Ordering::Relaxed);
        }
        if let Some(active_at) = self.row_counter(row, ACTIVE_AT) {
            active_at.store(now, Ordering::Relaxed);
        }
    }

    /// The row other than `row` that worked since `since` with the least virtual time, and
    /// that time.
    pub fn least_active_virtual(&self, row: usize, since: u64) -> Option<(usize, u64)> {
        let highest = self.time_counter(0, HIGHEST_ROW).map_or(self.slots, |c| (c.load(Ordering::Relaxed) as usize).min(self.slots));
        (1..=highest)
            .filter(|&r| r != row)
            .map(|r| (r, self.pace_state(r)))
            .filter(|&(_, (_, at))| at >= since && at != 0)
            .map(|(r, (v, _))| (r, v))
            .min_by_key(|&(_, v)| v)
    }

    /// Notes that row `row` is in use (the worker, as it gives the row to a session process),
    /// so that pacing looks at rows up to the highest ever used only.
    pub fn note_row_used(&self, row: usize) {
        if let Some(highest) = self.time_counter(0, HIGHEST_ROW) {
            highest.fetch_max(row as u64, Ordering::Relaxed);
        }
    }

    /// Raises row `row`'s virtual time to at least `to` (a row that did not use its share
    /// forfeits it).
    pub fn raise_virtual(&self, row: usize, to: u64) {
        if let Some(virtual_time) = self.row_counter(row, VIRTUAL) {
            virtual_time.fetch_max(to, Ordering::Relaxed);
        }
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

    /// Sets what session slot `slot` holds on `device` to `bytes`, moving the total by the
    /// difference: a GPU session process publishes what its own context holds (the driver
    /// allocates and refuses; the table only reports).
    pub fn publish(&self, slot: usize, device: usize, bytes: u64) {
        if slot == 0 {
            return;
        }
        if let (Some(row), Some(total)) = (self.counter(slot, device), self.counter(0, device)) {
            let before = row.swap(bytes, Ordering::AcqRel);
            let _ = total.fetch_update(Ordering::AcqRel, Ordering::Acquire, |t| Some(t.saturating_sub(before).saturating_add(bytes)));
        }
    }

    /// Bytes in use on `device`, by every session.
    pub fn in_use(&self, device: usize) -> u64 {
        self.counter(0, device).map_or(0, |c| c.load(Ordering::Acquire))
    }
}

/// `CLOCK_MONOTONIC` now, nanoseconds: one clock for every process of the machine.
pub fn monotonic_nanos() -> u64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(now.tv_nsec as u64)
}

/// CPU time of the calling process so far (every thread), nanoseconds.
pub fn process_cpu_nanos() -> u64 {
    let mut used = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec it is given; the process CPU clock exists.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut used) };
    (used.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(used.tv_nsec as u64)
}

impl Drop for SharedUsage {
    fn drop(&mut self) {
        // SAFETY: unmaps the mapping made in `map`; no reference into it outlives `self`.
        unsafe { libc::munmap(self.base.cast(), Self::len_bytes(self.devices, self.slots).max(1)) };
    }
}
