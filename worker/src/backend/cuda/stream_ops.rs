//! Stream memory operations on CUDA: `cuStreamWaitValue32/64` and `cuStreamWriteValue32/64`
//! (HIP's wait conditions are CUDA's flags, value for value). CUDA's waits have no mask: an
//! AND or NOR wait folds a partial mask into its value exactly; a GTE or EQ wait with a
//! partial mask has no CUDA form and runs as a wait kernel of ours (`wait_kernel.rs`).
//!
//! With the kernel watchdog on, every wait (either kind) is recorded as a wait, not a launch:
//! the application may hold it for any time, and the tenant's launches behind it count from
//! its release (`crate::backend::launch_watch`).

use super::wait_kernel::WaitLaunch;
use super::{result, CudaBackend};
use crate::backend::{BackendError, CheckedHostFn, MemOp, StreamHandle, StreamOpsBackend, WaitCondition, Width};

/// The unmasked value a CUDA wait needs for HIP's masked condition, if there is one:
/// AND `(*p & mask & v) != 0` is CUDA's AND with `v & mask`; NOR `~((*p | v) & mask) != 0`
/// (some masked bit clear in both) is CUDA's NOR `~(*p | v') != 0` with `v' = (v & mask) | !mask`.
/// `None`: no CUDA form (GTE and EQ under a partial mask).
fn unmasked_value(condition: WaitCondition, value: u64, mask: u64, full: u64) -> Option<u64> {
    if mask & full == full {
        return Some(value);
    }
    match condition {
        WaitCondition::And => Some(value & mask),
        WaitCondition::Nor => Some(((value & mask) | !mask) & full),
        WaitCondition::Gte | WaitCondition::Eq => None,
    }
}

impl StreamOpsBackend for CudaBackend {
    fn stream_mem_op(&self, stream: StreamHandle, op: MemOp) -> Result<(), BackendError> {
        let (s, device) = self.stream_on_device(stream)?;
        match op {
            MemOp::Wait { ptr, width, value, mask, condition } => {
                let full = match width {
                    Width::W32 => u64::from(u32::MAX),
                    Width::W64 => u64::MAX,
                };
                let flags = condition as u32;
                match (unmasked_value(condition, value, mask, full), width) {
                    (Some(value), Width::W32) => result::stream_op::wait32(s, ptr.0, value as u32, flags)?,
                    (Some(value), Width::W64) => result::stream_op::wait64(s, ptr.0, value, flags)?,
                    (None, _) => self.launch_wait_kernel(s, device, &WaitLaunch::new(ptr, width, value, mask, condition))?,
                }
                if self.launch_watch.enabled() {
                    self.watch_wait(s, device);
                }
            }
            MemOp::Write { ptr, width, value } => match width {
                Width::W32 => result::stream_op::write32(s, ptr.0, value as u32)?,
                Width::W64 => result::stream_op::write64(s, ptr.0, value)?,
            },
        }
        Ok(())
    }

    fn launch_checked_host_func(&self, stream: StreamHandle, f: CheckedHostFn) -> Result<(), BackendError> {
        let s = self.stream(Some(stream), 0)?;
        self.launch_host(
            s,
            Box::new(move || {
                if let Err(e) = f() {
                    tracing::warn!(%e, "a host step of a CUDA stream failed (CUDA host functions cannot report it)");
                }
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folded value gives CUDA's unmasked condition the masked answer, for every word.
    #[test]
    fn masks_fold_into_and_and_nor_values() {
        let full = u64::from(u32::MAX);
        for (value, mask) in [(0x0u64, 0xffu64), (0x4, 0x6), (0xf0, 0x0f), (0x1234, 0xff00)] {
            for word in [0u64, 0xff, 0x0f, 0xf0, 0x1200, 0xffff_ffff, 0x6] {
                let and = unmasked_value(WaitCondition::And, value, mask, full).unwrap();
                assert_eq!((word & and) != 0, (word & mask & value) != 0, "AND {word:#x} {value:#x} {mask:#x}");
                let nor = unmasked_value(WaitCondition::Nor, value, mask, full).unwrap();
                assert_eq!((!(word | nor) & full) != 0, (!(word | value) & mask) != 0, "NOR {word:#x} {value:#x} {mask:#x}");
            }
        }
        assert_eq!(unmasked_value(WaitCondition::Eq, 1, 0xf, full), None);
        assert_eq!(unmasked_value(WaitCondition::Gte, 1, full, full), Some(1));
    }
}
