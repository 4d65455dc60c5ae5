//! Module, kernel and hiprtc handlers: the session's module and function tables, argument
//! checks before a launch reaches the backend, and module globals in the allocation table.
//!
//! * Module and function handles are session-scoped ([`Handles`]); a function handle dies
//!   with its module. Looking the same kernel up twice returns the same handle.
//! * A global found by `hipModuleGetGlobal` enters the allocation table as a range owned by
//!   its module, so copies to and from it validate like any device memory; `hipFree` refuses
//!   it and unloading the module removes it.
//! * `LaunchKernel` usually arrives fire-and-forget: a launch refused here or by the backend
//!   becomes the connection's deferred error (the driver does that for every failed
//!   `NO_REPLY` request), and a failure while the kernel runs is latched on its stream, for
//!   the next synchronize.
//! * `ModuleLoad` and `RtcCompile` carry the client's current device: a module loads onto
//!   it (an ordinal the worker does not serve is `hipErrorInvalidDevice`), and launches of
//!   its functions on the null stream run on it.

use std::collections::HashMap;

use super::tables::AllocInfo;
use super::{CallCx, Failure, Session};
use crate::backend::{
    self, BackendError, DeviceIndex, FunctionAttribute, FunctionHandle, LaunchConfig, LinkInput, ModuleHandle, RtcOutput, RtcRequest,
};
use proto_core::limits::{MAX_KERNEL_PARAMS, MAX_LIST_ITEMS, MAX_NAME_LEN, MAX_RTC_HEADERS, MAX_RTC_STAGED_BYTES, MAX_TEXT_LEN};
use proto_core::opcode::{ModuleHandler, RtcHandler};
use proto_core::wire::{self, ModuleFormat, ParamDesc};
use proto_core::{Bulk, List, Outcome, Status, StrList};
use zerocopy::byteorder::little_endian::U32;

/// Most live modules one session may hold.
pub const MAX_MODULES_PER_SESSION: usize = 4096;
/// Most function handles one session may hold.
pub const MAX_FUNCTIONS_PER_SESSION: usize = 1 << 16;
/// `hipOccupancyDefault | hipOccupancyDisableCachingOverride`.
const OCCUPANCY_FLAGS: u32 = 0x1;

/// A loaded module of this session.
#[derive(Debug)]
pub(super) struct ModuleEntry {
    handle: ModuleHandle,
    device: DeviceIndex,
    /// Function handles handed out, by kernel name.
    functions: HashMap<String, u64>,
    /// Bases of the globals entered into the allocation table.
    globals: Vec<u64>,
}

impl ModuleEntry {
    pub(super) fn device(&self) -> DeviceIndex {
        self.device
    }

    pub(super) fn handle(&self) -> ModuleHandle {
        self.handle
    }
}

/// A function handle of this session.
#[derive(Debug)]
pub(super) struct FunctionEntry {
    pub(super) handle: FunctionHandle,
    /// The module's session handle.
    pub(super) module: u64,
    /// The module's device: where its launches run.
    pub(super) device: DeviceIndex,
    pub(super) params: Vec<ParamDesc>,
    /// Shortest argument blob covering every parameter.
    pub(super) args_len: u64,
}

/// The latest hiprtc result, which the `RtcCompiled` reply borrows.
#[derive(Debug, Default)]
pub(super) struct RtcReply {
    output: RtcOutput,
    /// The lowered names packed for a [`StrList`].
    lowered: String,
}

fn backend_format(format: ModuleFormat) -> backend::ModuleFormat {
    match format {
        ModuleFormat::Auto => backend::ModuleFormat::Auto,
        ModuleFormat::CodeObject => backend::ModuleFormat::CodeObject,
        ModuleFormat::OffloadBundle => backend::ModuleFormat::OffloadBundle,
        ModuleFormat::Ptx => backend::ModuleFormat::Ptx,
        ModuleFormat::Cubin => backend::ModuleFormat::Cubin,
        ModuleFormat::Fatbin => backend::ModuleFormat::Fatbin,
        ModuleFormat::HostModule => backend::ModuleFormat::HostModule,
    }
}

