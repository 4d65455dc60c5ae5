//! Two single-producer single-consumer byte rings in one shared mapping.
//!
//! Layout (all little-endian, the mapping's first page is the control page):
//! `[0..8)` [`MAGIC`], `[8..16)` ring capacity; ring `r` (0: client → worker, 1: worker →
//! client) keeps its indices at `512 + 512 r`: `head` (bytes ever written, by the producer),
//! `tail` (bytes ever read, by the consumer), each side's "sleeping" flag and where the
//! producer's last whole frame ends, each on its own cache line; its data follows the control page. Each side keeps its own index locally and
//! only publishes it: the peer may scribble on the shared page, so everything read from it is
//! checked (`head - tail` never exceeds the capacity) and a broken ring is an error, never a
//! read out of bounds.

use crate::sys::Mapping;
use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes in each ring (a power of two). A frame larger than this streams through in pieces.
/// To be measured on the H100 by the lead (the bench measures it).
pub const RING_BYTES: usize = 4 << 20;
/// The control page.
pub const CONTROL_BYTES: usize = 4096;
/// Size of the shared file: control page and both rings.
pub const MAPPING_BYTES: usize = CONTROL_BYTES + 2 * RING_BYTES;
/// Marks a mapping as hip-remote's rings (and their layout version).
pub const MAGIC: u64 = u64::from_le_bytes(*b"HIPSHM01");

const INDICES_AT: usize = 512;
const HEAD: usize = 0;
const TAIL: usize = 128;
const CONSUMER_SLEEPING: usize = 256;
const PRODUCER_SLEEPING: usize = 384;
/// Where the producer publishes `head` after each whole frame (see [`Producer::mark_frame_end`]).
const FRAMES_END: usize = 448;

/// Which ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Requests: the client writes, the worker reads.
    ClientToWorker = 0,
    /// Replies: the worker writes, the client reads.
    WorkerToClient = 1,
}

/// Writes the control page of a fresh (zeroed) mapping.
pub fn initialise(map: &Mapping) {
    assert!(map.len() >= MAPPING_BYTES);
    // SAFETY: the mapping is at least a control page long and page-aligned; nobody else has
    // it yet.
    unsafe {
        map.as_ptr().cast::<u64>().write(MAGIC.to_le());
        map.as_ptr().add(8).cast::<u64>().write((RING_BYTES as u64).to_le());
    }
}

/// Checks the control page of a received mapping.
pub fn check(map: &Mapping) -> io::Result<()> {
    if map.len() != MAPPING_BYTES {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("shared rings of {} bytes, expected {MAPPING_BYTES}", map.len())));
    }
    // SAFETY: the mapping is at least a control page long and page-aligned.
    let (magic, ring) =
        unsafe { (u64::from_le(map.as_ptr().cast::<u64>().read_volatile()), u64::from_le(map.as_ptr().add(8).cast::<u64>().read_volatile())) };
    if magic != MAGIC || ring != RING_BYTES as u64 {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "not hip-remote's shared rings (or another version)"));
    }
    Ok(())
}

/// One ring in a mapping.
#[derive(Debug, Clone)]
struct Ring {
    map: Arc<Mapping>,
    indices: *const u8,
    data: *mut u8,
}

// SAFETY: the pointers point into `map`, which the ring keeps alive; shared access goes
// through atomics (indices) or raw copies of bytes the index protocol hands to one side.
unsafe impl Send for Ring {}

impl Ring {
    fn new(map: Arc<Mapping>, direction: Direction) -> Self {
        assert!(map.len() >= MAPPING_BYTES);
        let r = direction as usize;
        // SAFETY: both offsets lie inside the mapping (checked above).
        let (indices, data) = unsafe { (map.as_ptr().add(INDICES_AT + 512 * r).cast_const(), map.as_ptr().add(CONTROL_BYTES + RING_BYTES * r)) };
        Self { map, indices, data }
    }

    fn u64_at(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: 8-aligned offsets inside the control page, which lives as long as `self.map`;
        // atomics are the intended way to share these words between processes.
        unsafe { &*self.indices.add(offset).cast::<AtomicU64>() }
    }

    fn u32_at(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: as in `u64_at`.
        unsafe { &*self.indices.add(offset).cast::<AtomicU32>() }
    }

    fn corrupt() -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, "the peer broke the shared ring's indices")
    }
}

/// The writing side of a ring.
#[derive(Debug)]
pub struct Producer {
    ring: Ring,
    head: u64,
}

impl Producer {
    /// The producer of `direction` in `map` (zeroed or just initialised: both indices 0).
    pub fn new(map: Arc<Mapping>, direction: Direction) -> Self {
        Self::resume(map, direction, 0)
    }

    /// The producer of `direction` taking over at `head` bytes written (a connection handed
    /// to another process).
    pub fn resume(map: Arc<Mapping>, direction: Direction, head: u64) -> Self {
        Self { ring: Ring::new(map, direction), head }
    }

    /// Bytes written so far.
    pub fn head(&self) -> u64 {
        self.head
    }

    /// Publishes that a whole frame ends where the producer stands: whoever takes the ring
    /// over after this producer is gone can tell whether it stopped between frames.
    pub fn mark_frame_end(&self) {
        self.ring.u64_at(FRAMES_END).store(self.head, Ordering::Release);
    }

