//! Stream waits CUDA cannot express, served by a kernel of our own: `cuStreamWaitValue32/64`
//! take no mask, so HIP's GTE and EQ waits under a partial mask are queued as a one-thread
//! kernel that polls the word until HIP's condition holds (`wait_kernels.cu`, ROCm's
//! conditions; its PTX, `wait_kernels.ptx`, is embedded here). The module is loaded into a
//! device's context on its first such wait and kept for the backend's life; a failed load is
//! not remembered, so the next wait tries again.
//!
//! The kernel runs for as long as the application holds the wait, like CUDA's own wait. It is
//! not a tenant kernel: the kernel watchdog does not watch it (see `stream_ops.rs`).

use super::{lock, result, CudaBackend, Raw};
use crate::backend::{BackendError, DeviceIndex, DevicePtr, LaunchConfig, WaitCondition, Width};
use cudarc::driver::sys::{CUfunction, CUmodule, CUstream};
use std::ffi::CStr;

/// The wait kernels' PTX (regenerate with `scripts/wait-kernels-ptx.sh`), NUL-terminated
/// for `cuModuleLoadData`.
const WAIT_KERNELS_PTX: &str = concat!(include_str!("wait_kernels.ptx"), "\0");
/// The 32-bit wait: `(const u32* word, u32 value, u32 mask, u32 condition)`.
const WAIT32_ENTRY: &CStr = c"hip_remote_wait_value32";
/// The 64-bit wait: `(const u64* word, u64 value, u64 mask, u32 condition)`.
const WAIT64_ENTRY: &CStr = c"hip_remote_wait_value64";
/// One block of one thread: a single poller.
const WAIT_LAUNCH: LaunchConfig = LaunchConfig { grid: [1, 1, 1], block: [1, 1, 1], shared_mem: 0 };

/// A device's loaded wait kernels.
#[derive(Clone, Copy)]
pub(super) struct WaitKernels {
    module: Raw<CUmodule>,
    wait32: Raw<CUfunction>,
    wait64: Raw<CUfunction>,
}

/// One wait kernel launch: which kernel and its parameters, packed as the kernel declares them
/// (each at an offset aligned to its size, as `cuLaunchKernel`'s parameter buffer wants).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct WaitLaunch {
    pub width: Width,
    pub params: Vec<u8>,
}

impl WaitLaunch {
    /// The launch waiting on `ptr` for `condition` under `mask`; a 32-bit wait takes the low
    /// 32 bits of `value` and `mask`, as `hipStreamWaitValue32` passes them.
    pub fn new(ptr: DevicePtr, width: Width, value: u64, mask: u64, condition: WaitCondition) -> Self {
        // HIP's flag for the condition, which the kernel switches on.
        let condition = condition as u32;
        let mut params = Vec::with_capacity(32);
        params.extend_from_slice(&ptr.0.to_le_bytes());
        match width {
            Width::W32 => {
                params.extend_from_slice(&(value as u32).to_le_bytes());
                params.extend_from_slice(&(mask as u32).to_le_bytes());
            }
            Width::W64 => {
                params.extend_from_slice(&value.to_le_bytes());
                params.extend_from_slice(&mask.to_le_bytes());
            }
        }
        params.extend_from_slice(&condition.to_le_bytes());
        Self { width, params }
    }
}

/// Loads the wait kernels into the current context.
fn load() -> Result<WaitKernels, BackendError> {
    let module = result::module::load_data(WAIT_KERNELS_PTX.as_bytes())?;
    let functions = result::module::function(module, WAIT32_ENTRY).and_then(|w32| Ok((w32, result::module::function(module, WAIT64_ENTRY)?)));
    match functions {
        Ok((wait32, wait64)) => Ok(WaitKernels { module: Raw(module), wait32: Raw(wait32), wait64: Raw(wait64) }),
        Err(e) => {
            // Loaded just now and used by nothing.
            let _ = result::module::unload(module);
            Err(e.into())
        }
    }
}

impl CudaBackend {
    /// `dev`'s wait kernels, loaded on first use (`dev`'s context is current).
    fn wait_kernels(&self, dev: DeviceIndex) -> Result<WaitKernels, BackendError> {
        let mut loaded = lock(&self.wait_kernels);
        if let Some(k) = loaded.get(&dev) {
            return Ok(*k);
        }
        let k = load().inspect_err(|e| tracing::warn!(%e, dev, "loading the worker's wait kernels (masked stream waits) failed"))?;
        loaded.insert(dev, k);
        Ok(k)
    }

    /// Queues `launch` on `stream` of `dev` (its context current).
    pub(super) fn launch_wait_kernel(&self, stream: CUstream, dev: DeviceIndex, launch: &WaitLaunch) -> Result<(), BackendError> {
        let kernels = self.wait_kernels(dev)?;
        let f = match launch.width {
            Width::W32 => kernels.wait32,
            Width::W64 => kernels.wait64,
        };
        Ok(result::launch::kernel(f.0, &WAIT_LAUNCH, stream, &launch.params)?)
    }