/// A backend failure with `context` in front of its message.
fn failure_in(context: &str, e: BackendError) -> Failure {
    Failure::new(Status(e.hip_code()), format!("{context}: {e}"))
}

impl Session {
    /// Loads `image` onto `device` as a new module of the session: its handle.
    fn load_module(&mut self, device: u32, format: ModuleFormat, origin: &str, image: &[u8]) -> Result<u64, Failure> {
        self.modules.check_capacity()?;
        let dev = self.device(device)?;
        let origin = match origin {
            "" => "hipModuleLoadData",
            origin => origin,
        };
        let handle = self.backend.module_load(dev, backend_format(format), image).map_err(|e| failure_in(origin, e))?;
        let entry = ModuleEntry { handle, device: dev, functions: HashMap::new(), globals: Vec::new() };
        Ok(self.modules.insert(entry))
    }

    /// Drops a removed module's functions and globals from the session's tables.
    pub(super) fn forget_module(&mut self, entry: &ModuleEntry) {
        for function in entry.functions.values() {
            let _ = self.functions.remove(*function);
        }
        for base in &entry.globals {
            self.allocations.remove(*base);
        }
    }

    pub(super) fn function(&self, function: u64) -> Result<&FunctionEntry, Failure> {
        let entry = self.functions.get(function)?;
        // A function outlives nothing: its module must still be loaded.
        self.modules.get(entry.module)?;
        Ok(entry)
    }

    fn check_occupancy_flags(flags: u32) -> Result<(), Failure> {
        if flags & !OCCUPANCY_FLAGS != 0 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("unknown occupancy flags {flags:#x}")));
        }
        Ok(())
    }
}

impl ModuleHandler for Session {
    fn module_load(&mut self, _cx: &mut CallCx, req: wire::ModuleLoad<'_>) -> Result<wire::ModuleLoaded, Failure> {
        let module = self.load_module(req.device, req.format, req.origin.as_str(), req.image.0)?;
        Ok(wire::ModuleLoaded { module })
    }

    fn module_load_by_hash(&mut self, _cx: &mut CallCx, req: wire::ModuleLoadByHash<'_>) -> Result<wire::ModuleFoundByHash, Failure> {
        const MISS: wire::ModuleFoundByHash = wire::ModuleFoundByHash { found: false, module: 0 };
        let Some(tenant) = self.tenant.as_deref() else { return Ok(MISS) };
        let Some(image) = self.config.content.get(tenant, req.hash.0).filter(|b| b.len() as u64 == req.len) else { return Ok(MISS) };
        let module = self.load_module(req.device, req.format, req.origin.as_str(), &image)?;
        Ok(wire::ModuleFoundByHash { found: true, module })
    }

    fn module_load_keep(&mut self, _cx: &mut CallCx, req: wire::ModuleLoadKeep<'_>) -> Result<wire::ModuleLoaded, Failure> {
        let module = self.load_module(req.device, req.format, req.origin.as_str(), req.image.0)?;
        // Kept only once it loaded, for a tenant, and when it hashes to what the client named.
        if let Some(tenant) = self.tenant.clone() {
            if !self.config.content.put(&tenant, req.hash.0, req.image.0.to_vec()) {
                tracing::debug!(session = self.id, len = req.image.0.len(), "module image not kept (hash mismatch or too large)");
            }
        }
        Ok(wire::ModuleLoaded { module })
    }

    fn module_load_at(&mut self, _cx: &mut CallCx, req: wire::ModuleLoadAt<'_>) -> Result<wire::Empty, Failure> {
        client_chosen(req.module, wire::CLIENT_MODULE_TAG, "module")?;
        if self.modules.get(req.module).is_ok() {
            return Err(Failure::new(Status::INVALID_HANDLE, format!("module {:#x} already exists", req.module)));
        }
        let module = self.load_module(req.device, req.format, req.origin.as_str(), req.image.0)?;
        let entry = self.modules.remove(module)?;
        self.modules.insert_at(req.module, entry);
        Ok(wire::Empty {})
    }

