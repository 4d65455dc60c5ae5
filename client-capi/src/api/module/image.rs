//! Images: code objects and fat binaries, reduced to the one code object the worker's device
//! runs before they are sent; the bounds of an image handed over as a bare pointer.

use super::*;
use crate::config::PostedLookups;
use hip_code_object::kernel_names::{self, KernelNames};
use proto_core::limits::{MAX_RTC_STAGED_BYTES, MAX_TEXT_LEN};
use proto_core::Bulk;

// ------------------------------------------------------------------------------------------------
// Loading
// ------------------------------------------------------------------------------------------------

/// The architecture (`gcnArchName`) of the calling thread's device.
pub(crate) fn device_arch() -> Result<String, CallError> {
    Ok(properties(current_device())?.arch_name.as_str().to_string())
}

pub(super) fn invalid_image(origin: &str, e: impl std::fmt::Display) -> CallError {
    CallError::new(HipError::INVALID_IMAGE, format!("{origin}: {e}"))
}

/// What a module image becomes on the worker.
pub(super) enum Prepared<'a> {
    /// Bytes to load as they are (for a fat binary: the one entry the device runs).
    Code(ModuleFormat, Cow<'a, [u8]>),
    /// A hip-remote device-source entry, to compile for the device first.
    Source(Cow<'a, [u8]>),
}

/// What to send for `image`: its format and bytes, or the device source to compile.
pub(super) fn prepare_image<'a>(image: &'a [u8], origin: &str) -> Result<Prepared<'a>, CallError> {
    let code = |format, bytes: &'a [u8]| Ok(Prepared::Code(format, Cow::Borrowed(bytes)));
    match fatbin::classify(image).map_err(|e| invalid_image(origin, e))? {
        ImageKind::Elf { machine: fatbin::EM_AMDGPU } => {
            let arch = device_arch()?;
            if fatbin::Arch::parse(&arch).processor == "host" {
                return Err(CallError::new(
                    HipError::NO_BINARY_FOR_GPU,
                    format!("{origin} is an AMD GPU code object; the worker's device is '{arch}' (host backend), which runs host modules only"),
                ));
            }
            code(ModuleFormat::CodeObject, image)
        }
        ImageKind::Elf { machine: fatbin::EM_CUDA } => code(ModuleFormat::Cubin, image),
        ImageKind::Elf { .. } => code(ModuleFormat::HostModule, image),
        ImageKind::Ptx => code(ModuleFormat::Ptx, image),
        ImageKind::NvFatbin => code(ModuleFormat::Fatbin, image),
        ImageKind::Bundle => {
            let bundle = Bundle::parse(image).map_err(|e| invalid_image(origin, e))?;
            Ok(match pick(&bundle, origin)? {
                Choice::CodeObject(e) => Prepared::Code(ModuleFormat::CodeObject, Cow::Borrowed(e.code)),
                Choice::Ptx(e) => Prepared::Code(ModuleFormat::Ptx, Cow::Borrowed(e.code)),
                Choice::Source(e) => Prepared::Source(Cow::Borrowed(e.code)),
            })
        }
        ImageKind::CompressedBundle => {
            let plain = fatbin::decompress(image).map_err(|e| invalid_image(origin, e))?;
            let bundle = Bundle::parse(&plain).map_err(|e| invalid_image(origin, e))?;
            Ok(match pick(&bundle, origin)? {
                Choice::CodeObject(e) => Prepared::Code(ModuleFormat::CodeObject, Cow::Owned(e.code.to_vec())),
                Choice::Ptx(e) => Prepared::Code(ModuleFormat::Ptx, Cow::Owned(e.code.to_vec())),
                Choice::Source(e) => Prepared::Source(Cow::Owned(e.code.to_vec())),
            })
        }
    }
}

/// What of `bundle` the current device runs.
pub(super) fn pick<'b, 'a>(bundle: &'b Bundle<'a>, origin: &str) -> Result<Choice<'b, 'a>, CallError> {
    let arch = device_arch()?;
    portable::choose(bundle, &arch).map_err(|miss| CallError::new(HipError::NO_BINARY_FOR_GPU, format!("{origin}: {miss}")))
}

/// Most of a failed compile's log quoted in the launch's error message.
const MAX_QUOTED_LOG: usize = 4 << 10;

/// Packs `items` as NUL-terminated strings (a wire `StrList`).
fn packed<'s>(items: impl IntoIterator<Item = &'s str>) -> String {
    items.into_iter().flat_map(|s| [s, "\0"]).collect()
}

