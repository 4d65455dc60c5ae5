//! The linker: `hipLinkCreate`, `hipLinkAddData`, `hipLinkAddFile`, `hipLinkComplete`,
//! `hipLinkDestroy`. The inputs are collected here (a file is read here, on the client, and
//! its bytes sent) and linked by the worker for the current device in `hipLinkComplete`:
//! `RtcLink` with every input in one bulk section, then `RtcLinkedImage` for the image, both
//! under the connection's lock. The image stays with the link state until `hipLinkDestroy`,
//! as HIP promises for `hipBinOut`.
//!
//! The JIT options given to `hipLinkCreate` are accepted; of them the info and error log
//! buffers (`hipJitOption{Info,Error}LogBuffer` with their `…SizeBytes`) receive the
//! linker's log (NUL-terminated, cut to the buffer).

use super::*;
use crate::state::families::Family;
use client_core::published::FamilyTable;

/// Most inputs of one link (the protocol's list limit).
const MAX_LINK_INPUTS: usize = proto_core::limits::MAX_LIST_ITEMS;

/// A log buffer given as a JIT option: address and size.
#[derive(Default, Clone, Copy)]
struct LogBuffer {
    addr: usize,
    len: usize,
}

impl LogBuffer {
    /// Writes `log` NUL-terminated, cut to the buffer.
    fn write(self, log: &str) {
        if self.addr == 0 || self.len == 0 {
            return;
        }
        let n = log.len().min(self.len - 1);
        // SAFETY: the caller of hipLinkCreate gave a buffer of `len` writable bytes (HIP's
        // contract for hipJitOption*LogBuffer), alive until the link is destroyed.
        unsafe {
            std::ptr::copy_nonoverlapping(log.as_ptr(), self.addr as *mut u8, n);
            *(self.addr as *mut u8).add(n) = 0;
        }
    }
}

#[derive(Default)]
struct LinkState {
    /// `(hipJitInputType, name, bytes)` in the order added.
    inputs: Vec<(u32, String, Vec<u8>)>,
    /// Bytes of all inputs.
    total: usize,
    info_log: LogBuffer,
    error_log: LogBuffer,
    /// The linked image, once complete.
    image: Option<Vec<u8>>,
}

/// Tag of this library's link-state handles ("ll": see [`MODULE_HANDLE_TAG`]).
const LINK_HANDLE_TAG: u64 = 0x6c6c_0000_0000_0000;

/// One session's link states: a link state belongs to the worker of the device current when
/// it was made, and its handle names that worker.
#[derive(Default)]
struct LinkStates {
    states: HashMap<u64, LinkState>,
    /// The counter of the handles issued in this session.
    issued: u64,
}

const LINK_STATES: FamilyTable<LinkStates> = FamilyTable::new(Family::LinkStates.slot());

/// The link states of the session that issued `state`.
fn links(state: hipLinkState_t) -> MutexGuard<'static, LinkStates> {
    crate::remote::published_for_handle(link_id(state)).family(&LINK_STATES)
}

/// The link state behind `state`, if it is live.
fn with_link<R>(state: hipLinkState_t, f: impl FnOnce(&mut LinkState) -> Result<R, CallError>) -> Result<R, CallError> {
    if link_id(state) & LOCAL_HANDLE_TAG_MASK != LINK_HANDLE_TAG {
        return Err(unknown(state));
    }
    let mut links = links(state);
    let link = links.states.get_mut(&link_id(state)).ok_or_else(|| unknown(state))?;
    f(link)
}

fn link_id(state: hipLinkState_t) -> u64 {
    state.id()
}

fn unknown(state: hipLinkState_t) -> CallError {
    CallError::new(HipError::INVALID_HANDLE, format!("{state:p} is not a live hipLinkState_t"))
}

