//! Modules, functions and launches on the CUDA backend: PTX, cubin and fatbin images loaded
//! with `cuModuleLoadData`; parameter layouts from `cuFuncGetParamInfo`, looped until it
//! fails (driver 580 has no `cuFuncGetParamCount`); launches pass the client's packed blob
//! through `cuLaunchKernel`'s `extra` (`CU_LAUNCH_PARAM_BUFFER_POINTER`), exactly as packed.

use super::{lock, read, result, write, CudaBackend, Raw};
use crate::backend::gpu::modules::{self, FunctionEntry};
use crate::backend::{
    BackendError, DeviceIndex, DevicePtr, FunctionAttribute, FunctionAttributes, FunctionHandle, KernelFunction, LaunchConfig, ModuleBackend,
    ModuleFormat, ModuleHandle, ParamLayout, StreamHandle,
};
use cudarc::driver::sys::{CUfunction, CUfunction_attribute as FA, CUmodule};
use std::ffi::CString;

/// Most parameters read from one kernel (the protocol's limit).
const MAX_PARAMS: usize = proto_core::limits::MAX_KERNEL_PARAMS;

/// The backend's modules and functions (no more kept with a module).
pub(super) type ModuleTables = modules::ModuleTables<Raw<CUmodule>, Raw<CUfunction>, ()>;

fn func_attr(f: CUfunction, a: FA) -> Result<i32, BackendError> {
    Ok(result::func::attribute(f, a)?)
}