    /// The producer of `direction` taking over where a producer that is gone stopped, if it
    /// stopped between frames (its last whole frame ends at what it published as written);
    /// `None` in the middle of a frame.
    pub fn resume_at_frame_end(map: Arc<Mapping>, direction: Direction) -> Option<Self> {
        let ring = Ring::new(map, direction);
        let head = ring.u64_at(HEAD).load(Ordering::Acquire);
        (ring.u64_at(FRAMES_END).load(Ordering::Acquire) == head).then_some(Self { ring, head })
    }

    /// Bytes that can be written now.
    pub fn free(&self) -> io::Result<usize> {
        let tail = self.ring.u64_at(TAIL).load(Ordering::Acquire);
        let used = self.head.wrapping_sub(tail);
        if used > RING_BYTES as u64 {
            return Err(Ring::corrupt());
        }
        Ok(RING_BYTES - used as usize)
    }

    /// Copies as much of `src` as fits and publishes it; returns the bytes written.
    pub fn write(&mut self, src: &[u8]) -> io::Result<usize> {
        let n = self.free()?.min(src.len());
        if n == 0 {
            return Ok(0);
        }
        let at = (self.head % RING_BYTES as u64) as usize;
        let first = n.min(RING_BYTES - at);
        // SAFETY: `[at, at + first)` and `[0, n - first)` lie in the ring's data and are free
        // (the consumer has read them: `free` above), so only this side touches them now.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ring.data.add(at), first);
            std::ptr::copy_nonoverlapping(src.as_ptr().add(first), self.ring.data, n - first);
        }
        self.head += n as u64;
        // SeqCst: ordered before the load of the consumer's sleeping flag that follows
        // (a consumer going to sleep re-checks `head` after setting it: no lost wake-up).
        self.ring.u64_at(HEAD).store(self.head, Ordering::SeqCst);
        Ok(n)
    }

    /// Whether the consumer sleeps and must be woken by a doorbell.
    pub fn consumer_sleeping(&self) -> bool {
        self.ring.u32_at(CONSUMER_SLEEPING).load(Ordering::SeqCst) != 0
    }

    /// The producer's own sleeping flag (waiting for space).
    pub fn set_sleeping(&self, sleeping: bool) {
        self.ring.u32_at(PRODUCER_SLEEPING).store(u32::from(sleeping), Ordering::SeqCst);
    }

    /// Keeps the mapping alive (for owners that hold only the halves).
    pub fn mapping(&self) -> &Arc<Mapping> {
        &self.ring.map
    }
}

/// The reading side of a ring.
#[derive(Debug)]
pub struct Consumer {
    ring: Ring,
    tail: u64,
}

impl Consumer {
    /// The consumer of `direction` in `map`.
    pub fn new(map: Arc<Mapping>, direction: Direction) -> Self {
        Self::resume(map, direction, 0)
    }

    /// The consumer of `direction` taking over at `tail` bytes read (a connection handed to
    /// another process).
    pub fn resume(map: Arc<Mapping>, direction: Direction, tail: u64) -> Self {
        Self { ring: Ring::new(map, direction), tail }
    }

    /// Bytes read so far.
    pub fn tail(&self) -> u64 {
        self.tail
    }

    /// The mapping this ring lives in.
    pub fn mapping(&self) -> &Arc<Mapping> {
        &self.ring.map
    }

    /// What the producer has published as written (its own index, as it last stored it).
    pub fn published_head(&self) -> u64 {
        self.ring.u64_at(HEAD).load(Ordering::Acquire)
    }

    /// Bytes that can be read now.
    pub fn available(&self) -> io::Result<usize> {
        let head = self.ring.u64_at(HEAD).load(Ordering::Acquire);
        let ready = head.wrapping_sub(self.tail);
        if ready > RING_BYTES as u64 {
            return Err(Ring::corrupt());
        }
        Ok(ready as usize)
    }

    /// Copies up to `dst.len()` available bytes into `dst` and releases their space; returns
    /// the bytes read.
    pub fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        let n = self.available()?.min(dst.len());
        if n == 0 {
            return Ok(0);
        }
        let at = (self.tail % RING_BYTES as u64) as usize;
        let first = n.min(RING_BYTES - at);
        // SAFETY: `[at, at + first)` and `[0, n - first)` lie in the ring's data and hold
        // published bytes the producer does not touch until `tail` passes them.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ring.data.add(at), dst.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(self.ring.data, dst.as_mut_ptr().add(first), n - first);
        }
        self.tail += n as u64;
        // SeqCst: ordered before the load of the producer's sleeping flag that follows.
        self.ring.u64_at(TAIL).store(self.tail, Ordering::SeqCst);
        Ok(n)
    }

    /// Whether the producer sleeps waiting for space and must be woken by a doorbell.
    pub fn producer_sleeping(&self) -> bool {
        self.ring.u32_at(PRODUCER_SLEEPING).load(Ordering::SeqCst) != 0
    }

    /// The consumer's own sleeping flag (waiting for data).
    pub fn set_sleeping(&self, sleeping: bool) {
        self.ring.u32_at(CONSUMER_SLEEPING).store(u32::from(sleeping), Ordering::SeqCst);
    }
}
