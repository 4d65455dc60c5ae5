//! The `peer` section of `hip-remote bench`: device-to-device copies between devices 0 and 1
//! of one worker, `hipMemcpyPeer` through the client library against the backend's own
//! peer copy (`cuMemcpyPeerAsync` on the cuda backend) in-process, both with peer access
//! enabled both ways. Needs two devices on both sides; with fewer the section says so and
//! measures nothing.

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::time::Instant;

use hip_worker::backend::{Backend, DevicePtr};
use serde_json::{json, Value};

/// Copy sizes, each run both ways (capped by the bench's largest copy).
const PEER_SIZES: &[usize] = &[1 << 20, 16 << 20, 256 << 20];
/// Bytes moved per figure of a full run (reps = volume / size, at least [`MIN_REPS`]): peer
/// links move hundreds of GB/s, so a figure needs gigabytes to last tens of milliseconds.
pub const PEER_VOLUME: usize = 8 << 30;
const MIN_REPS: usize = 3;

/// One size in one direction.
pub struct PeerRow {
    pub bytes: usize,
    pub reps: usize,
    pub src: c_int,
    pub dst: c_int,
    pub native_gbps: f64,
    /// `hipMemcpyPeer`, which returns when the copy is done.
    pub remote_gbps: f64,
    /// `hipMemcpyPeerAsync` on the null stream, one synchronize at the end (as native).
    pub remote_async_gbps: f64,
}

/// What the section found.
pub enum PeerRun {
    Rows(Vec<PeerRow>),
    /// Fewer than two devices on one side: the reason, measured nothing.
    NotRun(String),
}

fn native_err(what: &'static str) -> impl Fn(hip_worker::backend::BackendError) -> String {
    move |e| format!("native {what}: {e}")
}

type SetDeviceFn = unsafe extern "C" fn(c_int) -> c_int;
type EnablePeerFn = unsafe extern "C" fn(c_int, u32) -> c_int;
type MemcpyPeerFn = unsafe extern "C" fn(*mut c_void, c_int, *const c_void, c_int, usize) -> c_int;
type MemcpyPeerAsyncFn = unsafe extern "C" fn(*mut c_void, c_int, *const c_void, c_int, usize, *mut c_void) -> c_int;
type MallocFn = unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int;
type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
type SyncFn = unsafe extern "C" fn() -> c_int;
type CountFn = unsafe extern "C" fn(*mut c_int) -> c_int;

/// The client library's peer entry points (the bench's `Hip` table has none), from the
/// library the bench already loaded: the same process-wide connection.
struct RemotePeer {
    _lib: libloading::Library,
    count: CountFn,
    set_device: SetDeviceFn,
    enable_peer: EnablePeerFn,
    memcpy_peer: MemcpyPeerFn,
    memcpy_peer_async: MemcpyPeerAsyncFn,
    malloc: MallocFn,
    free: FreeFn,
    synchronize: SyncFn,
}

impl RemotePeer {
    fn load(lib: &Path) -> Result<Self, String> {
        // SAFETY: the client library the bench loaded already; loading it again returns it.
        let l = unsafe { libloading::Library::new(lib) }.map_err(|e| format!("{}: {e}", lib.display()))?;
        let get = |e: libloading::Error| format!("libamdhip64: {e}");
        // SAFETY: the symbols have HIP's signatures.
        unsafe {
            Ok(Self {
                count: *l.get::<CountFn>(b"hipGetDeviceCount\0").map_err(get)?,
                set_device: *l.get::<SetDeviceFn>(b"hipSetDevice\0").map_err(get)?,
                enable_peer: *l.get::<EnablePeerFn>(b"hipDeviceEnablePeerAccess\0").map_err(get)?,
                memcpy_peer: *l.get::<MemcpyPeerFn>(b"hipMemcpyPeer\0").map_err(get)?,
                memcpy_peer_async: *l.get::<MemcpyPeerAsyncFn>(b"hipMemcpyPeerAsync\0").map_err(get)?,
                malloc: *l.get::<MallocFn>(b"hipMalloc\0").map_err(get)?,
                free: *l.get::<FreeFn>(b"hipFree\0").map_err(get)?,
                synchronize: *l.get::<SyncFn>(b"hipDeviceSynchronize\0").map_err(get)?,
                _lib: l,
            })
        }
    }
}