    fn module_get_function_at(&mut self, cx: &mut CallCx, req: wire::FunctionAt<'_>) -> Result<wire::Empty, Failure> {
        client_chosen(req.function, wire::CLIENT_FUNCTION_TAG, "function")?;
        if self.functions.get(req.function).is_ok() {
            return Err(Failure::new(Status::INVALID_HANDLE, format!("function {:#x} already exists", req.function)));
        }
        let name = req.name.as_str();
        // One handle per kernel of a module: a second name for it would outlive the unload.
        if self.modules.get(req.module)?.functions.contains_key(name) {
            return Err(Failure::new(Status::INVALID_VALUE, format!("kernel `{name}` of module {:#x} already has a handle", req.module)));
        }
        // A name the module lacks is no error here: the handle stays unknown, and the client
        // asks for the layout (a waiting lookup, answering `hipErrorNotFound`) before any
        // launch with arguments; a launch without fails as an unknown function.
        let function = match self.module_get_function(cx, wire::SymbolLookup { module: req.module, name: req.name }) {
            Ok(info) => info.function,
            Err(Failure::Status(Status::NOT_FOUND, _)) => return Ok(wire::Empty {}),
            Err(failure) => return Err(failure),
        };
        let entry = self.functions.remove(function)?;
        self.functions.insert_at(req.function, entry);
        self.modules.get_mut(req.module)?.functions.insert(name.to_string(), req.function);
        Ok(wire::Empty {})
    }

    fn module_unload(&mut self, _cx: &mut CallCx, req: wire::ModuleRef) -> Result<wire::Empty, Failure> {
        let entry = self.modules.remove(req.module)?;
        self.forget_module(&entry);
        self.backend.module_unload(entry.handle)?;
        Ok(wire::Empty {})
    }

    fn module_get_function<'a>(&'a mut self, _cx: &mut CallCx, req: wire::SymbolLookup<'_>) -> Result<wire::FunctionInfo<'a>, Failure> {
        let name = req.name.as_str();
        let entry = self.modules.get(req.module)?;
        let function = match entry.functions.get(name) {
            Some(&function) => function,
            None => {
                self.functions.check_capacity()?;
                let (module, device) = (entry.handle, entry.device);
                let found = self.backend.module_function(module, name)?;
                if found.params.len() > MAX_KERNEL_PARAMS {
                    return Err(Failure::new(
                        Status::NOT_SUPPORTED,
                        format!("kernel `{name}` has {} parameters, more than the protocol's {MAX_KERNEL_PARAMS}", found.params.len()),
                    ));
                }
                let params = found.params.iter().map(|p| ParamDesc { offset: U32::new(p.offset), size: U32::new(p.size) }).collect();
                let args_len = found.args_len();
                let function = self.functions.insert(FunctionEntry { handle: found.handle, module: req.module, device, params, args_len });
                self.modules.get_mut(req.module)?.functions.insert(name.to_string(), function);
                function
            }
        };
        let this: &'a Session = self;
        Ok(wire::FunctionInfo { function, params: List(&this.functions.get(function)?.params) })
    }

    fn module_get_global(&mut self, _cx: &mut CallCx, req: wire::SymbolLookup<'_>) -> Result<wire::GlobalInfo, Failure> {
        let entry = self.modules.get(req.module)?;
        let (module, device) = (entry.handle, entry.device);
        let (ptr, size) = self.backend.module_global(module, req.name.as_str())?;
        if self.allocations.get(ptr.0).is_none() {
            self.allocations.insert(ptr.0, AllocInfo { size, device, module: Some(req.module) });
            self.modules.get_mut(req.module)?.globals.push(ptr.0);
        }
        Ok(wire::GlobalInfo { ptr: ptr.0, size })
    }

