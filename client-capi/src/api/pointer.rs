//! Pointer queries: `hipPointerGetAttributes`, `hipPointerGetAttribute`,
//! `hipDrvPointerGetAttributes`, `hipPointerSetAttribute`, `hipMemGetAddressRange`.
//!
//! Answered from the client's record of memory (`state::allocations`): every range a HIP call
//! of this process created, with its [`RangeKind`], and its `hipHostMalloc` allocations. The
//! answers follow ROCm's `hip_memory.cpp`: device-side kinds (device, pool, VMM, IPC) are
//! `hipMemoryTypeDevice`; host-side kinds (pinned, registered/mapped host) and managed memory
//! are host memory to `hipPointerGetAttribute`, managed memory `hipMemoryTypeManaged` to
//! `hipPointerGetAttributes`; an address no HIP call made is unregistered host memory.

use crate::abi::*;
use crate::state::allocations::*;
use crate::state::families::Family;
use client_core::published::FamilyTable;
use client_core::CallError;
use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};

/// What this client knows about an address.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Known {
    Device { base: u64, range: DeviceRange },
    Host { base: usize, alloc: HostAllocation },
}

impl Known {
    pub(crate) fn find(ptr: u64) -> Option<Self> {
        if let Some((base, range)) = find_device_range(ptr) {
            return Some(Self::Device { base, range });
        }
        find_host_allocation(ptr as usize).map(|(base, alloc)| Self::Host { base, alloc })
    }

    pub(crate) fn base(self) -> u64 {
        match self {
            Self::Device { base, .. } => base,
            Self::Host { base, .. } => base as u64,
        }
    }

    pub(crate) fn size(self) -> u64 {
        match self {
            Self::Device { range, .. } => range.size,
            Self::Host { alloc, .. } => alloc.layout.size() as u64,
        }
    }

    fn device(self) -> c_int {
        match self {
            Self::Device { range, .. } => range.device as c_int,
            Self::Host { alloc, .. } => alloc.device as c_int,
        }
    }

    fn flags(self) -> c_uint {
        match self {
            Self::Device { range, .. } => range.flags,
            Self::Host { alloc, .. } => alloc.flags,
        }
    }

    fn id(self) -> u32 {
        match self {
            Self::Device { range, .. } => range.id,
            Self::Host { alloc, .. } => alloc.id,
        }
    }

    fn is_managed(self) -> bool {
        matches!(self, Self::Device { range: DeviceRange { kind: RangeKind::Managed, .. }, .. })
    }

    /// Whether the host addresses the memory at the same address (pinned, mapped host and
    /// managed memory): ROCm's host-side memory objects.
    fn is_host_side(self) -> bool {
        match self {
            Self::Host { .. } => true,
            Self::Device { range, .. } => matches!(range.kind, RangeKind::Managed | RangeKind::HostMapped),
        }
    }

    /// `HIP_POINTER_ATTRIBUTE_MEMORY_TYPE`: host for host-side memory (managed included, as
    /// ROCm answers), device otherwise.
    fn memory_type(self) -> hipMemoryType {
        if self.is_host_side() {
            hipMemoryTypeHost
        } else {
            hipMemoryTypeDevice
        }
    }

    fn sync_memops(self) -> bool {
        let device = self.device() as u32;
        crate::remote::published_if_known(device).and_then(|p| p.family(&SYNC_MEMOPS).get(&self.id()).copied()).unwrap_or(false)
    }
}

/// `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` of the allocations it was set on, by buffer id (ids are
/// never reused, so a freed allocation's entry can never answer for another), in the session
/// of the allocation's device.
const SYNC_MEMOPS: FamilyTable<HashMap<u32, bool>> = FamilyTable::new(Family::SyncMemops.slot());

