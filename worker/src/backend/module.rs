//! Modules and kernels: loading images, looking up kernels and globals, launching.

use super::{BackendError, DeviceIndex, DevicePtr, FunctionHandle, ModuleHandle, StreamHandle};

/// What a module image contains (the wire's `ModuleFormat`, without a dependency on it).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ModuleFormat {
    /// Detect from the image's magic.
    Auto,
    /// An AMD code object (ELF for amdgcn).
    CodeObject,
    /// A clang offload bundle / HIP fat binary.
    OffloadBundle,
    /// NVIDIA PTX text.
    Ptx,
    /// NVIDIA cubin.
    Cubin,
    /// NVIDIA fatbin.
    Fatbin,
    /// A hip-remote host module: an ELF shared object for the worker's CPU exporting
    /// `hip_remote_host_module_v1` (`worker/include/hip_remote/host_module.h`).
    HostModule,
}

impl ModuleFormat {
    /// Name for error messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto-detected",
            Self::CodeObject => "AMD code object",
            Self::OffloadBundle => "offload bundle",
            Self::Ptx => "PTX",
            Self::Cubin => "cubin",
            Self::Fatbin => "fatbin",
            Self::HostModule => "host module",
        }
    }
}

/// Where one kernel parameter lives in the packed argument blob.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// Byte offset in the blob.
    pub offset: u32,
    /// Size in bytes.
    pub size: u32,
}

/// `hipFuncAttributes`, as a backend knows them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub struct FunctionAttributes {
    /// `binaryVersion` (major·10 + minor of the target).
    pub binary_version: i32,
    /// `ptxVersion`.
    pub ptx_version: i32,
    /// `cacheModeCA`.
    pub cache_mode_ca: i32,
    /// `constSizeBytes`.
    pub const_size: u64,
    /// `localSizeBytes`, per thread.
    pub local_size: u64,
    /// `maxDynamicSharedSizeBytes`.
    pub max_dynamic_shared_size: i32,
    /// `maxThreadsPerBlock`.
    pub max_threads_per_block: i32,
    /// `numRegs`.
    pub num_regs: i32,
    /// `preferredShmemCarveout` (-1: no preference).
    pub preferred_shmem_carveout: i32,
    /// `sharedSizeBytes` (static shared memory).
    pub shared_size: u64,
}

/// A kernel found by [`ModuleBackend::module_function`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFunction {
    /// Handle for launches and queries.
    pub handle: FunctionHandle,
    /// Parameters in declaration order.
    pub params: Vec<ParamLayout>,
    /// Its attributes.
    pub attributes: FunctionAttributes,
}

impl KernelFunction {
    /// Bytes the packed argument blob must at least have: the end of the last parameter.
    pub fn args_len(&self) -> u64 {
        args_len(&self.params)
    }
}

/// The end of the parameter reaching furthest, i.e. the shortest blob covering them all.
pub fn args_len(params: &[ParamLayout]) -> u64 {
    params.iter().map(|p| u64::from(p.offset) + u64::from(p.size)).max().unwrap_or(0)
}

/// Grid and block shape of a launch (`hipModuleLaunchKernel`'s numbers).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, bytes.
    pub shared_mem: u32,
}

impl LaunchConfig {
    /// Threads per block, or `None` on overflow.
    pub fn threads_per_block(&self) -> Option<u64> {
        self.block.iter().try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
    }

    /// Blocks in the grid (at most 2⁹⁶, so saturating into `u128` is exact).
    pub fn blocks(&self) -> u128 {
        self.grid.iter().map(|&d| u128::from(d)).product()
    }
}

/// A `hipFuncSetAttribute` attribute (`hipFuncAttribute`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum FunctionAttribute {
    /// `hipFuncAttributeMaxDynamicSharedMemorySize`: the most dynamic shared memory a launch
    /// may ask for, bytes.
    MaxDynamicSharedSize,
    /// `hipFuncAttributePreferredSharedMemoryCarveout`: percent of L1 preferred as shared
    /// memory, -1 for no preference.
    PreferredSharedCarveout,
}

