//! Stream memory operations (`hipStreamWaitValue*`, `hipStreamWriteValue*`,
//! `hipStreamBatchMemOp`) and host steps whose failure is latched on their stream.

use super::{BackendError, DevicePtr, StreamHandle};

/// Width of the memory word a [`MemOp`] reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    /// 32 bits.
    W32,
    /// 64 bits.
    W64,
}

/// `hipStreamWaitValue*` conditions (the values are HIP's and CUDA's flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitCondition {
    /// `(*ptr & mask) >= value` (`hipStreamWaitValueGte`).
    Gte = 0,
    /// `(*ptr & mask) == value` (`hipStreamWaitValueEq`).
    Eq = 1,
    /// `(*ptr & mask & value) != 0` (`hipStreamWaitValueAnd`).
    And = 2,
    /// `~((*ptr & mask) | (value & mask)) & mask != 0`: some masked bit clear in both (`hipStreamWaitValueNor`).
    Nor = 3,
}

impl WaitCondition {
    /// The condition a HIP flag names.
    pub fn from_flags(flags: u32) -> Option<Self> {
        Some(match flags {
            0 => Self::Gte,
            1 => Self::Eq,
            2 => Self::And,
            3 => Self::Nor,
            _ => return None,
        })
    }

    /// Whether `word` (already read at the operation's width) satisfies the wait.
    pub fn holds(self, word: u64, value: u64, mask: u64) -> bool {
        let masked = word & mask;
        match self {
            Self::Gte => masked >= value,
            Self::Eq => masked == value,
            Self::And => masked & value != 0,
            Self::Nor => !(masked | (value & mask)) & mask != 0,
        }
    }
}

/// One stream memory operation. The session has checked that `ptr` lies in one of its
/// allocations, with room for the word, aligned to its width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemOp {
    /// Hold the stream until the word satisfies `condition`.
    Wait { ptr: DevicePtr, width: Width, value: u64, mask: u64, condition: WaitCondition },
    /// Store `value` into the word.
    Write { ptr: DevicePtr, width: Width, value: u64 },
}

/// A host step that may fail; the failure is latched on the stream like a device fault.
pub type CheckedHostFn = Box<dyn FnOnce() -> Result<(), BackendError> + Send + 'static>;

/// Stream memory operations and checked host steps.
pub trait StreamOpsBackend {
    /// Queues `op` on `stream` after its earlier work; later work waits for it.
    fn stream_mem_op(&self, stream: StreamHandle, op: MemOp) -> Result<(), BackendError>;

    /// Queues `f` like [`super::StreamBackend::launch_host_func`]; an `Err` it returns is
    /// the stream's error from then on where the backend can latch one (host), and is
    /// logged where it cannot (CUDA and HIP host functions return nothing).
    fn launch_checked_host_func(&self, stream: StreamHandle, f: CheckedHostFn) -> Result<(), BackendError>;
}

#[cfg(test)]
mod tests {
    use super::WaitCondition::*;

    #[test]
    fn wait_conditions_follow_hip() {
        let full = u64::from(u32::MAX);
        assert!(Gte.holds(7, 5, full) && Gte.holds(5, 5, full) && !Gte.holds(4, 5, full));
        assert!(Eq.holds(0x3f, 0x30, 0xf0) && !Eq.holds(0x2f, 0x30, 0xf0));
        assert!(And.holds(0x6, 0x4, full) && !And.holds(0x3, 0x4, full));
        // NOR: some masked bit clear in both the word and the value.
        assert!(!Nor.holds(0xff, 0x0, 0xff) && Nor.holds(0x0f, 0x0, 0xff));
        assert!(!Nor.holds(0x0f, 0xf0, 0xff), "every bit set in word or value");
        assert!(Nor.holds(0, 0, full), "upper bits beyond the width are not looked at");
        assert_eq!(super::WaitCondition::from_flags(4), None);
    }
}