#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttributes(attributes: *mut hipPointerAttribute_t, ptr: *const c_void) -> hipError_t {
    hip_boundary!("hipPointerGetAttributes", {
        non_null!(attributes);
        non_null!(ptr);
        let out = match Known::find(ptr as u64) {
            Some(known) => hipPointerAttribute_t {
                type_: if known.is_managed() { hipMemoryTypeManaged } else { known.memory_type() },
                device: known.device(),
                // Host-side memory has one address for host and device, as under ROCm.
                devicePointer: ptr as *mut c_void,
                hostPointer: if known.is_host_side() { ptr as *mut c_void } else { std::ptr::null_mut() },
                isManaged: c_int::from(known.is_managed()),
                allocationFlags: known.flags(),
            },
            // ROCm 6+: an address HIP does not know is unregistered host memory, not an error.
            None => hipPointerAttribute_t {
                type_: hipMemoryTypeUnregistered,
                device: hipInvalidDeviceId,
                devicePointer: std::ptr::null_mut(),
                hostPointer: std::ptr::null_mut(),
                isManaged: 0,
                allocationFlags: 0,
            },
        };
        // SAFETY: checked non-null; the caller provides a writable struct.
        unsafe { attributes.write(out) };
        Ok(())
    })
}

/// One `hipPointerGetAttribute` answer: the value (written even on failure, as ROCm does)
/// and the call's result.
enum AttributeValue {
    U32(u32),
    I32(i32),
    Bool(bool),
    Ptr(u64),
}

fn pointer_attribute(attribute: hipPointer_attribute, ptr: u64) -> (Option<AttributeValue>, Result<(), HipError>) {
    use AttributeValue::*;
    let known = Known::find(ptr);
    let invalid = Err(HipError::INVALID_VALUE);
    let answer = |value: AttributeValue, fallback: AttributeValue| match known {
        Some(_) => (Some(value), Ok(())),
        None => (Some(fallback), invalid),
    };
    match attribute {
        // CONTEXT, P2P_TOKENS, IS_LEGACY_HIP_IPC_CAPABLE, ALLOWED_HANDLE_TYPES,
        // IS_GPU_DIRECT_RDMA_CAPABLE, MEMPOOL_HANDLE: ROCm supports none of them.
        1 | 5 | 10 | 14 | 15 | 17 => (None, Err(HipError::NOT_SUPPORTED)),
        HIP_POINTER_ATTRIBUTE_MEMORY_TYPE => answer(U32(known.map_or(0, Known::memory_type)), U32(0)),
        HIP_POINTER_ATTRIBUTE_DEVICE_POINTER => answer(Ptr(ptr), Ptr(0)),
        HIP_POINTER_ATTRIBUTE_HOST_POINTER => match known {
            Some(k) if k.is_host_side() => (Some(Ptr(ptr)), Ok(())),
            _ => (Some(Ptr(0)), invalid),
        },
        HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS => answer(Bool(known.is_some_and(Known::sync_memops)), Bool(false)),
        HIP_POINTER_ATTRIBUTE_BUFFER_ID => answer(U32(known.map_or(0, Known::id)), U32(0)),
        HIP_POINTER_ATTRIBUTE_IS_MANAGED => answer(Bool(known.is_some_and(Known::is_managed)), Bool(false)),
        // CUDA's and ROCm's "host memory" ordinal is -2.
        HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL => answer(I32(known.map_or(0, Known::device)), I32(hipInvalidDeviceId)),
        HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR => answer(Ptr(known.map_or(0, Known::base)), Ptr(0)),
        // ROCm writes the size as a 32-bit value.
        HIP_POINTER_ATTRIBUTE_RANGE_SIZE => answer(U32(known.map_or(0, Known::size) as u32), U32(0)),
        HIP_POINTER_ATTRIBUTE_MAPPED => answer(Bool(true), Bool(false)),
        // Unknown memory answers 0 without an error here.
        HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS => (Some(U32(known.map_or(0, Known::flags))), Ok(())),
        _ => (None, invalid),
    }
}