fn attributes(f: CUfunction) -> Result<FunctionAttributes, BackendError> {
    Ok(FunctionAttributes {
        binary_version: func_attr(f, FA::CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
        ptx_version: func_attr(f, FA::CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
        cache_mode_ca: func_attr(f, FA::CU_FUNC_ATTRIBUTE_CACHE_MODE_CA)?,
        const_size: func_attr(f, FA::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)? as u64,
        local_size: func_attr(f, FA::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)? as u64,
        max_dynamic_shared_size: func_attr(f, FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
        max_threads_per_block: func_attr(f, FA::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        num_regs: func_attr(f, FA::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        preferred_shmem_carveout: func_attr(f, FA::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT).unwrap_or(-1),
        shared_size: func_attr(f, FA::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)? as u64,
    })
}

/// The kernel's parameters in declaration order.
fn param_layout(f: CUfunction) -> Vec<ParamLayout> {
    let mut params = Vec::new();
    for index in 0..MAX_PARAMS {
        // An index past the last parameter is CUDA_ERROR_INVALID_VALUE, which ends the loop.
        let Ok((offset, size)) = result::func::param_info(f, index) else { break };
        params.push(ParamLayout { offset: offset as u32, size: size as u32 });
    }
    params
}

impl CudaBackend {
    /// HIP has no opt-in for dynamic shared memory: a launch may use up to
    /// `sharedMemPerBlock` (reported as the device's opt-in maximum, `props.rs`) with no
    /// `hipFuncSetAttribute`, and code written for AMD GPUs never asks. CUDA refuses more than
    /// the function's `MAX_DYNAMIC_SHARED_SIZE_BYTES` (48 KiB until raised), so a launch asking
    /// for more raises it first, once per function and size. Above what the device allows the
    /// driver refuses, and the launch fails with `hipErrorOutOfMemory`, as ROCm's does.
    /// Occupancy queries raise it too, so they describe the launch that would follow.
    pub(super) fn allow_dynamic_shared(&self, function: FunctionHandle, dynamic_shared: u64) -> Result<(), BackendError> {
        let (f, device, allowed) = self.function_entry(function, |e| (e.raw, e.device, e.attributes.max_dynamic_shared_size))?;
        let too_much = |why: String| {
            BackendError::OutOfMemory(format!("{dynamic_shared} bytes of dynamic shared memory are more than this kernel may use on the device{why}"))
        };
        let wanted = i32::try_from(dynamic_shared).map_err(|_| too_much(String::new()))?;
        if wanted <= allowed {
            return Ok(());
        }
        self.enter(device)?;
        result::func::set_attribute(f.0, FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, wanted).map_err(|e| too_much(format!(" ({e})")))?;
        write(&self.modules).set_attribute(function, FunctionAttribute::MaxDynamicSharedSize, wanted);
        Ok(())
    }

    pub(super) fn function_entry<R>(
        &self,
        function: FunctionHandle,
        f: impl FnOnce(&FunctionEntry<Raw<CUfunction>>) -> R,
    ) -> Result<R, BackendError> {
        Ok(f(read(&self.modules).function(function)?))
    }
}

impl ModuleBackend for CudaBackend {
    fn module_load(&self, dev: DeviceIndex, format: ModuleFormat, image: &[u8]) -> Result<ModuleHandle, BackendError> {
        match format {
            ModuleFormat::Auto | ModuleFormat::Ptx | ModuleFormat::Cubin | ModuleFormat::Fatbin => {}
            other => {
                return Err(BackendError::NoBinaryForGpu(format!(
                    "a {other:?} image cannot run on this NVIDIA device ({}); send PTX, cubin or an NVIDIA fatbin",
                    self.device(dev)?.props.gcn_arch_name
                )))
            }
        }
        self.enter(dev)?;
        // PTX must be NUL-terminated for cuModuleLoadData.
        let owned;
        let image = if format == ModuleFormat::Ptx && image.last() != Some(&0) {
            owned = [image, &[0]].concat();
            &owned[..]
        } else {
            image
        };
        let raw = result::module::load_data(image)?;
        let id = self.handle();
        write(&self.modules).insert_module(id, Raw(raw), dev, ());
        self.open_device_log(id, raw, dev);
        Ok(ModuleHandle::from_raw(id))
    }

    fn module_unload(&self, module: ModuleHandle) -> Result<(), BackendError> {
        let entry = write(&self.modules).remove_module(module)?;
        {
            let mut globals = lock(&self.globals);
            for g in entry.globals() {
                globals.remove(g);
            }
        }
        if let Err(e) = self.enter(entry.device) {
            lock(&self.logs).remove_module(module.as_raw(), None);
            return Err(e);
        }
        // Launches already queued must finish before their code goes away.
        let synced = result::ctx::synchronize();
        // What its kernels printed since the last read goes to the stream of their latest
        // launch (a failed assert is latched there).
        let mut memory = super::device_log::CudaLogMemory(self);
        let left =
            lock(&self.logs).remove_module(module.as_raw(), synced.is_ok().then_some(&mut memory as &mut dyn crate::backend::device_log::LogMemory));
        if let Some(delivery) = left {
            self.deliver(delivery);
        }
        synced?;
        self.enter(entry.device)?;
        // Removed from the tables; unloaded once.
        Ok(result::module::unload(entry.raw.0)?)
    }

    fn module_function(&self, module: ModuleHandle, name: &str) -> Result<KernelFunction, BackendError> {
        let (raw, device, known) = {
            let t = read(&self.modules);
            let m = t.module(module)?;
            (m.raw, m.device, t.function_named(module, name))
        };
        if let Some(id) = known {
            return read(&self.modules).kernel_function(FunctionHandle::from_raw(id));
        }
        self.enter(device)?;
        let cname = CString::new(name).map_err(|_| BackendError::InvalidValue("NUL in kernel name".into()))?;
        let f = result::module::function(raw.0, &cname).map_err(|e| match BackendError::from(e) {
            BackendError::NotFound(m) => BackendError::NotFound(format!("kernel '{name}': {m}")),
            other => other,
        })?;
        let params = param_layout(f);
        let attrs = attributes(f)?;
        let id = self.handle();
        let entry = FunctionEntry { raw: Raw(f), module: module.as_raw(), device, params, attributes: attrs };
        Ok(write(&self.modules).insert_function(module, name, id, entry))
    }

    fn module_global(&self, module: ModuleHandle, name: &str) -> Result<(DevicePtr, u64), BackendError> {
        let (raw, device) = read(&self.modules).module(module).map(|m| (m.raw, m.device))?;
        self.enter(device)?;
        let cname = CString::new(name).map_err(|_| BackendError::InvalidValue("NUL in symbol name".into()))?;
        let (ptr, size) = result::module::global(raw.0, &cname)?;
        lock(&self.globals).insert(ptr, (size as u64, device));
        write(&self.modules).add_global(module, ptr);
        Ok((DevicePtr(ptr), size as u64))
    }

    fn function_attributes(&self, function: FunctionHandle) -> Result<FunctionAttributes, BackendError> {
        self.function_entry(function, |e| e.attributes)
    }

    /// `cuFuncSetAttribute`, then the cached attributes follow (the driver validates the value:
    /// `CUDA_ERROR_INVALID_VALUE` above the opt-in limit or outside -1..=100).
    fn function_set_attribute(&self, function: FunctionHandle, attribute: FunctionAttribute, value: i32) -> Result<(), BackendError> {
        let (f, device) = self.function_entry(function, |e| (e.raw, e.device))?;
        self.enter(device)?;
        let attrib = match attribute {
            FunctionAttribute::MaxDynamicSharedSize => FA::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            FunctionAttribute::PreferredSharedCarveout => FA::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
        };
        result::func::set_attribute(f.0, attrib, value)?;
        write(&self.modules).set_attribute(function, attribute, value);
        Ok(())
    }

    fn launch_kernel(&self, stream: Option<StreamHandle>, function: FunctionHandle, config: LaunchConfig, args: &[u8]) -> Result<(), BackendError> {
        let (f, module, device, needed) = self.function_entry(function, |e| (e.raw, e.module, e.device, crate::backend::args_len(&e.params)))?;
        if (args.len() as u64) < needed {
            return Err(BackendError::InvalidValue(format!("kernel arguments are {} bytes; the kernel's parameters need {needed}", args.len())));
        }
        if config.grid.contains(&0) || config.block.contains(&0) {
            return Err(BackendError::InvalidConfiguration(format!("grid {:?} / block {:?} has a zero dimension", config.grid, config.block)));
        }
        let s = self.work_stream(stream, device)?;
        self.allow_dynamic_shared(function, u64::from(config.shared_mem))?;
        let launched = self.launch_logged(module, stream, || Ok(result::launch::kernel(f.0, &config, s, args)?));
        if launched.is_ok() && self.launch_watch.enabled() {
            self.watch_launch(s, device);
        }
        launched
    }

    /// `cuModuleGetFunctionCount` / `cuModuleEnumerateFunctions` (CUDA 12.4) and
    /// `cuFuncGetName` (12.3).
    fn module_function_names(&self, module: ModuleHandle) -> Result<Vec<String>, BackendError> {
        let (raw, device) = read(&self.modules).module(module).map(|m| (m.raw, m.device))?;
        self.enter(device)?;
        let n = result::module::function_count(raw.0)?;
        if n as usize > proto_core::limits::MAX_LIST_ITEMS {
            return Err(BackendError::NotSupported(format!("{n} kernels in one module")));
        }
        result::module::functions(raw.0, n)?
            .into_iter()
            .map(|f| result::func::name(f)?.ok_or_else(|| BackendError::Unknown("cuFuncGetName gave no name".into())))
            .collect()
    }

    fn launch_cooperative(
        &self,
        stream: Option<StreamHandle>,
        function: FunctionHandle,
        config: LaunchConfig,
        mut args: Vec<u8>,
    ) -> Result<(), BackendError> {
        let (f, module, device, params) = self.function_entry(function, |e| (e.raw, e.module, e.device, e.params.clone()))?;
        if (args.len() as u64) < crate::backend::args_len(&params) {
            return Err(BackendError::InvalidValue(format!("kernel arguments are {} bytes; the kernel's parameters need more", args.len())));
        }
        if config.grid.contains(&0) || config.block.contains(&0) {
            return Err(BackendError::InvalidConfiguration(format!("grid {:?} / block {:?} has a zero dimension", config.grid, config.block)));
        }
        let s = self.work_stream(stream, device)?;
        self.allow_dynamic_shared(function, u64::from(config.shared_mem))?;
        // cuLaunchCooperativeKernel takes kernelParams only: one pointer per parameter, into
        // the packed blob.
        self.launch_logged(module, stream, || Ok(result::launch::cooperative(f.0, &config, s, &mut args, &params)?))
    }

    fn cooperative_max_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u64, BackendError> {
        let device = self.function_entry(function, |e| e.device)?;
        let per_mp = self.occupancy_max_active_blocks(function, block_size, dynamic_shared)?;
        Ok(u64::from(per_mp) * self.device(device)?.props.multi_processor_count.max(0) as u64)
    }

    fn occupancy_max_active_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u32, BackendError> {
        // More than the device allows: the calculator answers 0 blocks, as for any other limit.
        let _ = self.allow_dynamic_shared(function, dynamic_shared);
        let (f, device) = self.function_entry(function, |e| (e.raw, e.device))?;
        self.enter(device)?;
        let n = result::occupancy::max_active_blocks(f.0, block_size as i32, dynamic_shared as usize)?;
        Ok(n.max(0) as u32)
    }

    fn occupancy_max_potential_block_size(&self, function: FunctionHandle, dynamic_shared: u64, limit: u32) -> Result<(u32, u32), BackendError> {
        let _ = self.allow_dynamic_shared(function, dynamic_shared);
        let (f, device) = self.function_entry(function, |e| (e.raw, e.device))?;
        self.enter(device)?;
        let (grid, block) = result::occupancy::max_potential_block_size(f.0, dynamic_shared as usize, limit as i32)?;
        Ok((grid.max(0) as u32, block.max(0) as u32))
    }
}
