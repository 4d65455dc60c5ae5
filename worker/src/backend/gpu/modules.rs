//! The module and function tables of the GPU backends: which driver module and function each
//! handle names, on which device, with the functions and globals looked up in each module so
//! far. Generic over the driver's handle types (`M` module, `F` function) and what a backend
//! keeps with a module besides (`I`: the hip backend keeps its image).

use crate::backend::{
    BackendError, DeviceIndex, FunctionAttribute, FunctionAttributes, FunctionHandle, HandleMap, KernelFunction, ModuleHandle, ParamLayout,
};
use std::collections::HashMap;

/// A loaded module.
pub(crate) struct ModuleEntry<M, I> {
    /// The driver's module.
    pub(crate) raw: M,
    /// The device it was loaded on.
    pub(crate) device: DeviceIndex,
    /// Functions looked up so far, by name (each name gets one handle).
    functions: HashMap<String, u64>,
    /// Addresses of the globals looked up so far (the backend's globals table holds their
    /// ranges until the module goes).
    globals: Vec<u64>,
    /// What the backend keeps with the module besides (only the hip backend reads it).
    #[cfg_attr(not(feature = "hip"), allow(dead_code))]
    pub(crate) extra: I,
}

impl<M, I> ModuleEntry<M, I> {
    /// Addresses of the globals looked up in this module.
    pub(crate) fn globals(&self) -> &[u64] {
        &self.globals
    }
}

/// A function looked up in a module.
pub(crate) struct FunctionEntry<F> {
    /// The driver's function.
    pub(crate) raw: F,
    /// The module it belongs to (the cuda backend's device logs are per module).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) module: u64,
    /// The device of its module.
    pub(crate) device: DeviceIndex,
    /// Its parameters in declaration order.
    pub(crate) params: Vec<ParamLayout>,
    /// Its attributes, kept current by `hipFuncSetAttribute`.
    pub(crate) attributes: FunctionAttributes,
}

/// Modules and functions by handle.
pub(crate) struct ModuleTables<M, F, I> {
    modules: HandleMap<u64, ModuleEntry<M, I>>,
    functions: HandleMap<u64, FunctionEntry<F>>,
}

impl<M, F, I> Default for ModuleTables<M, F, I> {
    fn default() -> Self {
        Self { modules: HandleMap::default(), functions: HandleMap::default() }
    }
}

fn no_module(module: ModuleHandle) -> BackendError {
    BackendError::InvalidHandle(format!("module {:#x}", module.as_raw()))
}

impl<M, F, I> ModuleTables<M, F, I> {
    /// Records a module loaded as `id`.
    pub(crate) fn insert_module(&mut self, id: u64, raw: M, device: DeviceIndex, extra: I) {
        self.modules.insert(id, ModuleEntry { raw, device, functions: HashMap::new(), globals: Vec::new(), extra });
    }

    /// The module `module` names (`hipErrorInvalidHandle` for none).
    pub(crate) fn module(&self, module: ModuleHandle) -> Result<&ModuleEntry<M, I>, BackendError> {
        self.modules.get(&module.as_raw()).ok_or_else(|| no_module(module))
    }

    /// Takes `module` and its functions out of the tables; the entry says which globals to
    /// forget and what to unload.
    pub(crate) fn remove_module(&mut self, module: ModuleHandle) -> Result<ModuleEntry<M, I>, BackendError> {
        let entry = self.modules.remove(&module.as_raw()).ok_or_else(|| no_module(module))?;
        for f in entry.functions.values() {
            self.functions.remove(f);
        }
        Ok(entry)
    }

    /// The handle of `name` in `module`, if it was looked up before.
    pub(crate) fn function_named(&self, module: ModuleHandle, name: &str) -> Option<u64> {
        self.modules.get(&module.as_raw()).and_then(|m| m.functions.get(name).copied())
    }

