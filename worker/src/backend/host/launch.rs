//! Kernel launches on the host backend: shape checks, block execution, occupancy.
//!
//! A launch runs as one stream operation. Its blocks are spread over up to
//! [`MAX_KERNEL_THREADS`] OS threads (the stream's executor plus scoped helpers), each pulling
//! the next block index from a shared counter and calling the kernel's `run_block` for it;
//! the threads *within* a block run inside `run_block` (one after another, or as fibers when
//! the kernel uses barriers: see `rtc/prelude.hpp`). Blocks therefore run concurrently and in
//! no fixed order, as on a GPU; a kernel relying on an order between blocks is as wrong here
//! as there.
//!
//! A block reports through its [`LaunchServices`]: the first fault (a failed `assert`) ends
//! the launch with `hipErrorAssert` once the blocks already running return, and no further
//! block starts; kernel `printf` output is buffered per block, up to [`PRINTF_BUFFER_LEN`]
//! per launch, and logged by the worker in block order when the launch ends.
//!
//! Kernels read device memory straight through their pointer arguments, so queued launches
//! cannot pin the allocations they use the way copies do. Instead every launch holds a
//! [`KernelTicket`] from the backend's [`KernelTracker`], and memory or modules released while
//! launches are in flight are parked there until every launch that was queued before the
//! release has finished.

use std::any::Any;
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use proto_core::limits::MAX_KERNEL_ARGS_LEN;

use super::lock;
use super::module::{BlockCtx, HostModule, Kernel, LaunchServices, ARGS_ALIGN, FAULT_ASSERT};
use crate::backend::{BackendError, DeviceProperties, FunctionAttributes, LaunchConfig};

/// Most OS threads one launch runs its blocks on (the executor included).
pub(super) const MAX_KERNEL_THREADS: usize = 8;

/// Most blocks of one cooperative launch: each is an OS thread of its own, all running at
/// once, so that a grid-wide barrier can work. Occupancy never admits more than this.
pub(super) const MAX_COOPERATIVE_BLOCKS: usize = 1024;

/// Kernel `printf` output kept per launch (CUDA's default `cudaLimitPrintfFifoSize`); what
/// goes beyond it is dropped, with a note, as a GPU drops what overflows its buffer.
pub(super) const PRINTF_BUFFER_LEN: usize = 1 << 20;

/// Something released while kernels may still use it.
type Retired = Box<dyn Any + Send + Sync>;

/// Tracks launches in flight so that memory and modules released meanwhile outlive them.
#[derive(Default)]
pub(super) struct KernelTracker {
    state: Mutex<TrackerState>,
}

#[derive(Default)]
struct TrackerState {
    next: u64,
    in_flight: BTreeSet<u64>,
    /// `(first launch queued after the release, what was released)`.
    parked: Vec<(u64, Retired)>,
}

impl KernelTracker {
    /// Registers a launch; it counts as in flight until the ticket is dropped.
    pub(super) fn begin(self: &Arc<Self>) -> KernelTicket {
        let mut state = lock(&self.state);
        let seq = state.next;
        state.next += 1;
        state.in_flight.insert(seq);
        KernelTicket { tracker: Arc::clone(self), seq }
    }

    /// Drops `item` now if no launch is in flight, else once every launch in flight now is
    /// done.
    pub(super) fn retire(&self, item: Retired) {
        let mut state = lock(&self.state);
        if state.in_flight.is_empty() {
            drop(state);
            drop(item);
        } else {
            let after = state.next;
            state.parked.push((after, item));
        }
    }

    fn finish(&self, seq: u64) {
        let released: Vec<Retired> = {
            let mut state = lock(&self.state);
            state.in_flight.remove(&seq);
            let oldest = state.in_flight.first().copied().unwrap_or(u64::MAX);
            let (done, waiting) = std::mem::take(&mut state.parked).into_iter().partition(|(after, _)| oldest >= *after);
            state.parked = waiting;
            done.into_iter().map(|(_, item)| item).collect()
        };
        // Dropped outside the lock: closing a module runs its destructors.
        drop(released);
    }
}

/// A launch's registration with the [`KernelTracker`]; finishing is dropping it.
pub(super) struct KernelTicket {
    tracker: Arc<KernelTracker>,
    seq: u64,
}

impl Drop for KernelTicket {
    fn drop(&mut self) {
        self.tracker.finish(self.seq);
    }
}