/// Compiles a device-source entry for the current device through the worker's hiprtc (which
/// caches the result by content); the code to load, and the worker's name of each kernel or
/// variable whose name differs from the registered one.
fn compile_source(bytes: &[u8], origin: &str) -> Result<(Vec<u8>, HashMap<String, String>), CallError> {
    let entry = SourceEntry::parse(bytes).map_err(|e| invalid_image(origin, e))?;
    let symbols: Vec<(&str, &str)> = entry.kernels.iter().chain(&entry.variables).copied().collect();
    let header_names = packed(entry.headers.iter().map(|(n, _)| *n));
    let header_texts = packed(entry.headers.iter().map(|(_, t)| *t));
    let options = packed(entry.options.iter().copied());
    let expressions = packed(symbols.iter().map(|(_, e)| *e));
    fn list<'s>(packed: &'s str, origin: &str) -> Result<StrList<'s>, CallError> {
        StrList::from_packed(packed).ok_or_else(|| invalid_image(origin, "device source: a list exceeds the protocol's limits"))
    }
    let result =
        |out: wire::RtcCompiled<'_>| (out.success, out.log.as_str().to_string(), out.code.0.to_vec(), out.lowered_names.packed().to_string());
    // A program beyond what one RtcCompile carries (a device source of megabytes, or many
    // headers) travels as bulk pieces staged on the worker, then compiled by name.
    let fits = entry.source.len() + header_texts.len() <= MAX_TEXT_LEN;
    let compiled = if fits {
        let req = wire::RtcCompile {
            device: current_device(),
            name: wire_name(entry.name).into(),
            source: entry.source.into(),
            header_names: list(&header_names, origin)?,
            header_sources: list(&header_texts, origin)?,
            options: list(&options, origin)?,
            name_expressions: list(&expressions, origin)?,
        };
        with_conn(|c| c.rtc_compile(req).map(result))
    } else {
        let staged: usize = entry.source.len() + entry.headers.iter().map(|(_, t)| t.len()).sum::<usize>();
        if staged > MAX_RTC_STAGED_BYTES {
            return Err(invalid_image(
                origin,
                format!("device source: {staged} bytes of text, more than the {MAX_RTC_STAGED_BYTES} a worker compiles"),
            ));
        }
        let req = wire::RtcCompileStaged {
            device: current_device(),
            name: wire_name(entry.name).into(),
            header_names: list(&header_names, origin)?,
            options: list(&options, origin)?,
            name_expressions: list(&expressions, origin)?,
        };
        let parts = std::iter::once(entry.source).chain(entry.headers.iter().map(|(_, t)| *t));
        with_conn(|c| {
            for (part, text) in parts.enumerate() {
                for piece in text.as_bytes().chunks(MAX_BULK_LEN) {
                    c.rtc_stage(wire::RtcStage { part: part as u32, text: Bulk(piece) })?;
                }
            }
            c.rtc_compile_staged(req).map(result)
        })
    }
    .map_err(|e| CallError::new(e.code, format!("{origin}: compiling its device source on the worker: {}", e.message)))?;
    let (success, log, code, lowered) = compiled;
    if !success {
        let mut quoted: String = log.chars().take(MAX_QUOTED_LOG).collect();
        if quoted.len() < log.len() {
            quoted.push_str("\n[...]");
        }
        return Err(CallError::new(
            HipError::NO_BINARY_FOR_GPU,
            format!("{origin}: its device source does not compile for the worker's device '{}':\n{quoted}", device_arch()?),
        ));
    }
    let aliases = symbols
        .iter()
        .zip(lowered.split_terminator('\0'))
        .filter(|((registered, _), worker)| registered != worker && !worker.is_empty())
        .map(|((registered, _), worker)| (registered.to_string(), worker.to_string()))
        .collect();
    Ok((code, aliases))
}

/// Loads `image` into the worker; returns the new `hipModule_t` value.
pub(crate) fn load_image(image: &[u8], origin: &str) -> Result<u64, CallError> {
    let (format, code, aliases) = match prepare_image(image, origin)? {
        Prepared::Code(format, code) => (format, code, HashMap::new()),
        Prepared::Source(bytes) => {
            let (code, aliases) = compile_source(&bytes, origin)?;
            (ModuleFormat::Auto, Cow::Owned(code), aliases)
        }
    };
    if code.len() > MAX_BULK_LEN {
        return Err(CallError::new(
            HipError::INVALID_IMAGE,
            format!("{origin}: code object of {} bytes exceeds the protocol's {MAX_BULK_LEN}", code.len()),
        ));
    }
    let kernels = readable_kernels(format, &code, origin);
    let device = current_device();
    // Posted where the worker allows (a failed load then fails the first synchronising call
    // with its own status, and every later use of the module); one worker only, as the
    // handle carries no device namespace of a device list.
    let single_worker = crate::remote::worker_count() <= 1;
    let worker = with_conn(|c| match single_worker.then(|| c.post_module_load(device, format, wire_name(origin), &code)).transpose()?.flatten() {
        Some(module) => Ok(module),
        None => c.load_module(device, format, wire_name(origin), &code),
    })?;
    // Kept in the session of the worker that loaded it; the handle names that worker.
    let (published, namespace) = crate::remote::routed_published()?;
    let mut tables = tables_in(published);
    let handle = tables.issue(MODULE_HANDLE_TAG, namespace)?;
    let entry = ModuleEntry {
        worker,
        origin: origin.to_string(),
        device,
        functions: HashMap::new(),
        globals: HashMap::new(),
        aliases,
        library: false,
        kernels,
    };
    tables.modules.insert(handle, entry);
    Ok(handle)
}