fn check(what: &str, code: c_int) -> Result<(), String> {
    // hipErrorPeerAccessAlreadyEnabled: an earlier run of this process enabled the pair.
    const PEER_ACCESS_ALREADY_ENABLED: c_int = 704;
    match code {
        0 => Ok(()),
        PEER_ACCESS_ALREADY_ENABLED if what == "hipDeviceEnablePeerAccess" => Ok(()),
        _ => Err(format!("remote {what}: hipError_t {code}")),
    }
}

/// Runs the section: sizes up to `max_bytes`, `volume` bytes per figure, both directions, native and remote interleaved
/// per figure (these machines are noisy).
pub fn run(nb: &dyn Backend, lib: &Path, max_bytes: usize, volume: usize) -> Result<PeerRun, String> {
    let native_devices = nb.device_count().map_err(native_err("device_count"))?;
    let remote = RemotePeer::load(lib)?;
    let mut remote_devices = 0;
    // SAFETY: a valid out-pointer.
    check("hipGetDeviceCount", unsafe { (remote.count)(&mut remote_devices) })?;
    if native_devices < 2 || remote_devices < 2 {
        return Ok(PeerRun::NotRun(format!("peer copies need two devices: the native backend has {native_devices}, the worker {remote_devices}")));
    }
    let largest = PEER_SIZES.iter().copied().filter(|&s| s <= max_bytes.max(PEER_SIZES[0])).max().unwrap_or(PEER_SIZES[0]);
    nb.enable_peer_access(0, 1).map_err(native_err("enable_peer_access(0, 1)"))?;
    nb.enable_peer_access(1, 0).map_err(native_err("enable_peer_access(1, 0)"))?;
    let native_bufs = [nb.malloc(0, largest as u64).map_err(native_err("malloc"))?, nb.malloc(1, largest as u64).map_err(native_err("malloc"))?];
    let mut remote_bufs = [std::ptr::null_mut::<c_void>(); 2];
    let result = (|| -> Result<Vec<PeerRow>, String> {
        // SAFETY: valid out-pointers; devices 0 and 1 exist (counted above).
        unsafe {
            for (dev, buf) in remote_bufs.iter_mut().enumerate() {
                let (dev, peer) = (dev as c_int, 1 - dev as c_int);
                check("hipSetDevice", (remote.set_device)(dev))?;
                check("hipDeviceEnablePeerAccess", (remote.enable_peer)(peer, 0))?;
                check("hipMalloc", (remote.malloc)(buf, largest))?;
            }
            check("hipSetDevice", (remote.set_device)(0))?;
        }
        let mut rows = Vec::new();
        for &bytes in PEER_SIZES.iter().filter(|&&s| s <= largest) {
            let reps = (volume / bytes).max(MIN_REPS);
            for (src, dst) in [(0usize, 1usize), (1, 0)] {
                let native = native_gbps(nb, native_bufs, src, dst, bytes, reps)?;
                let remote_figure = remote_gbps(&remote, remote_bufs, src, dst, bytes, reps, false)?;
                let remote_async = remote_gbps(&remote, remote_bufs, src, dst, bytes, reps, true)?;
                eprintln!(
                    "bench:   {:>4} MiB {src} → {dst}: native {native:.1}, remote {remote_figure:.1} (async {remote_async:.1}) GB/s",
                    bytes >> 20,
                );
                rows.push(PeerRow {
                    bytes,
                    reps,
                    src: src as c_int,
                    dst: dst as c_int,
                    native_gbps: native,
                    remote_gbps: remote_figure,
                    remote_async_gbps: remote_async,
                });
            }
        }
        Ok(rows)
    })();
    for p in native_bufs {
        let _ = nb.free(p);
    }
    for p in remote_bufs.into_iter().filter(|p| !p.is_null()) {
        // SAFETY: allocated above, freed once.
        let _ = unsafe { (remote.free)(p) };
    }
    result.map(PeerRun::Rows)
}