    fn launch_kernel(&mut self, _cx: &mut CallCx, req: wire::LaunchKernel<'_>) -> Result<wire::Empty, Failure> {
        let function = self.function(req.function)?;
        let args = req.args.0;
        if (args.len() as u64) < function.args_len {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!(
                    "kernel arguments are {} bytes, but the function's {} parameters need {}",
                    args.len(),
                    function.params.len(),
                    function.args_len
                ),
            ));
        }
        let (handle, device) = (function.handle, function.device);
        let config = LaunchConfig { grid: req.grid, block: req.block, shared_mem: req.shared_mem };
        if self.capture_kernel(req.stream, req.function, config, args)? {
            return Ok(wire::Empty {});
        }
        let stream = self.stream(req.stream, device)?;
        self.backend.launch_kernel(stream, handle, config, args)?;
        self.note_launch();
        Ok(wire::Empty {})
    }

    fn module_function_names<'a>(&'a mut self, _cx: &mut CallCx, req: wire::ModuleRef) -> Result<wire::FunctionNames<'a>, Failure> {
        let handle = self.modules.get(req.module)?.handle;
        let names = self.backend.module_function_names(handle)?;
        let mut packed = String::new();
        for name in &names {
            if name.is_empty() || name.len() > MAX_NAME_LEN || name.contains('\0') {
                return Err(Failure::new(Status::UNKNOWN, format!("the module has an unusable kernel name {name:?}")));
            }
            packed.push_str(name);
            packed.push('\0');
        }
        if names.len() > MAX_LIST_ITEMS || packed.len() > MAX_TEXT_LEN {
            return Err(Failure::new(Status::TOO_LARGE, format!("{} kernel names exceed the protocol's limits", names.len())));
        }
        self.function_names = packed;
        let this: &'a Session = self;
        let names = StrList::from_packed(&this.function_names).ok_or_else(|| Failure::new(Status::UNKNOWN, "kernel names could not be packed"))?;
        Ok(wire::FunctionNames { names })
    }

    fn launch_cooperative(&mut self, _cx: &mut CallCx, req: wire::LaunchKernel<'_>) -> Result<wire::Empty, Failure> {
        let function = self.function(req.function)?;
        let args = req.args.0;
        if (args.len() as u64) < function.args_len {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("kernel arguments are {} bytes, but the function's parameters need {}", args.len(), function.args_len),
            ));
        }
        let (handle, device) = (function.handle, function.device);
        let stream = self.stream(req.stream, device)?;
        let config = LaunchConfig { grid: req.grid, block: req.block, shared_mem: req.shared_mem };
        let threads = config.threads_per_block().filter(|&t| t > 0 && t <= u64::from(u32::MAX));
        let Some(threads) = threads.filter(|_| !config.grid.contains(&0)) else {
            return Err(Failure::new(Status::INVALID_CONFIGURATION, format!("grid {:?} / block {:?}", config.grid, config.block)));
        };
        // All blocks must be resident at once: AMD's runtime refuses a larger grid before
        // launching (hip_module.cpp, ihipLaunchCooperativeKernel).
        let capacity = self.backend.cooperative_max_blocks(handle, threads as u32, u64::from(config.shared_mem))?;
        // No resident block at all means the shape itself is wrong (block or shared memory
        // too large): the backend's launch checks answer that, as AMD checks the shape first.
        if capacity > 0 && config.blocks() > u128::from(capacity) {
            return Err(Failure::new(
                Status::COOPERATIVE_LAUNCH_TOO_LARGE,
                format!("cooperative launch of {} blocks; at most {capacity} can be resident at once", config.blocks()),
            ));
        }
        self.backend.launch_cooperative(stream, handle, config, args.to_vec())?;
        Ok(wire::Empty {})
    }

    fn func_get_attributes(&mut self, _cx: &mut CallCx, req: wire::FunctionRef) -> Result<wire::FuncAttributes, Failure> {
        let handle = self.function(req.function)?.handle;
        let a = self.backend.function_attributes(handle)?;
        Ok(wire::FuncAttributes {
            binary_version: a.binary_version,
            cache_mode_ca: a.cache_mode_ca,
            const_size: a.const_size,
            local_size: a.local_size,
            max_dynamic_shared_size: a.max_dynamic_shared_size,
            max_threads_per_block: a.max_threads_per_block,
            num_regs: a.num_regs,
            preferred_shmem_carveout: a.preferred_shmem_carveout,
            ptx_version: a.ptx_version,
            shared_size: a.shared_size,
        })
    }

    fn func_set_attribute(&mut self, _cx: &mut CallCx, req: wire::FuncSetAttribute) -> Result<wire::Empty, Failure> {
        let attribute = FunctionAttribute::from_raw(req.attribute)
            .ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("hipFuncAttribute {} cannot be set", req.attribute)))?;
        let handle = self.function(req.function)?.handle;
        self.backend.function_set_attribute(handle, attribute, req.value)?;
        Ok(wire::Empty {})
    }

    fn occupancy_max_active_blocks(&mut self, _cx: &mut CallCx, req: wire::OccupancyQuery) -> Result<wire::Occupancy, Failure> {
        Self::check_occupancy_flags(req.flags)?;
        let handle = self.function(req.function)?.handle;
        let blocks = self.backend.occupancy_max_active_blocks(handle, req.block_size, req.dynamic_shared)?;
        Ok(wire::Occupancy { blocks })
    }

    fn occupancy_max_potential_block_size(&mut self, _cx: &mut CallCx, req: wire::BlockSizeQuery) -> Result<wire::BlockSize, Failure> {
        Self::check_occupancy_flags(req.flags)?;
        let handle = self.function(req.function)?.handle;
        let (min_grid_size, block_size) = self.backend.occupancy_max_potential_block_size(handle, req.dynamic_shared, req.block_size_limit)?;
        Ok(wire::BlockSize { min_grid_size, block_size })
    }
}

