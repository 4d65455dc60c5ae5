//! Modules, functions and launches on HIP: images loaded with `hipModuleLoadData` as they
//! come (the runtime picks the code object for its device out of an offload bundle itself);
//! parameter layouts from the runtime when it reports them (`hipRemoteFunctionParamLayout`,
//! hip-remote's own library), else from the code object's metadata ([`super::layout`]);
//! launches pass the client's packed blob through `hipModuleLaunchKernel`'s `extra`
//! (`HIP_LAUNCH_PARAM_BUFFER_POINTER`), exactly as packed.

use super::api::{Function, Module};
use super::result::Bounded;
use super::{layout, lock, HipBackend, Raw};
use crate::backend::gpu::modules::{self, FunctionEntry};
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, FunctionAttribute, FunctionAttributes, FunctionHandle, KernelFunction, LaunchConfig, ModuleBackend,
    ModuleFormat, ModuleHandle, ParamLayout, StreamHandle,
};
use std::ffi::{c_int, CString};
use std::sync::Arc;

/// Most parameters read from one kernel (the protocol's limit).
const MAX_PARAMS: usize = proto_core::limits::MAX_KERNEL_PARAMS;

/// `hipFunction_attribute` values (the same numbers as CUDA's).
mod attr {
    pub const MAX_THREADS_PER_BLOCK: i32 = 0;
    pub const SHARED_SIZE_BYTES: i32 = 1;
    pub const CONST_SIZE_BYTES: i32 = 2;
    pub const LOCAL_SIZE_BYTES: i32 = 3;
    pub const NUM_REGS: i32 = 4;
    pub const PTX_VERSION: i32 = 5;
    pub const BINARY_VERSION: i32 = 6;
    pub const CACHE_MODE_CA: i32 = 7;
    pub const MAX_DYNAMIC_SHARED_SIZE_BYTES: i32 = 8;
    pub const PREFERRED_SHARED_MEMORY_CARVEOUT: i32 = 9;
}

/// The backend's modules and functions; each module keeps its image (layouts come from
/// its metadata where the runtime does not report them, and kernel names from loading it as
/// a library).
pub(super) type ModuleTables = modules::ModuleTables<Raw<Module>, Raw<Function>, Arc<[u8]>>;

impl HipBackend {
    fn func_attr(&self, f: Function, attribute: i32) -> Result<i32, BackendError> {
        Ok(self.api.func_get_attribute(f, attribute)?)
    }

    fn attributes(&self, f: Function) -> Result<FunctionAttributes, BackendError> {
        Ok(FunctionAttributes {
            binary_version: self.func_attr(f, attr::BINARY_VERSION)?,
            ptx_version: self.func_attr(f, attr::PTX_VERSION)?,
            cache_mode_ca: self.func_attr(f, attr::CACHE_MODE_CA)?,
            const_size: self.func_attr(f, attr::CONST_SIZE_BYTES)? as u64,
            local_size: self.func_attr(f, attr::LOCAL_SIZE_BYTES)? as u64,
            max_dynamic_shared_size: self.func_attr(f, attr::MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
            max_threads_per_block: self.func_attr(f, attr::MAX_THREADS_PER_BLOCK)?,
            num_regs: self.func_attr(f, attr::NUM_REGS)?,
            preferred_shmem_carveout: self.func_attr(f, attr::PREFERRED_SHARED_MEMORY_CARVEOUT).unwrap_or(-1),
            shared_size: self.func_attr(f, attr::SHARED_SIZE_BYTES)? as u64,
        })
    }

    /// The kernel's parameters: from the runtime when it reports them, else from the image.
    fn param_layout(&self, f: Function, image: Option<&[u8]>, name: &str, arch: &str) -> Result<Vec<ParamLayout>, BackendError> {
        let Some(reported) = self.api.remote_function_param_layout(f, MAX_PARAMS) else {
            return layout::kernel_params(image.unwrap_or_default(), name, arch);
        };
        match reported? {
            Bounded::Within(params) => Ok(params.into_iter().map(|(offset, size)| ParamLayout { offset, size }).collect()),
            Bounded::TooMany(count) => Err(BackendError::InvalidImage(format!("kernel '{name}' has {count} parameters (limit {MAX_PARAMS})"))),
        }
    }

    pub(super) fn function_entry<R>(&self, function: FunctionHandle, f: impl FnOnce(&FunctionEntry<Raw<Function>>) -> R) -> Result<R, BackendError> {
        Ok(f(lock(&self.modules).function(function)?))
    }
}

impl ModuleBackend for HipBackend {
    /// NVIDIA images are refused here; anything else goes to `hipModuleLoadData`, which
    /// judges it (AMD's runtime: code objects and offload bundles, compressed ones too).
    fn module_load(&self, dev: DeviceIndex, format: ModuleFormat, image: &[u8]) -> Result<ModuleHandle, BackendError> {
        if matches!(format, ModuleFormat::Ptx | ModuleFormat::Cubin | ModuleFormat::Fatbin) {
            return Err(BackendError::NoBinaryForGpu(format!(
                "a {} image cannot run on this AMD device ({}); send an AMD code object or offload bundle",
                format.name(),
                self.device(dev)?.gcn_arch_name
            )));
        }
        self.enter(dev)?;
        let raw = self.api.module_load_data(image)?;
        let image = Arc::from(image);
        let id = self.handle();
        lock(&self.modules).insert_module(id, Raw(raw), dev, image);
        Ok(ModuleHandle::from_raw(id))
    }