/// The backend's peer copy on the destination's null stream: one warm-up, `reps` copies, one
/// synchronize of the destination device.
fn native_gbps(nb: &dyn Backend, bufs: [DevicePtr; 2], src: usize, dst: usize, bytes: usize, reps: usize) -> Result<f64, String> {
    let once = || nb.memcpy_peer(None, bufs[dst], dst as u32, bufs[src], src as u32, bytes as u64).map_err(native_err("memcpy_peer"));
    once()?;
    nb.device_synchronize(dst as u32).map_err(native_err("device_synchronize"))?;
    let t = Instant::now();
    for _ in 0..reps {
        once()?;
    }
    nb.device_synchronize(dst as u32).map_err(native_err("device_synchronize"))?;
    Ok((bytes * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
}

/// `hipMemcpyPeer` (or `hipMemcpyPeerAsync` on the null stream) through the client library,
/// timed the same way (the current device is 0; both devices synchronized at the end).
fn remote_gbps(r: &RemotePeer, bufs: [*mut c_void; 2], src: usize, dst: usize, bytes: usize, reps: usize, queued: bool) -> Result<f64, String> {
    let once = || {
        // SAFETY: both buffers hold at least `bytes` bytes on their devices; the null stream.
        unsafe {
            if queued {
                check("hipMemcpyPeerAsync", (r.memcpy_peer_async)(bufs[dst], dst as c_int, bufs[src], src as c_int, bytes, std::ptr::null_mut()))
            } else {
                check("hipMemcpyPeer", (r.memcpy_peer)(bufs[dst], dst as c_int, bufs[src], src as c_int, bytes))
            }
        }
    };
    let sync_both = || -> Result<(), String> {
        // SAFETY: no pointers; devices 0 and 1 exist.
        unsafe {
            for dev in [dst, src] {
                check("hipSetDevice", (r.set_device)(dev as c_int))?;
                check("hipDeviceSynchronize", (r.synchronize)())?;
            }
            check("hipSetDevice", (r.set_device)(0))
        }
    };
    once()?;
    sync_both()?;
    let t = Instant::now();
    for _ in 0..reps {
        once()?;
    }
    sync_both()?;
    Ok((bytes * reps) as f64 / t.elapsed().as_secs_f64() / 1e9)
}

/// The section's markdown table and JSON.
pub fn report(run: &PeerRun) -> (String, Value) {
    use std::fmt::Write;
    let mut md = String::from("## Peer copies (devices 0 and 1 of one worker)\n\n");
    match run {
        PeerRun::NotRun(why) => {
            let _ = writeln!(md, "Not run: {why}.\n");
            (md, json!({"not_run": why}))
        }
        PeerRun::Rows(rows) => {
            let _ = writeln!(
                md,
                "Native: the backend's peer copy in-process (`cuMemcpyPeerAsync` on the cuda backend, the null stream); remote: \
                 `hipMemcpyPeer` (each returns when its copy is done) and `hipMemcpyPeerAsync` on the null stream through the \
                 client library. Peer access enabled both ways on both sides; each figure is `reps` copies and one synchronize.\n"
            );
            let _ = writeln!(md, "| size | direction | reps | native GB/s | remote hipMemcpyPeer GB/s | remote / native | remote hipMemcpyPeerAsync GB/s | remote async / native |");
            let _ = writeln!(md, "|---:|---|---:|---:|---:|---:|---:|---:|");
            let mut j = Vec::new();
            for r in rows {
                let ratio = r.remote_gbps / r.native_gbps;
                let _ = writeln!(
                    md,
                    "| {} MiB | {} → {} | {} | {:.1} | {:.1} | {ratio:.2}× | {:.1} | {:.2}× |",
                    r.bytes >> 20,
                    r.src,
                    r.dst,
                    r.reps,
                    r.native_gbps,
                    r.remote_gbps,
                    r.remote_async_gbps,
                    r.remote_async_gbps / r.native_gbps
                );
                j.push(json!({"bytes": r.bytes, "reps": r.reps, "src": r.src, "dst": r.dst,
                    "native_gbps": (r.native_gbps * 1000.0).round() / 1000.0, "remote_gbps": (r.remote_gbps * 1000.0).round() / 1000.0,
                    "remote_async_gbps": (r.remote_async_gbps * 1000.0).round() / 1000.0}));
            }
            md.push('\n');
            (md, json!({"rows": j}))
        }
    }
}