/// The log buffers among `hipLinkCreate`'s options.
///
/// # Safety
/// `options` and `values` hold `count` entries each.
#[allow(non_upper_case_globals)] // HIP's constant names, matched as patterns
unsafe fn log_buffers(count: c_uint, options: *const hipJitOption, values: *const *mut c_void) -> Result<(LogBuffer, LogBuffer), CallError> {
    let (mut info, mut error) = (LogBuffer::default(), LogBuffer::default());
    if count == 0 {
        return Ok((info, error));
    }
    if options.is_null() || values.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} JIT options but a NULL option array")));
    }
    if count as usize > MAX_LINK_INPUTS {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("{count} JIT options")));
    }
    for i in 0..count as usize {
        // SAFETY: both arrays hold `count` entries (caller contract).
        let (option, value) = unsafe { (*options.add(i), *values.add(i)) };
        match option {
            hipJitOptionInfoLogBuffer => info.addr = value as usize,
            hipJitOptionInfoLogBufferSizeBytes => info.len = value as usize,
            hipJitOptionErrorLogBuffer => error.addr = value as usize,
            hipJitOptionErrorLogBufferSizeBytes => error.len = value as usize,
            // The rest tune a JIT the worker's toolchain does not have; accepted, as ROCm does.
            _ => {}
        }
    }
    Ok((info, error))
}

#[no_mangle]
pub unsafe extern "C" fn hipLinkCreate(
    numOptions: c_uint,
    options: *mut hipJitOption,
    optionValues: *mut *mut c_void,
    stateOut: *mut hipLinkState_t,
) -> hipError_t {
    hip_boundary!("hipLinkCreate", {
        non_null!(stateOut);
        // SAFETY: forwarded caller contract.
        let (info_log, error_log) = unsafe { log_buffers(numOptions, options, optionValues)? };
        let (published, namespace) = crate::remote::routed_published()?;
        let mut links = published.family(&LINK_STATES);
        let id = issue_handle(&mut links.issued, LINK_HANDLE_TAG, namespace, "link state")?;
        let handle: hipLinkState_t = crate::handle::from_id(id)?;
        links.states.insert(id, LinkState { info_log, error_log, ..LinkState::default() });
        drop(links);
        try_out!(stateOut, handle);
        Ok(())
    })
}

/// Adds one input, checking its type and the link's total size.
fn add_input(state: hipLinkState_t, kind: hipJitInputType, name: &str, data: Vec<u8>) -> Result<(), CallError> {
    let known = kind < hipJitNumLegacyInputTypes || (hipJitInputLLVMBitcode..=hipJitInputLLVMArchivesOfBundledBitcode).contains(&kind);
    if !known || kind == hipJitInputNvvm {
        return Err(CallError::new(HipError::INVALID_VALUE, format!("hipJitInputType {kind} cannot be linked")));
    }
    with_link(state, |link| {
        if link.inputs.len() >= MAX_LINK_INPUTS || link.total + data.len() > MAX_BULK_LEN {
            return Err(CallError::new(
                HipError::INVALID_VALUE,
                format!("the link would exceed {MAX_LINK_INPUTS} inputs or {MAX_BULK_LEN} bytes with `{name}` ({} bytes)", data.len()),
            ));
        }
        link.total += data.len();
        link.inputs.push((kind, name.to_string(), data));
        Ok(())
    })
}

/// The per-input JIT options are accepted and ignored (see `hipLinkCreate`).
#[no_mangle]
pub unsafe extern "C" fn hipLinkAddData(
    state: hipLinkState_t,
    type_: hipJitInputType,
    data: *mut c_void,
    size: usize,
    name: *const c_char,
    numOptions: c_uint,
    options: *mut hipJitOption,
    optionValues: *mut *mut c_void,
) -> hipError_t {
    hip_boundary!("hipLinkAddData", {
        non_null!(data);
        if size == 0 {
            return Err(CallError::new(HipError::INVALID_VALUE, "an input of 0 bytes"));
        }
        if size > MAX_BULK_LEN {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("an input of {size} bytes exceeds {MAX_BULK_LEN}")));
        }
        // SAFETY: forwarded caller contract (the options are only checked).
        unsafe { log_buffers(numOptions, options, optionValues)? };
        let name = if name.is_null() {
            "input".to_string()
        } else {
            // SAFETY: a NUL-terminated name (HIP's contract).
            unsafe { c_str(name, "name")? }.to_string()
        };
        // SAFETY: `data` holds `size` bytes (HIP's contract).
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, size) }.to_vec();
        add_input(state, type_, &name, bytes)
    })
}

