//! IPC family: memory and event handles passed between client processes of one worker
//! (`hipIpc*`).
//!
//! The worker exports the memory or event under a random 128-bit token valid for the
//! exporter's tenant; the 64-byte handle carries the token and what the importer needs:
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | magic `HRIPCMEM` / `HRIPCEVT` |
//! | 8..16 | the exporting process's random id (opening one's own handle is refused, as ROCm does) |
//! | 16..32 | token |
//! | 32..40 | size of the allocation |
//! | 40..48 | offset of the exported pointer in it |
//! | 48..52 | device |
//! | 52..56 | where the allocation starts in the shared memory (client-placed memory) |
//! | 56..64 | the allocation's own size (client-placed memory; 0: all of it) |
//!
//! Client-placed `hipMalloc` memory (`docs/ALLOCATION.md`) is shared as its whole unit of
//! granules; the last two fields let the importer answer the allocation's own range.
//!
//! The importer's pointer may differ from the exporter's (as with real IPC): on the host
//! backend each process maps the same memory where its own address space has room.

use crate::abi::*;
use crate::handle::Handle;
use crate::remote::with_conn;
use crate::state::allocations::{find_device_range, forget_device_range, record_range_of_kind, RangeKind};
use crate::state::devices::current_device;
use crate::state::families::Family;
use client_core::published::FamilyTable;
use client_core::CallError;
use proto_core::wire;
use proto_core::Calls;
use std::collections::HashMap;
use std::ffi::{c_char, c_uint, c_void};
use std::sync::{MutexGuard, OnceLock};

const MEMORY_MAGIC: &[u8; 8] = b"HRIPCMEM";
const EVENT_MAGIC: &[u8; 8] = b"HRIPCEVT";

/// This process's random id, written into its handles.
fn process_id() -> u64 {
    static ID: OnceLock<u64> = OnceLock::new();
    *ID.get_or_init(|| {
        // std's hasher keys come from the OS's randomness on every platform; the pid and time
        // make two processes differ even where that randomness were weak.
        use std::hash::BuildHasher;
        let time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        std::collections::hash_map::RandomState::new().hash_one((std::process::id(), time)) ^ (u64::from(std::process::id()) << 32)
    })
}

/// The fields of a handle.
#[derive(Debug, Clone, Copy, Default)]
struct Packed {
    process: u64,
    token0: u64,
    token1: u64,
    size: u64,
    offset: u64,
    device: u32,
    /// Start of the allocation in the shared memory (client-placed memory).
    within: u32,
    /// The allocation's own size (client-placed memory; 0: all of the shared memory).
    extent: u64,
}

/// Opened memory whose recorded range starts inside its mapping (client-placed memory):
/// recorded base → the mapping's base, which closing names.
/// Kept by the session of the memory's device.
const OPENED_INSIDE: FamilyTable<HashMap<u64, u64>> = FamilyTable::new(Family::IpcOpenedInside.slot());

fn opened_inside(device: u32) -> Result<MutexGuard<'static, HashMap<u64, u64>>, CallError> {
    Ok(crate::remote::published_for_device(device)?.family(&OPENED_INSIDE))
}

fn pack(magic: &[u8; 8], p: Packed) -> [c_char; 64] {
    let mut bytes = [0u8; 64];
    bytes[..8].copy_from_slice(magic);
    bytes[8..16].copy_from_slice(&p.process.to_le_bytes());
    bytes[16..24].copy_from_slice(&p.token0.to_le_bytes());
    bytes[24..32].copy_from_slice(&p.token1.to_le_bytes());
    bytes[32..40].copy_from_slice(&p.size.to_le_bytes());
    bytes[40..48].copy_from_slice(&p.offset.to_le_bytes());
    bytes[48..52].copy_from_slice(&p.device.to_le_bytes());
    bytes[52..56].copy_from_slice(&p.within.to_le_bytes());
    bytes[56..64].copy_from_slice(&p.extent.to_le_bytes());
    bytes.map(|b| b as c_char)
}