/// Bytes aligned to [`ARGS_ALIGN`], as the ABI promises for `args` and `dynamic_shared`.
pub(super) struct AlignedBytes {
    chunks: Vec<Chunk>,
    len: usize,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([u8; ARGS_ALIGN]);

const _: () = assert!(std::mem::align_of::<Chunk>() == ARGS_ALIGN);

impl AlignedBytes {
    fn zeroed(len: usize) -> Result<Self, BackendError> {
        let mut chunks = Vec::new();
        let count = len.div_ceil(ARGS_ALIGN);
        chunks.try_reserve_exact(count).map_err(|e| BackendError::OutOfMemory(format!("{len} bytes of kernel memory: {e}")))?;
        chunks.resize(count, Chunk([0; ARGS_ALIGN]));
        Ok(Self { chunks, len })
    }

    pub(super) fn copy_of(bytes: &[u8]) -> Result<Self, BackendError> {
        let mut out = Self::zeroed(bytes.len())?;
        for (chunk, src) in out.chunks.iter_mut().zip(bytes.chunks(ARGS_ALIGN)) {
            chunk.0[..src.len()].copy_from_slice(src);
        }
        Ok(out)
    }

    fn as_ptr(&self) -> *const c_void {
        self.chunks.as_ptr().cast()
    }

    fn as_mut_ptr(&mut self) -> *mut c_void {
        if self.len == 0 {
            std::ptr::null_mut()
        } else {
            self.chunks.as_mut_ptr().cast()
        }
    }
}

/// Checks a launch's shape and arguments against the kernel and the device, the way a GPU
/// runtime refuses a launch before queueing it.
pub(super) fn validate_launch(kernel: &Kernel, config: &LaunchConfig, args_len: usize, props: &DeviceProperties) -> Result<(), BackendError> {
    let name = &kernel.name;
    let bad = |what: String| BackendError::InvalidConfiguration(format!("launch of `{name}`: {what}"));
    if config.grid.contains(&0) || config.block.contains(&0) {
        return Err(bad(format!("grid {:?} and block {:?} must be at least 1 in every dimension", config.grid, config.block)));
    }
    for axis in 0..3 {
        let max_block = u32::try_from(props.max_threads_dim[axis]).unwrap_or(0);
        let max_grid = u32::try_from(props.max_grid_size[axis]).unwrap_or(0);
        if config.block[axis] > max_block || config.grid[axis] > max_grid {
            return Err(bad(format!(
                "grid {:?} / block {:?} exceed the device limits {:?} / {:?}",
                config.grid, config.block, props.max_grid_size, props.max_threads_dim
            )));
        }
    }
    let threads = config.threads_per_block().unwrap_or(u64::MAX);
    if threads > u64::from(kernel.max_threads_per_block) {
        return Err(bad(format!("{threads} threads per block exceed the kernel's maximum of {}", kernel.max_threads_per_block)));
    }
    let shared = u64::from(config.shared_mem) + u64::from(kernel.static_shared);
    if shared > props.shared_mem_per_block {
        // ROCm's launch check answers hipErrorOutOfMemory here.
        return Err(BackendError::OutOfMemory(format!(
            "launch of `{name}`: {} bytes of dynamic shared memory (plus {} static) exceed the {} bytes per block",
            config.shared_mem, kernel.static_shared, props.shared_mem_per_block
        )));
    }
    if args_len > MAX_KERNEL_ARGS_LEN {
        return Err(BackendError::InvalidValue(format!("launch of `{name}`: {args_len} argument bytes exceed the limit of {MAX_KERNEL_ARGS_LEN}")));
    }
    if (args_len as u64) < kernel.args_len {
        return Err(BackendError::InvalidValue(format!(
            "launch of `{name}`: the argument blob has {args_len} bytes but its {} parameters \
             need {}",
            kernel.params.len(),
            kernel.args_len
        )));
    }
    Ok(())
}

/// One validated launch, queued as a stream operation.
pub(super) struct KernelLaunch {
    pub(super) module: Arc<HostModule>,
    pub(super) kernel: usize,
    pub(super) config: LaunchConfig,
    pub(super) args: AlignedBytes,
    pub(super) threads: usize,
    pub(super) _ticket: KernelTicket,
    /// Where its `printf` output goes for the client (its stream's); `None`: the worker's log.
    pub(super) output: Option<Arc<super::stream::KernelOutput>>,
}

impl KernelLaunch {
    /// Runs every block. A panic anywhere in the worker's part becomes `LaunchFailure`.
    pub(super) fn run(self) -> Result<(), BackendError> {
        let _watched = crate::watchdog::kernel_running();
        let name = self.module.kernels()[self.kernel].name.clone();
        panic::catch_unwind(AssertUnwindSafe(|| self.run_blocks()))
            .unwrap_or_else(|_| Err(BackendError::LaunchFailure(format!("the launch of `{name}` panicked in the worker"))))
    }