impl FunctionAttribute {
    /// The attribute for a `hipFuncAttribute` number, `None` for the others.
    pub fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            8 => Some(Self::MaxDynamicSharedSize),
            9 => Some(Self::PreferredSharedCarveout),
            _ => None,
        }
    }
}

/// The module family: module images, kernels, globals, function attributes, launches and
/// occupancy.
pub trait ModuleBackend {
    /// Loads a module image onto `dev`. An image for another architecture is
    /// `NoBinaryForGpu`, one that is not an image of its format `InvalidImage`; both name
    /// the format and this backend's architecture.
    fn module_load(&self, dev: DeviceIndex, format: ModuleFormat, image: &[u8]) -> Result<ModuleHandle, BackendError>;

    /// Unloads `module`: its functions become invalid and its globals unmapped at once;
    /// launches already queued still run, with the module kept alive until they are done.
    fn module_unload(&self, module: ModuleHandle) -> Result<(), BackendError>;

    /// The kernel `name` of `module`, with its parameter layout and attributes; the same
    /// handle every time for the same kernel. Unknown names are `NotFound`.
    fn module_function(&self, module: ModuleHandle, name: &str) -> Result<KernelFunction, BackendError>;

    /// Address and size of the global `name` of `module` (`hipModuleGetGlobal`). The range
    /// is device memory for copies until the module is unloaded, but never freeable.
    fn module_global(&self, module: ModuleHandle, name: &str) -> Result<(DevicePtr, u64), BackendError>;

    /// `hipFuncGetAttributes`.
    fn function_attributes(&self, function: FunctionHandle) -> Result<FunctionAttributes, BackendError>;

    /// `hipFuncSetAttribute`: a value out of the attribute's range is `InvalidValue`; later
    /// [`ModuleBackend::function_attributes`] report it, and launches honour it.
    fn function_set_attribute(&self, function: FunctionHandle, attribute: FunctionAttribute, value: i32) -> Result<(), BackendError>;

    /// Queues a launch of `function` on `stream` (`None`: the null stream of the module's
    /// device, run before the call returns). `args` is the packed blob laid out by
    /// [`KernelFunction::params`]; it must cover every parameter. Shape and argument errors
    /// are returned at once; failures while running are latched on the stream. Borrowed:
    /// a GPU driver copies the blob at launch, so only a backend that runs the kernel later
    /// (host) keeps a copy.
    fn launch_kernel(&self, stream: Option<StreamHandle>, function: FunctionHandle, config: LaunchConfig, args: &[u8]) -> Result<(), BackendError>;

    /// The names of `module`'s kernels, in the image's order (`hipModuleGetFunctionCount`,
    /// `hipLibraryEnumerateKernels`).
    fn module_function_names(&self, module: ModuleHandle) -> Result<Vec<String>, BackendError>;

    /// Queues a cooperative launch: like [`ModuleBackend::launch_kernel`], but every block
    /// of the grid is resident at once, so a grid-wide barrier can work. The session has
    /// already refused grids larger than [`ModuleBackend::cooperative_max_blocks`]
    /// (`hipErrorCooperativeLaunchTooLarge`).
    fn launch_cooperative(
        &self,
        stream: Option<StreamHandle>,
        function: FunctionHandle,
        config: LaunchConfig,
        args: Vec<u8>,
    ) -> Result<(), BackendError>;

    /// The most blocks of `block_size` threads and `dynamic_shared` bytes that can be resident
    /// at once on the function's device: active blocks per multiprocessor times
    /// multiprocessors, as AMD's and CUDA's runtimes bound a cooperative grid.
    fn cooperative_max_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u64, BackendError>;

    /// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`: blocks of `block_size` threads
    /// and `dynamic_shared` bytes that fit on one multiprocessor at once.
    fn occupancy_max_active_blocks(&self, function: FunctionHandle, block_size: u32, dynamic_shared: u64) -> Result<u32, BackendError>;

    /// `hipModuleOccupancyMaxPotentialBlockSize`: `(min_grid_size, block_size)` reaching the
    /// highest occupancy; `block_size_limit` 0 means no limit.
    fn occupancy_max_potential_block_size(
        &self,
        function: FunctionHandle,
        dynamic_shared: u64,
        block_size_limit: u32,
    ) -> Result<(u32, u32), BackendError>;
}