    /// Unloads every device's wait kernels (the backend is going away, its streams idle).
    pub(super) fn unload_wait_kernels(&self) {
        for (dev, k) in lock(&self.wait_kernels).drain() {
            if self.enter(dev).is_ok() {
                // Loaded by `load` in `dev`'s context; unloaded once (drained).
                let _ = result::module::unload(k.module.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `.param` sizes of `entry` in the PTX, in declaration order.
    fn ptx_params(entry: &str) -> Vec<usize> {
        let ptx = WAIT_KERNELS_PTX;
        let start = ptx.find(&format!(".visible .entry {entry}(")).unwrap_or_else(|| panic!("the PTX declares no entry {entry}"));
        let decl = &ptx[start..start + ptx[start..].find(')').expect("a closed parameter list")];
        decl.lines()
            .filter_map(|l| l.trim().strip_prefix(".param ."))
            .map(|l| {
                let ty = l.split_whitespace().next().unwrap();
                let bits: usize = ty[1..].parse().unwrap_or_else(|_| panic!("parameter type {ty}"));
                bits / 8
            })
            .collect()
    }

    /// Reads the parameters back from a packed buffer at the offsets the PTX's declarations give
    /// them (each aligned to its size, as the driver lays out kernel parameters).
    fn unpack(params: &[u8], sizes: &[usize]) -> Vec<u64> {
        let mut offset = 0usize;
        let mut out = Vec::new();
        for &size in sizes {
            offset = offset.next_multiple_of(size);
            let mut word = [0u8; 8];
            word[..size].copy_from_slice(&params[offset..offset + size]);
            out.push(u64::from_le_bytes(word));
            offset += size;
        }
        assert_eq!(offset, params.len(), "the packed parameters are exactly the kernel's");
        out
    }

    #[test]
    fn the_ptx_declares_both_waits_for_sm_70() {
        assert!(WAIT_KERNELS_PTX.contains(".target sm_70"), "ld.acquire.sys and nanosleep need sm_70");
        assert_eq!(ptx_params("hip_remote_wait_value32"), [8, 4, 4, 4]);
        assert_eq!(ptx_params("hip_remote_wait_value64"), [8, 8, 8, 4]);
        assert_eq!(WAIT32_ENTRY.to_str().unwrap(), "hip_remote_wait_value32");
        assert_eq!(WAIT64_ENTRY.to_str().unwrap(), "hip_remote_wait_value64");
        for entry in ["hip_remote_wait_value32", "hip_remote_wait_value64"] {
            let body = &WAIT_KERNELS_PTX[WAIT_KERNELS_PTX.find(&format!(".entry {entry}(")).unwrap()..];
            let body = &body[..body.find("\n}").unwrap()];
            assert!(body.contains("ld.acquire.sys."), "{entry} polls with system-scope acquire loads");
            assert!(body.contains("nanosleep.u32"), "{entry} sleeps between polls");
        }
        assert!(WAIT_KERNELS_PTX.ends_with('\0') && !WAIT_KERNELS_PTX[..WAIT_KERNELS_PTX.len() - 1].contains('\0'));
    }

    /// The committed PTX is what the script makes of the source (where clang-15 is here), and
    /// ptxas assembles it for Volta and Hopper with warnings as errors (where
    /// `HIP_REMOTE_PTXAS` names ptxas, as `scripts/test.sh` sets it).
    #[test]
    fn the_committed_ptx_matches_its_source_and_assembles() {
        use std::process::Command;
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = std::env::temp_dir().join(format!("hip-remote-wait-kernels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let committed = &WAIT_KERNELS_PTX[..WAIT_KERNELS_PTX.len() - 1];
        let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang++-15".into());
        if Command::new(&clang).arg("--version").output().is_ok_and(|o| o.status.success()) {
            let fresh = dir.join("wait_kernels.ptx");
            let out = Command::new("bash").arg(repo.join("scripts/wait-kernels-ptx.sh")).arg(&fresh).output().unwrap();
            assert!(out.status.success(), "scripts/wait-kernels-ptx.sh failed: {}", String::from_utf8_lossy(&out.stderr));
            assert!(std::fs::read_to_string(&fresh).unwrap() == committed, "wait_kernels.ptx is stale: run scripts/wait-kernels-ptx.sh");
        } else {
            eprintln!("skipped: {clang} is not here to regenerate the PTX");
        }
        if let Some(ptxas) = std::env::var_os("HIP_REMOTE_PTXAS") {
            let ptx = dir.join("committed.ptx");
            std::fs::write(&ptx, committed).unwrap();
            for arch in ["sm_70", "sm_90"] {
                let out =
                    Command::new(&ptxas).arg(format!("-arch={arch}")).arg("--warning-as-error").arg(&ptx).args(["-o", "/dev/null"]).output().unwrap();
                assert!(out.status.success(), "ptxas -arch={arch}: {}", String::from_utf8_lossy(&out.stderr));
            }
        } else {
            eprintln!("skipped: HIP_REMOTE_PTXAS is not set, the PTX is not assembled");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn parameters_are_packed_where_the_kernel_reads_them() {
        let ptr = DevicePtr(0x7f00_1234_5000);
        let w32 = WaitLaunch::new(ptr, Width::W32, 0xdead_0000_0004, 0xffff_0000_000f, WaitCondition::Gte);
        assert_eq!(w32.width, Width::W32);
        // hipStreamWaitValue32 takes 32-bit values: the high halves never reach the kernel.
        assert_eq!(unpack(&w32.params, &ptx_params("hip_remote_wait_value32")), [0x7f00_1234_5000, 0x4, 0xf, 0]);
        let w64 = WaitLaunch::new(ptr, Width::W64, 0x11, 0xffff_ffff, WaitCondition::Eq);
        assert_eq!(unpack(&w64.params, &ptx_params("hip_remote_wait_value64")), [0x7f00_1234_5000, 0x11, 0xffff_ffff, 1]);
        // The kernel's condition numbers are HIP's flags (hipStreamWaitValueGte = 0, Eq = 1,
        // And = 2, Nor = 3).
        for (condition, flag) in [(WaitCondition::Gte, 0), (WaitCondition::Eq, 1), (WaitCondition::And, 2), (WaitCondition::Nor, 3)] {
            let launch = WaitLaunch::new(ptr, Width::W64, 0, 0, condition);
            assert_eq!(unpack(&launch.params, &ptx_params("hip_remote_wait_value64"))[3], flag);
        }
    }
}