    /// The function `function` names (`hipErrorInvalidHandle` for none).
    pub(crate) fn function(&self, function: FunctionHandle) -> Result<&FunctionEntry<F>, BackendError> {
        self.functions.get(&function.as_raw()).ok_or_else(|| BackendError::InvalidHandle(format!("function {:#x}", function.as_raw())))
    }

    /// What a lookup of `function` answers.
    pub(crate) fn kernel_function(&self, function: FunctionHandle) -> Result<KernelFunction, BackendError> {
        let e = self.function(function)?;
        Ok(KernelFunction { handle: function, params: e.params.clone(), attributes: e.attributes })
    }

    /// Records `name` of `module` as function `id` (the module's name table too, while the
    /// module is loaded); answers what the lookup answers.
    pub(crate) fn insert_function(&mut self, module: ModuleHandle, name: &str, id: u64, entry: FunctionEntry<F>) -> KernelFunction {
        let found = KernelFunction { handle: FunctionHandle::from_raw(id), params: entry.params.clone(), attributes: entry.attributes };
        self.functions.insert(id, entry);
        if let Some(m) = self.modules.get_mut(&module.as_raw()) {
            m.functions.insert(name.to_string(), id);
        }
        found
    }

    /// Keeps the cached attributes of `function` in step with a value the driver accepted.
    pub(crate) fn set_attribute(&mut self, function: FunctionHandle, attribute: FunctionAttribute, value: i32) {
        if let Some(e) = self.functions.get_mut(&function.as_raw()) {
            match attribute {
                FunctionAttribute::MaxDynamicSharedSize => e.attributes.max_dynamic_shared_size = value,
                FunctionAttribute::PreferredSharedCarveout => e.attributes.preferred_shmem_carveout = value,
            }
        }
    }

    /// Records a global of `module` at `ptr`, while the module is loaded.
    pub(crate) fn add_global(&mut self, module: ModuleHandle, ptr: u64) {
        if let Some(m) = self.modules.get_mut(&module.as_raw()) {
            m.globals.push(ptr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(module: u64) -> FunctionEntry<u32> {
        FunctionEntry { raw: 7, module, device: 0, params: vec![ParamLayout { offset: 0, size: 8 }], attributes: FunctionAttributes::default() }
    }

    #[test]
    fn unloading_a_module_forgets_its_functions_and_names_its_globals() {
        let mut t: ModuleTables<u32, u32, ()> = ModuleTables::default();
        let (m, other) = (ModuleHandle::from_raw(1), ModuleHandle::from_raw(2));
        t.insert_module(1, 10, 0, ());
        t.insert_module(2, 20, 1, ());
        let found = t.insert_function(m, "k", 3, entry(1));
        assert_eq!(found.handle, FunctionHandle::from_raw(3));
        t.insert_function(other, "k", 4, entry(2));
        t.add_global(m, 0x1000);
        assert_eq!(t.function_named(m, "k"), Some(3));
        assert_eq!(t.function_named(other, "k"), Some(4));
        t.set_attribute(FunctionHandle::from_raw(3), FunctionAttribute::MaxDynamicSharedSize, 4096);
        assert_eq!(t.kernel_function(FunctionHandle::from_raw(3)).unwrap().attributes.max_dynamic_shared_size, 4096);

        let gone = t.remove_module(m).unwrap();
        assert_eq!((gone.raw, gone.globals()), (10, &[0x1000][..]));
        assert_eq!(t.function(FunctionHandle::from_raw(3)).err().map(|e| e.hip_code()), Some(crate::backend::hip_code::INVALID_HANDLE));
        assert!(t.function(FunctionHandle::from_raw(4)).is_ok(), "another module's function stays");
        assert_eq!(t.module(m).err().map(|e| e.message().to_string()), Some("module 0x1".into()));
        assert!(t.remove_module(m).is_err(), "unloaded once");
        // A lookup finishing after its module was unloaded leaves no name behind.
        t.insert_function(m, "late", 5, entry(1));
        assert_eq!(t.function_named(m, "late"), None);
    }
}