    fn run_blocks(&self) -> Result<(), BackendError> {
        let kernel = &self.module.kernels()[self.kernel];
        let report = LaunchReport::default();
        let outcome = self.run_blocks_reporting(kernel, &report);
        let output = report.take_output();
        if !output.is_empty() {
            #[cfg(test)]
            lock(&tests::PRINTED).push(String::from_utf8_lossy(&output).into_owned());
            // For the session's client (its stream's sink), or else the worker's log.
            match &self.output {
                Some(sink) => sink.append(&output),
                None => tracing::info!(kernel = %kernel.name, output = %String::from_utf8_lossy(&output), "kernel printf"),
            }
        }
        outcome?;
        let fault = lock(&report.fault).take();
        fault.map_or(Ok(()), Err)
    }

    fn run_blocks_reporting(&self, kernel: &Kernel, report: &LaunchReport) -> Result<(), BackendError> {
        let [gx, gy, gz] = self.config.grid.map(u64::from);
        // At most 2^31 · 2^16 · 2^16 after `validate_launch`.
        let blocks = gx * gy * gz;
        let next = AtomicU64::new(0);
        let args = SendPtr(self.args.as_ptr());
        let shared_len = self.config.shared_mem as usize;
        let worker = || -> Result<(), BackendError> {
            let mut shared = AlignedBytes::zeroed(shared_len)?;
            loop {
                let block = next.fetch_add(1, Ordering::Relaxed);
                if block >= blocks || report.faulted.load(Ordering::Relaxed) {
                    return Ok(());
                }
                let services = LaunchServices { launch: (report as *const LaunchReport).cast(), block, fault: report_fault, print: report_print };
                // Block indices are below the grid, which fits u32 per axis.
                let ctx = BlockCtx {
                    grid: self.config.grid,
                    block: self.config.block,
                    block_idx: [(block % gx) as u32, ((block / gx) % gy) as u32, (block / (gx * gy)) as u32],
                    dynamic_shared_size: self.config.shared_mem,
                    dynamic_shared: shared.as_mut_ptr(),
                    services: &services,
                };
                // SAFETY: `run_block` comes from a validated module that `self.module` keeps
                // loaded; `args` covers every parameter (`validate_launch`) and is aligned to
                // ARGS_ALIGN, `ctx.dynamic_shared` holds `shared_mem` bytes for this thread
                // alone, `ctx.services` and the report it points to outlive the call. What the
                // kernel does with device pointers is the client's contract, as on a GPU (see
                // the module documentation of `host`).
                unsafe { (kernel.run_block)(args.get(), &ctx) };
            }
        };
        let helpers = self.threads.min(usize::try_from(blocks).unwrap_or(usize::MAX)).saturating_sub(1);
        thread::scope(|scope| {
            let spawned: Vec<_> =
                (0..helpers).map_while(|i| thread::Builder::new().name(format!("hip-host-kernel-{i}")).spawn_scoped(scope, worker).ok()).collect();
            let mut outcome = worker();
            for helper in spawned {
                let joined =
                    helper.join().unwrap_or_else(|_| Err(BackendError::LaunchFailure(format!("a block thread of `{}` panicked", kernel.name))));
                if outcome.is_ok() {
                    outcome = joined;
                }
            }
            outcome
        })
        .map_err(|e| match e {
            BackendError::LaunchFailure(_) => e,
            other => BackendError::LaunchFailure(format!("launch of `{}` failed: {other}", kernel.name)),
        })
    }
}

/// What the blocks of one launch report: its first fault and its kernel output.
#[derive(Default)]
struct LaunchReport {
    faulted: AtomicBool,
    fault: Mutex<Option<BackendError>>,
    /// Output per block index, so it is logged in block order whatever order blocks ran in.
    output: Mutex<PrintBuffer>,
}

#[derive(Default)]
struct PrintBuffer {
    blocks: BTreeMap<u64, Vec<u8>>,
    len: usize,
    dropped: usize,
}

impl LaunchReport {
    fn take_output(&self) -> Vec<u8> {
        let buffer = std::mem::take(&mut *lock(&self.output));
        let mut out: Vec<u8> = buffer.blocks.into_values().flatten().collect();
        if buffer.dropped > 0 {
            out.extend(format!("\n[hip-remote: {} bytes of kernel printf output beyond {PRINTF_BUFFER_LEN} dropped]\n", buffer.dropped).bytes());
        }
        out
    }
}

/// The report a block's services point to.
///
/// # Safety
/// `services` is the `LaunchServices` the worker passed in the block context, whose `launch`
/// is a live `LaunchReport` (both outlive `run_block`, which is where modules may call these).
unsafe fn report_of<'a>(services: *const LaunchServices) -> Option<(&'a LaunchReport, u64)> {
    // SAFETY: see the function's contract; a null pointer is refused.
    let services = unsafe { services.as_ref()? };
    // SAFETY: `launch` was made from a `&LaunchReport` that outlives the block.
    let report = unsafe { services.launch.cast::<LaunchReport>().as_ref()? };
    Some((report, services.block))
}