    fn module_unload(&self, module: ModuleHandle) -> Result<(), BackendError> {
        let entry = lock(&self.modules).remove_module(module)?;
        {
            let mut globals = lock(&self.globals);
            for g in entry.globals() {
                globals.remove(g);
            }
        }
        self.enter(entry.device)?;
        // Launches already queued must finish before their code goes away.
        self.api.device_synchronize()?;
        // Removed from the tables; unloaded once.
        Ok(self.api.module_unload(entry.raw.0)?)
    }

    fn module_function(&self, module: ModuleHandle, name: &str) -> Result<KernelFunction, BackendError> {
        let (raw, device, known, image) = {
            let t = lock(&self.modules);
            let m = t.module(module)?;
            (m.raw, m.device, t.function_named(module, name), m.extra.clone())
        };
        if let Some(id) = known {
            return lock(&self.modules).kernel_function(FunctionHandle::from_raw(id));
        }
        self.enter(device)?;
        let cname = CString::new(name).map_err(|_| BackendError::InvalidValue("NUL in kernel name".into()))?;
        let f = self.api.module_get_function(raw.0, &cname).map_err(|e| match BackendError::from(e) {
            BackendError::NotFound(m) => BackendError::NotFound(format!("kernel '{name}': {m}")),
            other => other,
        })?;
        let arch = self.device(device)?.gcn_arch_name.clone();
        let params = self.param_layout(f, Some(&image), name, &arch)?;
        let attributes = self.attributes(f)?;
        let id = self.handle();
        let entry = FunctionEntry { raw: Raw(f), module: module.as_raw(), device, params, attributes };
        Ok(lock(&self.modules).insert_function(module, name, id, entry))
    }

    fn module_global(&self, module: ModuleHandle, name: &str) -> Result<(DevicePtr, u64), BackendError> {
        let (raw, device) = lock(&self.modules).module(module).map(|m| (m.raw, m.device))?;
        self.enter(device)?;
        let cname = CString::new(name).map_err(|_| BackendError::InvalidValue("NUL in symbol name".into()))?;
        let (ptr, size) = self.api.module_get_global(raw.0, &cname)?;
        lock(&self.globals).insert(ptr, (size as u64, device));
        lock(&self.modules).add_global(module, ptr);
        Ok((DevicePtr(ptr), size as u64))
    }

    fn function_attributes(&self, function: FunctionHandle) -> Result<FunctionAttributes, BackendError> {
        self.function_entry(function, |e| e.attributes)
    }

    /// `hipFuncSetAttribute` with the `hipFunction_t` (the runtime validates the value), then
    /// the cached attributes follow.
    fn function_set_attribute(&self, function: FunctionHandle, attribute: FunctionAttribute, value: i32) -> Result<(), BackendError> {
        let (f, device) = self.function_entry(function, |e| (e.raw, e.device))?;
        self.enter(device)?;
        let number = match attribute {
            FunctionAttribute::MaxDynamicSharedSize => attr::MAX_DYNAMIC_SHARED_SIZE_BYTES,
            FunctionAttribute::PreferredSharedCarveout => attr::PREFERRED_SHARED_MEMORY_CARVEOUT,
        };
        self.api.func_set_attribute(f.0, number, value)?;
        lock(&self.modules).set_attribute(function, attribute, value);
        Ok(())
    }