/// A linker or compiler log cut to the wire's text limit, without NUL bytes.
fn wire_log(mut log: String) -> String {
    if log.len() > MAX_TEXT_LEN {
        let mut cut = MAX_TEXT_LEN;
        while !log.is_char_boundary(cut) {
            cut -= 1;
        }
        log.truncate(cut);
    }
    log.replace('\0', "\u{fffd}")
}

impl RtcHandler for Session {
    fn rtc_link<'a>(&'a mut self, _cx: &mut CallCx, req: wire::RtcLink<'_>) -> Result<wire::RtcLinked<'a>, Failure> {
        // The image an earlier link sent is not needed any more.
        self.linked_image_sent = Vec::new();
        let names: Vec<&str> = req.names.iter().collect();
        if names.len() != req.inputs.0.len() {
            return Err(Failure::new(Status::INVALID_VALUE, format!("{} link inputs but {} names", req.inputs.0.len(), names.len())));
        }
        let total: u64 = req.inputs.0.iter().map(|i| u64::from(i.len.get())).sum();
        if total != req.data.0.len() as u64 {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("link inputs declare {total} bytes but the bulk section has {}", req.data.0.len()),
            ));
        }
        let mut inputs = Vec::with_capacity(names.len());
        let mut rest = req.data.0;
        for (input, name) in req.inputs.0.iter().zip(names) {
            let kind = input.kind.get();
            if !backend::jit_input::is_known(kind) {
                return Err(Failure::new(Status::INVALID_VALUE, format!("link input `{name}` has unknown hipJitInputType {kind}")));
            }
            let (data, tail) = rest.split_at(input.len.get() as usize);
            rest = tail;
            inputs.push(LinkInput { kind, name, data });
        }
        let dev = self.device(req.device)?;
        let output = self.backend.rtc_link(dev, &inputs)?;
        if output.code.len() > proto_core::limits::MAX_BULK_LEN {
            return Err(Failure::new(Status::TOO_LARGE, format!("linked image of {} bytes exceeds one bulk section", output.code.len())));
        }
        let image_len = output.code.len() as u64;
        self.linked_image = if output.success { output.code } else { Vec::new() };
        self.link_log = wire_log(output.log);
        let this: &'a Session = self;
        Ok(wire::RtcLinked { success: output.success, log: this.link_log.as_str().into(), image_len })
    }

    fn rtc_linked_image<'a>(&'a mut self, _cx: &mut CallCx, _req: wire::Empty) -> Result<Outcome<wire::LinkedImage<'a>>, Failure> {
        if self.linked_image.is_empty() {
            return Err(Failure::new(Status::INVALID_VALUE, "no linked image is waiting (RtcLink did not succeed, or the image was taken)"));
        }
        self.link_log = String::new();
        let image = std::mem::take(&mut self.linked_image);
        self.linked_image_sent = image;
        let this: &'a Session = self;
        Ok(wire::LinkedImage { image: Bulk(&this.linked_image_sent) }.into())
    }

    fn rtc_compile<'a>(&'a mut self, _cx: &mut CallCx, req: wire::RtcCompile<'_>) -> Result<Outcome<wire::RtcCompiled<'a>>, Failure> {
        let names: Vec<&str> = req.header_names.iter().collect();
        let sources: Vec<&str> = req.header_sources.iter().collect();
        if names.len() != sources.len() {
            return Err(Failure::new(Status::INVALID_VALUE, format!("{} header names but {} header sources", names.len(), sources.len())));
        }
        let request = RtcRequest {
            name: req.name.as_str(),
            source: req.source.as_str(),
            headers: names.into_iter().zip(sources).collect(),
            options: req.options.iter().collect(),
            name_expressions: req.name_expressions.iter().collect(),
        };
        self.compile_program(req.device, &request)
    }

    fn rtc_stage(&mut self, _cx: &mut CallCx, req: wire::RtcStage<'_>) -> Result<wire::Empty, Failure> {
        let part = req.part as usize;
        if part > MAX_RTC_HEADERS {
            return Err(Failure::new(
                Status::INVALID_VALUE,
                format!("staged part {part}: a program has its source (part 0) and at most {MAX_RTC_HEADERS} headers"),
            ));
        }
        let staged: usize = self.rtc_staged.iter().map(Vec::len).sum();
        if staged + req.text.0.len() > MAX_RTC_STAGED_BYTES {
            self.rtc_staged = Vec::new();
            return Err(Failure::new(
                Status::TOO_LARGE,
                format!(
                    "a staged program may hold {MAX_RTC_STAGED_BYTES} bytes of text; this piece would make it {} (the staged text is dropped)",
                    staged + req.text.0.len()
                ),
            ));
        }
        if self.rtc_staged.len() <= part {
            self.rtc_staged.resize_with(part + 1, Vec::new);
        }
        self.rtc_staged[part].extend_from_slice(req.text.0);
        Ok(wire::Empty {})
    }

    fn rtc_compile_staged<'a>(&'a mut self, _cx: &mut CallCx, req: wire::RtcCompileStaged<'_>) -> Result<Outcome<wire::RtcCompiled<'a>>, Failure> {
        // Taken whatever the outcome: the next program starts from nothing.
        let staged = std::mem::take(&mut self.rtc_staged);
        let names: Vec<&str> = req.header_names.iter().collect();
        if staged.len() > names.len() + 1 {
            return Err(Failure::new(Status::INVALID_VALUE, format!("{} header names but {} staged headers", names.len(), staged.len() - 1)));
        }
        let mut texts = Vec::with_capacity(names.len() + 1);
        for i in 0..=names.len() {
            let bytes = staged.get(i).map_or(&[][..], Vec::as_slice);
            let what = if i == 0 { "the source".to_string() } else { format!("header {}", names[i - 1]) };
            texts.push(std::str::from_utf8(bytes).map_err(|e| Failure::new(Status::INVALID_VALUE, format!("staged {what} is not UTF-8: {e}")))?);
        }
        let request = RtcRequest {
            name: req.name.as_str(),
            source: texts[0],
            headers: names.into_iter().zip(texts[1..].iter().copied()).collect(),
            options: req.options.iter().collect(),
            name_expressions: req.name_expressions.iter().collect(),
        };
        self.compile_program(req.device, &request)
    }
}