#[no_mangle]
pub unsafe extern "C" fn hipLinkAddFile(
    state: hipLinkState_t,
    type_: hipJitInputType,
    path: *const c_char,
    numOptions: c_uint,
    options: *mut hipJitOption,
    optionValues: *mut *mut c_void,
) -> hipError_t {
    hip_boundary!("hipLinkAddFile", {
        // SAFETY: a NUL-terminated path (HIP's contract).
        let path = unsafe { c_str(path, "path")? };
        // SAFETY: forwarded caller contract (the options are only checked).
        unsafe { log_buffers(numOptions, options, optionValues)? };
        with_link(state, |_| Ok(()))?;
        let bytes = std::fs::read(path).map_err(|e| CallError::new(HipError::FILE_NOT_FOUND, format!("{path}: {e}")))?;
        if bytes.is_empty() {
            return Err(CallError::new(HipError::INVALID_VALUE, format!("{path} is empty")));
        }
        add_input(state, type_, path, bytes)
    })
}

/// A failed link is `hipErrorInvalidImage` (the inputs do not make an image, as CUDA's
/// linker reports it), with the linker's log in the error log buffer.
#[no_mangle]
pub unsafe extern "C" fn hipLinkComplete(state: hipLinkState_t, hipBinOut: *mut *mut c_void, sizeOut: *mut usize) -> hipError_t {
    hip_boundary!("hipLinkComplete", {
        non_null!(hipBinOut);
        non_null!(sizeOut);
        let (inputs, names, data, info_log, error_log) = with_link(state, |link| {
            if link.inputs.is_empty() {
                return Err(CallError::new(HipError::INVALID_VALUE, "hipLinkComplete without inputs"));
            }
            let mut names = String::new();
            let mut data = Vec::with_capacity(link.total);
            let mut inputs = Vec::with_capacity(link.inputs.len());
            for (kind, name, bytes) in &link.inputs {
                names.push_str(&wire_name(name).replace('\0', "?"));
                names.push('\0');
                data.extend_from_slice(bytes);
                inputs.push(wire::LinkInput { kind: (*kind).into(), len: (bytes.len() as u32).into() });
            }
            Ok((inputs, names, data, link.info_log, link.error_log))
        })?;
        let names =
            StrList::from_packed(&names).ok_or_else(|| CallError::new(HipError::INVALID_VALUE, "the inputs' names exceed the protocol's limits"))?;
        let req = wire::RtcLink { device: current_device(), inputs: proto_core::List(&inputs), names, data: Bulk(&data) };
        let (success, log, image) = with_conn(|c| {
            let (success, log) = c.rtc_link(req).map(|r| (r.success, r.log.as_str().to_string()))?;
            let image = if success { c.rtc_linked_image(wire::Empty {}).map(|r| r.image.0.to_vec())? } else { Vec::new() };
            Ok((success, log, image))
        })?;
        if !success {
            error_log.write(&log);
            return Err(CallError::new(HipError::INVALID_IMAGE, format!("the link failed: {}", log.trim_end())));
        }
        info_log.write(&log);
        with_link(state, |link| {
            let image = link.image.insert(image);
            // SAFETY: both checked non-null; the image lives in the link state until
            // hipLinkDestroy.
            unsafe {
                hipBinOut.write(image.as_mut_ptr().cast());
                sizeOut.write(image.len());
            }
            Ok(())
        })
    })
}

#[no_mangle]
pub extern "C" fn hipLinkDestroy(state: hipLinkState_t) -> hipError_t {
    hip_boundary!("hipLinkDestroy", {
        with_link(state, |_| Ok(()))?;
        links(state).states.remove(&link_id(state)).map(drop).ok_or_else(|| unknown(state))
    })
}