    fn launch_kernel(&self, stream: Option<StreamHandle>, function: FunctionHandle, config: LaunchConfig, args: &[u8]) -> Result<(), BackendError> {
        let (f, device, needed) = self.function_entry(function, |e| (e.raw, e.device, crate::backend::args_len(&e.params)))?;
        if (args.len() as u64) < needed {
            return Err(BackendError::InvalidValue(format!("kernel arguments are {} bytes; the kernel's parameters need {needed}", args.len())));
        }
        if config.grid.contains(&0) || config.block.contains(&0) {
            return Err(BackendError::InvalidConfiguration(format!("grid {:?} / block {:?} has a zero dimension", config.grid, config.block)));
        }
        let (s, _) = self.work_stream(stream, device)?;
        let launched = self.api.module_launch_kernel(f.0, &config, s, args).map_err(BackendError::from);
        if launched.is_ok() && self.launch_watch.enabled() {
            self.watch_launch(s, device);
        }
        launched
    }

    /// HIP has no enumeration of a module's functions: the image is loaded once more as a
    /// library (`hipLibraryLoadData`, ROCm 7), whose kernels are enumerated and named.
    fn module_function_names(&self, module: ModuleHandle) -> Result<Vec<String>, BackendError> {
        let (device, image) = lock(&self.modules).module(module).map(|m| (m.device, Arc::clone(&m.extra)))?;
        let api = &self.api;
        let has_library = api.hipLibraryLoadData.is_some()
            && api.hipLibraryUnload.is_some()
            && api.hipLibraryGetKernelCount.is_some()
            && api.hipLibraryEnumerateKernels.is_some()
            && api.hipKernelGetName.is_some();
        if !has_library {
            return Err(BackendError::NotSupported("the HIP runtime has no hipLibrary* functions (ROCm 7 has them)".into()));
        }
        self.enter(device)?;
        match api.library_kernel_names(&image, proto_core::limits::MAX_LIST_ITEMS)? {
            Bounded::TooMany(n) => Err(BackendError::NotSupported(format!("{n} kernels in one module"))),
            Bounded::Within(names) => {
                names.into_iter().map(|name| name.ok_or_else(|| BackendError::Unknown("hipKernelGetName gave no name".into()))).collect()
            }
        }
    }

    fn launch_cooperative(
        &self,
        stream: Option<StreamHandle>,
        function: FunctionHandle,
        config: LaunchConfig,
        mut args: Vec<u8>,
    ) -> Result<(), BackendError> {
        if self.api.hipModuleLaunchCooperativeKernel.is_none() {
            return Err(BackendError::NotSupported("the HIP runtime has no hipModuleLaunchCooperativeKernel".into()));
        }
        let (f, device, params) = self.function_entry(function, |e| (e.raw, e.device, e.params.clone()))?;
        if (args.len() as u64) < crate::backend::args_len(&params) {
            return Err(BackendError::InvalidValue(format!("kernel arguments are {} bytes; the kernel's parameters need more", args.len())));
        }
        let (s, _) = self.work_stream(stream, device)?;
        // The cooperative entry point takes kernelParams only: one pointer per parameter,
        // into the packed blob.
        Ok(self.api.module_launch_cooperative_kernel(f.0, &config, s, &mut args, &params)?)
    }

    fn cooperative_max_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u64, BackendError> {
        let device = self.function_entry(function, |e| e.device)?;
        let per_mp = self.occupancy_max_active_blocks(function, block_size, dynamic_shared)?;
        Ok(u64::from(per_mp) * self.device(device)?.multi_processor_count.max(0) as u64)
    }

    fn occupancy_max_active_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u32, BackendError> {
        let (f, device) = self.function_entry(function, |e| (e.raw, e.device))?;
        self.enter(device)?;
        let block = c_int::try_from(block_size).map_err(|_| BackendError::InvalidValue(format!("block size {block_size}")))?;
        let n = self.api.occupancy_max_active_blocks(f.0, block, dynamic_shared as usize)?;
        Ok(n.max(0) as u32)
    }

    fn occupancy_max_potential_block_size(&self, function: FunctionHandle, dynamic_shared: u64, limit: u32) -> Result<(u32, u32), BackendError> {
        let (f, device) = self.function_entry(function, |e| (e.raw, e.device))?;
        self.enter(device)?;
        let limit = c_int::try_from(limit).unwrap_or(c_int::MAX);
        let (grid, block) = self.api.occupancy_max_potential_block_size(f.0, dynamic_shared as usize, limit)?;
        Ok((grid.max(0) as u32, block.max(0) as u32))
    }
}