/// `hip_remote_launch_services::fault`. Must not unwind: nothing in it panics (`lock`
/// recovers a poisoned mutex).
unsafe extern "C" fn report_fault(services: *const LaunchServices, kind: u32, message: *const c_char) {
    // SAFETY: called by a module with the services it was given (see `report_of`).
    let Some((report, _)) = (unsafe { report_of(services) }) else {
        return;
    };
    let message = if message.is_null() {
        String::from("(no message)")
    } else {
        // SAFETY: the module passes a NUL-terminated string valid for the call.
        unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned()
    };
    if kind == FAULT_ASSERT {
        // As GPU runtimes print a failed device assert, the message goes out with the
        // kernel's output (block order, after what the block printed before it).
        let line = format!("{message}\n");
        // SAFETY: the same services, forwarded; `line` outlives the call.
        unsafe { report_print(services, line.as_ptr().cast(), line.len().min(u32::MAX as usize) as u32) };
    }
    let mut fault = lock(&report.fault);
    if fault.is_none() {
        *fault = Some(if kind == FAULT_ASSERT { BackendError::Assert(message) } else { BackendError::LaunchFailure(message) });
    }
    report.faulted.store(true, Ordering::Relaxed);
}

/// `hip_remote_launch_services::print`.
unsafe extern "C" fn report_print(services: *const LaunchServices, text: *const c_char, len: u32) {
    // SAFETY: called by a module with the services it was given (see `report_of`).
    let Some((report, block)) = (unsafe { report_of(services) }) else {
        return;
    };
    if text.is_null() {
        return;
    }
    // SAFETY: the module passes `len` readable bytes at `text`.
    let bytes = unsafe { std::slice::from_raw_parts(text.cast::<u8>(), len as usize) };
    let mut buffer = lock(&report.output);
    let room = PRINTF_BUFFER_LEN - buffer.len;
    let kept = bytes.len().min(room);
    buffer.len += kept;
    buffer.dropped += bytes.len() - kept;
    buffer.blocks.entry(block).or_default().extend_from_slice(&bytes[..kept]);
}

/// The argument pointer, shared read-only by the block threads of one launch.
#[derive(Clone, Copy)]
struct SendPtr(*const c_void);

impl SendPtr {
    /// By value, so closures capture the whole `SendPtr`, not its raw field.
    fn get(self) -> *const c_void {
        self.0
    }
}
// SAFETY: the blob it points to is owned by the launch, outlives the scoped threads and is
// never written while they run.
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

/// `hipFuncGetAttributes` of a host kernel: no registers, constant or local memory to speak
/// of; the version is the device's `major·10 + minor`.
pub(super) fn attributes(kernel: &Kernel, props: &DeviceProperties) -> FunctionAttributes {
    let version = props.major * 10 + props.minor;
    let dynamic = props.shared_mem_per_block.saturating_sub(u64::from(kernel.static_shared));
    FunctionAttributes {
        binary_version: version,
        ptx_version: version,
        cache_mode_ca: 0,
        const_size: 0,
        local_size: 0,
        max_dynamic_shared_size: i32::try_from(dynamic).unwrap_or(i32::MAX),
        max_threads_per_block: kernel.max_threads_per_block as i32,
        num_regs: 0,
        preferred_shmem_carveout: -1,
        shared_size: u64::from(kernel.static_shared),
    }
}