impl Session {
    /// Compiles `request` for device `device` (through the compile cache) and keeps the reply.
    fn compile_program<'a>(&'a mut self, device: u32, request: &RtcRequest<'_>) -> Result<Outcome<wire::RtcCompiled<'a>>, Failure> {
        let dev = self.device(device)?;
        let arch = self.backend.device_properties(dev).map(|p| p.gcn_arch_name).unwrap_or_default();
        let key = super::rtc_cache::key(self.backend.name(), &arch, request);
        let dir = self.rtc_cache_dir();
        let started = std::time::Instant::now();
        let mut output = match self.config().rtc_cache.get(&key, dir.as_deref()) {
            Some(hit) => {
                tracing::debug!(program = request.name, "hiprtc: compiled program found in the cache");
                hit
            }
            None => {
                let out = self.backend.rtc_compile(dev, request)?;
                tracing::debug!(program = request.name, ms = started.elapsed().as_millis() as u64, success = out.success, "hiprtc: compiled");
                self.config().rtc_cache.put(&key, &out, dir.as_deref());
                out
            }
        };
        // The reply's fields have limits of their own; a backend result beyond them is cut
        // (the log) or refused (names, code) rather than failing to encode.
        if output.log.len() > MAX_TEXT_LEN {
            let mut cut = MAX_TEXT_LEN;
            while !output.log.is_char_boundary(cut) {
                cut -= 1;
            }
            output.log.truncate(cut);
        }
        output.log = output.log.replace('\0', "\u{fffd}");
        let mut lowered = String::new();
        for name in &output.lowered_names {
            if name.is_empty() || name.len() > MAX_NAME_LEN || name.contains('\0') {
                return Err(Failure::new(Status::UNKNOWN, format!("hiprtc produced an unusable lowered name {name:?}")));
            }
            lowered.push_str(name);
            lowered.push('\0');
        }
        if output.lowered_names.len() > MAX_LIST_ITEMS || lowered.len() > MAX_TEXT_LEN {
            return Err(Failure::new(Status::TOO_LARGE, "hiprtc lowered names exceed the protocol's limits"));
        }
        if output.code.len() > proto_core::limits::MAX_BULK_LEN {
            return Err(Failure::new(Status::TOO_LARGE, format!("compiled code of {} bytes exceeds one bulk section", output.code.len())));
        }
        self.rtc_reply = RtcReply { output, lowered };
        let this: &'a Session = self;
        let reply = &this.rtc_reply;
        Ok(wire::RtcCompiled {
            success: reply.output.success,
            log: reply.output.log.as_str().into(),
            lowered_names: StrList::from_packed(&reply.lowered).ok_or_else(|| Failure::new(Status::UNKNOWN, "lowered names could not be packed"))?,
            code: Bulk(&reply.output.code),
        }
        .into())
    }
}

/// Refuses a handle that does not carry `tag` (the client's own range of the table).
fn client_chosen(handle: u64, tag: u64, kind: &str) -> Result<(), Failure> {
    if handle & wire::CLIENT_HANDLE_TAG_MASK != tag || handle == tag {
        return Err(Failure::new(Status::INVALID_HANDLE, format!("{handle:#x} is not a client-chosen {kind} handle")));
    }
    Ok(())
}