/// Writes one attribute answer into `data` (a pointer to storage of the attribute's type).
///
/// # Safety
/// `data` is non-null and points at writable storage of the attribute's type.
unsafe fn write_attribute(data: *mut c_void, value: Option<AttributeValue>) {
    // SAFETY: the caller's contract.
    unsafe {
        match value {
            Some(AttributeValue::U32(v)) => data.cast::<u32>().write_unaligned(v),
            Some(AttributeValue::I32(v)) => data.cast::<i32>().write_unaligned(v),
            Some(AttributeValue::Bool(v)) => data.cast::<bool>().write(v),
            Some(AttributeValue::Ptr(v)) => data.cast::<*mut c_void>().write_unaligned(v as *mut c_void),
            None => {}
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipPointerGetAttribute(data: *mut c_void, attribute: hipPointer_attribute, ptr: hipDeviceptr_t) -> hipError_t {
    hip_boundary!("hipPointerGetAttribute", {
        non_null!(data);
        non_null!(ptr);
        let (value, result) = pointer_attribute(attribute, ptr as u64);
        // SAFETY: checked non-null; the caller provides storage of the attribute's type.
        unsafe { write_attribute(data, value) };
        result.map_err(|code| CallError::new(code, format!("pointer attribute {attribute} of {ptr:?}")))
    })
}

/// Several attributes at once. As in ROCm, the call succeeds whatever each attribute's own
/// answer is: an unknown pointer's attributes get their default values.
#[no_mangle]
pub unsafe extern "C" fn hipDrvPointerGetAttributes(
    numAttributes: c_uint,
    attributes: *mut hipPointer_attribute,
    data: *mut *mut c_void,
    ptr: hipDeviceptr_t,
) -> hipError_t {
    hip_boundary!("hipDrvPointerGetAttributes", {
        if numAttributes == 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "numAttributes is 0"));
        }
        non_null!(attributes);
        non_null!(data);
        non_null!(ptr);
        for i in 0..numAttributes as usize {
            // SAFETY: the caller passes `numAttributes` attributes and as many data pointers.
            let (attribute, out) = unsafe { (attributes.add(i).read(), data.add(i).read()) };
            if out.is_null() {
                return Err(CallError::new(HipError::INVALID_VALUE, format!("data[{i}] is NULL")));
            }
            let (value, _) = pointer_attribute(attribute, ptr as u64);
            // SAFETY: checked non-null; storage of the attribute's type by the caller's contract.
            unsafe { write_attribute(out, value) };
        }
        Ok(())
    })
}

/// `HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS` is the one settable attribute (0 or 1). Copies of this
/// library are synchronous where HIP says so whatever the setting, so it is recorded and
/// reported back.
#[no_mangle]
pub unsafe extern "C" fn hipPointerSetAttribute(value: *const c_void, attribute: hipPointer_attribute, ptr: hipDeviceptr_t) -> hipError_t {
    hip_boundary!("hipPointerSetAttribute", {
        non_null!(ptr);
        non_null!(value);
        if attribute != HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("pointer attribute {attribute} cannot be set")));
        }
        // SAFETY: non-null; SYNC_MEMOPS takes an unsigned int.
        let sync = unsafe { value.cast::<c_uint>().read_unaligned() };
        if sync > 1 {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("SYNC_MEMOPS {sync}: 0 or 1")));
        }
        let known =
            Known::find(ptr as u64).ok_or_else(|| CallError::new(HipError::INVALID_DEVICE_POINTER, format!("{ptr:?} is no HIP allocation")))?;
        crate::remote::published_for_device(known.device() as u32)?.family(&SYNC_MEMOPS).insert(known.id(), sync == 1);
        Ok(())
    })
}

/// The base and size of the allocation containing `dptr` (either out-parameter may be NULL);
/// an address no HIP call made is `hipErrorNotFound`, as in ROCm.
#[no_mangle]
pub unsafe extern "C" fn hipMemGetAddressRange(pbase: *mut hipDeviceptr_t, psize: *mut usize, dptr: hipDeviceptr_t) -> hipError_t {
    hip_boundary!("hipMemGetAddressRange", {
        let known = Known::find(dptr as u64).ok_or_else(|| CallError::new(HipError::NOT_FOUND, format!("{dptr:?} is in no allocation")))?;
        if !pbase.is_null() {
            try_out!(pbase, known.base() as hipDeviceptr_t);
        }
        if !psize.is_null() {
            try_out!(psize, known.size() as usize);
        }
        Ok(())
    })
}