/// Active blocks per multiprocessor (one CPU core stands for one), the CUDA occupancy model
/// with the host's figures and no register limit:
///
/// `min(max_warps / warps(block), max_blocks, shared_per_mp / shared(block))`, where
/// `warps(b) = ceil(b / warpSize)`, `max_warps = maxThreadsPerMultiProcessor / warpSize`,
/// `max_blocks = max_warps` (as the session reports `maxBlocksPerMultiProcessor`) and
/// `shared(block)` is static plus dynamic shared memory (no limit when 0). A block larger than
/// the kernel allows, or needing more shared memory than a block may have, fits 0 times.
pub(super) fn max_active_blocks(kernel: &Kernel, props: &DeviceProperties, block_size: u32, dynamic_shared: u64) -> Result<u32, BackendError> {
    if block_size == 0 {
        return Err(BackendError::InvalidValue("occupancy of a block size of 0".into()));
    }
    let shared = dynamic_shared.saturating_add(u64::from(kernel.static_shared));
    if block_size > kernel.max_threads_per_block || shared > props.shared_mem_per_block {
        return Ok(0);
    }
    let warp = props.warp_size.max(1) as u64;
    let max_warps = (props.max_threads_per_multiprocessor.max(0) as u64 / warp).max(1);
    let by_warps = max_warps / u64::from(block_size).div_ceil(warp);
    let by_shared = match shared {
        0 => u64::MAX,
        n => props.max_shared_memory_per_multiprocessor / n,
    };
    Ok(by_warps.min(max_warps).min(by_shared) as u32)
}

/// `(min_grid_size, block_size)`: the block size (the limit, or a multiple of `warpSize` below
/// it) with the most active threads per multiprocessor, the larger one on ties, and the grid
/// that fills every multiprocessor with it. `(0, 0)` when no block size fits.
pub(super) fn max_potential_block_size(
    kernel: &Kernel,
    props: &DeviceProperties,
    dynamic_shared: u64,
    block_size_limit: u32,
) -> Result<(u32, u32), BackendError> {
    let limit = match block_size_limit {
        0 => kernel.max_threads_per_block,
        n => n.min(kernel.max_threads_per_block),
    };
    let warp = props.warp_size.max(1) as u32;
    let mut candidates = vec![limit];
    candidates.extend((1..=limit / warp).rev().map(|w| w * warp).filter(|&b| b != limit));
    let mut best = (0u64, 0u32, 0u32); // (active threads, block size, active blocks)
    for block in candidates {
        let blocks = max_active_blocks(kernel, props, block, dynamic_shared)?;
        let threads = u64::from(blocks) * u64::from(block);
        if threads > best.0 {
            best = (threads, block, blocks);
        }
    }
    let (_, block, blocks) = best;
    let sms = props.multi_processor_count.max(1) as u32;
    Ok((blocks.saturating_mul(sms), block))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Kernel output of every launch in this test process, for the kernel tests.
    pub(in crate::backend::host) static PRINTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

    #[test]
    fn parked_items_wait_for_earlier_launches_only() {
        let tracker = Arc::new(KernelTracker::default());
        let dropped = Arc::new(AtomicU64::new(0));
        struct Marker(Arc<AtomicU64>);
        impl Drop for Marker {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        tracker.retire(Box::new(Marker(Arc::clone(&dropped))));
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "nothing in flight: dropped at once");
        let first = tracker.begin();
        tracker.retire(Box::new(Marker(Arc::clone(&dropped))));
        let second = tracker.begin();
        drop(second);
        assert_eq!(dropped.load(Ordering::SeqCst), 1, "the first launch may still use it");
        drop(first);
        assert_eq!(dropped.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn aligned_bytes_are_aligned_and_copied() {
        let bytes: Vec<u8> = (0..100).collect();
        let copy = AlignedBytes::copy_of(&bytes).unwrap();
        assert_eq!(copy.as_ptr() as usize % ARGS_ALIGN, 0);
        // SAFETY: `copy` holds at least 100 initialized bytes.
        let seen = unsafe { std::slice::from_raw_parts(copy.as_ptr().cast::<u8>(), 100) };
        assert_eq!(seen, &bytes[..]);
        assert!(AlignedBytes::zeroed(0).unwrap().as_mut_ptr().is_null());
    }
}