/// The kernels `code` holds as the worker loads it (`format`), where the client can read them
/// (`hip_code_object::kernel_names`: code objects, PTX, cubins, hiprtc's host modules);
/// `None` (a format that does not tell, or `HIP_REMOTE_POSTED_LOOKUPS=off`): lookups ask the
/// worker.
fn readable_kernels(format: ModuleFormat, code: &[u8], origin: &str) -> Option<Arc<KernelNames>> {
    if crate::remote::config().posted_lookups == PostedLookups::Off {
        return None;
    }
    let read = match format {
        ModuleFormat::CodeObject => kernel_names::from_code_object(code),
        ModuleFormat::Ptx => kernel_names::from_ptx(code),
        ModuleFormat::Cubin => kernel_names::from_cubin(code),
        ModuleFormat::HostModule | ModuleFormat::Auto => kernel_names::read(code),
        _ => return None,
    };
    match read {
        Ok(kernels) => Some(Arc::new(kernels)),
        Err(e) => {
            tracing::debug!(origin, "{e}; its lookups ask the worker");
            None
        }
    }
}

/// Readable bytes from `addr` to the end of the loaded segment that holds it, when `addr` lies
/// in an executable or shared object of this process (Linux: `dl_iterate_phdr`).
#[cfg(target_os = "linux")]
pub(crate) fn mapped_len(addr: usize) -> Option<usize> {
    struct Search {
        addr: usize,
        found: Option<usize>,
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: libc::size_t, data: *mut c_void) -> c_int {
        // SAFETY: `data` is the `Search` passed below; `info` is valid during the callback.
        let (search, info) = unsafe { (&mut *(data as *mut Search), &*info) };
        for i in 0..usize::from(info.dlpi_phnum) {
            // SAFETY: `dlpi_phdr` has `dlpi_phnum` entries.
            let ph = unsafe { &*info.dlpi_phdr.add(i) };
            if ph.p_type != libc::PT_LOAD {
                continue;
            }
            let start = (info.dlpi_addr as usize).wrapping_add(ph.p_vaddr as usize);
            let end = start.saturating_add(ph.p_memsz as usize);
            if (start..end).contains(&search.addr) {
                search.found = Some(end - search.addr);
                return 1;
            }
        }
        0
    }
    let mut search = Search { addr, found: None };
    // SAFETY: the callback only reads the headers it is handed and writes `search`.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut search as *mut Search as *mut c_void) };
    search.found
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn mapped_len(_addr: usize) -> Option<usize> {
    None
}

/// The image at `ptr`, its length learnt from its own headers ([`fatbin::image_extent`]) and
/// bounded by the loaded segment holding it where that is known.
///
/// # Safety
/// `ptr` must point at an image valid for the length its headers declare.
pub(crate) unsafe fn image_at<'a>(ptr: *const u8, origin: &str) -> Result<&'a [u8], CallError> {
    if ptr.is_null() {
        return Err(CallError::new(HipError::INVALID_VALUE, "image is NULL"));
    }
    // SAFETY: the caller passes an image; its first byte is readable.
    let first = unsafe { *ptr };
    if first == b'/' || first == b'.' || first.is_ascii_whitespace() {
        // PTX is NUL-terminated text (as cuModuleLoadData takes it).
        // SAFETY: text images are NUL-terminated by contract.
        return Ok(unsafe { std::ffi::CStr::from_ptr(ptr.cast()) }.to_bytes_with_nul());
    }
    let bound = mapped_len(ptr as usize);
    let beyond = |n: usize| bound.is_some_and(|b| n > b);
    let mut seen = 0;
    loop {
        // SAFETY: `seen` bytes were promised by the headers read so far (caller contract) and
        // lie within the mapped segment where that is known.
        let view = unsafe { std::slice::from_raw_parts(ptr, seen) };
        match fatbin::image_extent(view).map_err(|e| invalid_image(origin, e))? {
            Extent::NeedMore(n) | Extent::Complete(n) if beyond(n) => {
                return Err(invalid_image(origin, format!("its headers reach byte {n}, past the end of the mapped segment holding it")));
            }
            Extent::NeedMore(n) => seen = n,
            // SAFETY: as above.
            Extent::Complete(n) => return Ok(unsafe { std::slice::from_raw_parts(ptr, n) }),
            Extent::Unsized => match bound {
                // SAFETY: the whole rest of the segment is mapped.
                Some(b) => return Ok(unsafe { std::slice::from_raw_parts(ptr, b.min(fatbin::MAX_IMAGE_LEN)) }),
                None => {
                    return Err(invalid_image(origin, "a version 1 compressed bundle records no size, and this address lies in no loaded object; load it from its file with hipModuleLoad"));
                }
            },
        }
    }
}