/// The fields of a handle with `magic`, or `None` for anything else.
fn unpack(magic: &[u8; 8], raw: &[c_char; 64]) -> Option<Packed> {
    let bytes = raw.map(|c| c as u8);
    if &bytes[..8] != magic {
        return None;
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    Some(Packed {
        process: word(8),
        token0: word(16),
        token1: word(24),
        size: word(32),
        offset: word(40),
        device: u32::from_le_bytes(bytes[48..52].try_into().expect("4 bytes")),
        within: u32::from_le_bytes(bytes[52..56].try_into().expect("4 bytes")),
        extent: word(56),
    })
}

/// The error a call answers with: `code` for anything the worker refused for a reason of the
/// handle's, the worker's own code for connection failures.
fn as_code(e: CallError, code: HipError) -> CallError {
    match e.code {
        HipError::NOT_INITIALIZED | HipError::OUT_OF_MEMORY => e,
        _ => CallError { code, ..e },
    }
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcGetMemHandle(handle: *mut hipIpcMemHandle_t, devPtr: *mut c_void) -> hipError_t {
    hip_boundary!("hipIpcGetMemHandle", {
        non_null!(handle);
        non_null!(devPtr);
        let ptr = devPtr as u64;
        let (exported, within, extent) = with_conn(|c| {
            let exported = c.ipc_get_mem_handle(wire::IpcGetMemHandle { ptr })?;
            let (base, size) = find_device_range(ptr).map_or((ptr, 0), |(base, r)| (base, r.size));
            let Some(range) = c.client_memory().owner(base).and_then(|d| c.client_memory().range(d)) else { return Ok((exported, 0, 0)) };
            // Memory placed by the library: the shared granules are never placed in again,
            // and the importer is told where in them the allocation lies.
            range.retire(base);
            let unit_base = ptr - exported.offset;
            Ok((exported, (base - unit_base) as u32, size))
        })
        .map_err(|e| as_code(e, HipError::INVALID_VALUE))?;
        let packed = Packed {
            process: process_id(),
            token0: exported.token0,
            token1: exported.token1,
            size: exported.size,
            offset: exported.offset,
            device: exported.device,
            within,
            extent,
        };
        try_out!(handle, hipIpcMemHandle_t { reserved: pack(MEMORY_MAGIC, packed) });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcOpenMemHandle(devPtr: *mut *mut c_void, handle: hipIpcMemHandle_t, flags: c_uint) -> hipError_t {
    hip_boundary!("hipIpcOpenMemHandle", {
        non_null!(devPtr);
        // ROCm accepts exactly hipIpcMemLazyEnablePeerAccess.
        if flags != hipIpcMemLazyEnablePeerAccess {
            return Err(CallError::new(
                HipError::INVALID_VALUE,
                format!("hipIpcOpenMemHandle flags {flags:#x}: must be hipIpcMemLazyEnablePeerAccess"),
            ));
        }
        let packed = unpack(MEMORY_MAGIC, &handle.reserved);
        let packed = match packed {
            Some(p) if p.size > 0 => p,
            // ROCm: a handle of size 0 (all zeroes, say) is hipErrorInvalidValue.
            _ => return Err(CallError::new(HipError::INVALID_VALUE, "not a memory handle of hipIpcGetMemHandle")),
        };
        if packed.process == process_id() {
            return Err(CallError::new(HipError::INVALID_CONTEXT, "a process cannot open its own IPC handle"));
        }
        let req = wire::IpcOpenMemHandle { token0: packed.token0, token1: packed.token1, offset: packed.offset, device: current_device() };
        let opened = with_conn(|c| c.ipc_open_mem_handle(req)).map_err(|e| match e.code {
            HipError::INVALID_VALUE | HipError::INVALID_CONTEXT | HipError::NOT_INITIALIZED | HipError::OUT_OF_MEMORY => e,
            _ => as_code(e, HipError::INVALID_DEVICE_POINTER),
        })?;
        if packed.extent != 0 && u64::from(packed.within) + packed.extent <= opened.size {
            let start = opened.base + u64::from(packed.within);
            record_range_of_kind(start, packed.extent, opened.device, 0, RangeKind::Ipc);
            opened_inside(opened.device)?.insert(start, opened.base);
        } else {
            record_range_of_kind(opened.base, opened.size, opened.device, 0, RangeKind::Ipc);
        }
        try_out!(devPtr, (opened.base + packed.offset) as *mut c_void);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcCloseMemHandle(devPtr: *mut c_void) -> hipError_t {
    hip_boundary!("hipIpcCloseMemHandle", {
        non_null!(devPtr);
        // The pointer hipIpcOpenMemHandle answered may lie inside the mapping.
        let (base, device) = match find_device_range(devPtr as u64) {
            Some((base, range)) if range.kind == RangeKind::Ipc => (base, range.device),
            _ => return Err(CallError::new(HipError::INVALID_VALUE, format!("{devPtr:?} is not memory opened with hipIpcOpenMemHandle"))),
        };
        let mapping = opened_inside(device)?.get(&base).copied().unwrap_or(base);
        with_conn(|c| c.ipc_close_mem_handle(wire::IpcMemRef { base: mapping })).map_err(|e| as_code(e, HipError::INVALID_VALUE))?;
        opened_inside(device)?.remove(&base);
        forget_device_range(base);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcGetEventHandle(handle: *mut hipIpcEventHandle_t, event: hipEvent_t) -> hipError_t {
    hip_boundary!("hipIpcGetEventHandle", {
        non_null!(handle);
        non_null!(event);
        let event = event.id();
        let exported = with_conn(|c| c.ipc_get_event_handle(wire::EventRef { event }))?;
        let packed = Packed { process: process_id(), token0: exported.token0, token1: exported.token1, ..Packed::default() };
        try_out!(handle, hipIpcEventHandle_t { reserved: pack(EVENT_MAGIC, packed) });
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipIpcOpenEventHandle(event: *mut hipEvent_t, handle: hipIpcEventHandle_t) -> hipError_t {
    hip_boundary!("hipIpcOpenEventHandle", {
        non_null!(event);
        let packed = unpack(EVENT_MAGIC, &handle.reserved)
            .ok_or_else(|| CallError::new(HipError::INVALID_VALUE, "not an event handle of hipIpcGetEventHandle"))?;
        if packed.process == process_id() {
            return Err(CallError::new(HipError::INVALID_CONTEXT, "a process cannot open its own IPC event handle"));
        }
        let req = wire::IpcOpenEventHandle { token0: packed.token0, token1: packed.token1 };
        let opened = with_conn(|c| c.ipc_open_event_handle(req)).map_err(|e| as_code(e, HipError::INVALID_VALUE))?;
        try_out!(event, hipEvent_t::from_id(opened.event)?);
        Ok(())
    })
}
