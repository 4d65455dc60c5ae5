//! Modules, functions and kernel launches. Fat-binary registration (`__hipRegisterFatBinary`)
//! travels as a [`ModuleLoad`] of format [`ModuleFormat::OffloadBundle`].

use crate::field::{ArgBlob, Blob, Bulk, List, Name};
use crate::limits::MAX_KERNEL_PARAMS;
use zerocopy::byteorder::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

wire_enum! {
    /// What a module image contains.
    pub enum ModuleFormat: u32 {
        /// Let the worker detect it from the image's magic.
        Auto = 0,
        /// An AMD code object (ELF for amdgcn).
        CodeObject = 1,
        /// A HIP fat binary / clang offload bundle (plain or compressed).
        OffloadBundle = 2,
        /// NVIDIA PTX text.
        Ptx = 3,
        /// NVIDIA cubin.
        Cubin = 4,
        /// NVIDIA fatbin.
        Fatbin = 5,
        /// A hip-remote host module (shared object with a kernel table).
        HostModule = 6,
    }
}

message! {
    /// `hipModuleLoadData`, `hipModuleLoad` (the client reads the file) and fat-binary registration.
    pub struct ModuleLoad<'a> {
        /// Device to load onto: the client's current device (`hipSetDevice`). Launches of
        /// the module's functions run on it.
        pub device: u32,
        /// Image format.
        pub format: ModuleFormat,
        /// Where the image came from (file name, "fatbin@0x…"), for error messages.
        pub origin: Name<'a>,
        /// The image, as the frame's bulk section.
        pub image: Bulk<'a>,
    }
}

message! {
    /// A loaded module.
    pub struct ModuleLoaded {
        /// Session-scoped handle.
        pub module: u64,
    }
}

message! {
    /// `hipModuleLoad*` of an image named by its content hash
    /// ([`crate::content::content_hash`]; `features::CONTENT_STORE`): a worker that holds
    /// content of that hash and length for the session's tenant loads it as [`ModuleLoad`]
    /// would and answers `found` with the module; otherwise it loads nothing and the client
    /// sends the image ([`ModuleLoadKeep`]).
    pub struct ModuleLoadByHash<'a> {
        /// Device to load onto (as [`ModuleLoad`]).
        pub device: u32,
        /// Image format.
        pub format: ModuleFormat,
        /// Where the image came from, for error messages.
        pub origin: Name<'a>,
        /// Bytes of the image.
        pub len: u64,
        /// The content hash (`CONTENT_HASH_LEN` bytes).
        pub hash: Blob<'a>,
    }
}

message! {
    /// Whether the worker held the image named ([`ModuleLoadByHash`]), and the module it
    /// loaded from it.
    pub struct ModuleFoundByHash {
        /// The worker held the image and loaded it.
        pub found: bool,
        /// Session-scoped handle of the loaded module (0 when not found).
        pub module: u64,
    }
}

message! {
    /// [`ModuleLoad`] whose image the worker also keeps as the tenant's content `hash`, if
    /// it hashes to that (after a [`ModuleLoadByHash`] that missed).
    pub struct ModuleLoadKeep<'a> {
        /// Device to load onto (as [`ModuleLoad`]).
        pub device: u32,
        /// Image format.
        pub format: ModuleFormat,
        /// Where the image came from, for error messages.
        pub origin: Name<'a>,
        /// The content hash of the image (`CONTENT_HASH_LEN` bytes).
        pub hash: Blob<'a>,
        /// The image, as the frame's bulk section.
        pub image: Bulk<'a>,
    }
}

message! {
    /// A request naming one module (unload).
    pub struct ModuleRef {
        /// Handle.
        pub module: u64,
    }
}

/// Tag of the module handles a client chooses itself ([`ModuleLoadAt`], with the
/// `CLIENT_ALLOCATION` feature): `tag | n`, `n` below 2^48 (the tag's bits:
/// [`crate::wire::CLIENT_HANDLE_TAG_MASK`]).
pub const CLIENT_MODULE_TAG: u64 = 0x434d_0000_0000_0000;
/// Tag of the function handles a client chooses itself ([`FunctionAt`]).
pub const CLIENT_FUNCTION_TAG: u64 = 0x4346_0000_0000_0000;

message! {
    /// `hipModuleLoadData*` without a round trip: the client names the handle (carrying
    /// [`CLIENT_MODULE_TAG`]); the worker loads the image when it reaches the request, and a
    /// failure (with the load's own status) is deferred to the next synchronising call; later
    /// uses of the handle fail as an unknown module.
    pub struct ModuleLoadAt<'a> {
        /// The handle the client chose.
        pub module: u64,
        /// Device to load onto, as in [`ModuleLoad`].
        pub device: u32,
        /// Image format.
        pub format: ModuleFormat,
        /// Where the image came from, for error messages.
        pub origin: Name<'a>,
        /// The image, as the frame's bulk section.
        pub image: Bulk<'a>,
    }
}

message! {
    /// `hipModuleGetFunction` without a round trip: the client names the function's handle
    /// (carrying [`CLIENT_FUNCTION_TAG`]) and asks for the layout (a waiting `ModuleGetFunction`)
    /// before the first launch that passes arguments; a failed lookup is deferred as for
    /// [`ModuleLoadAt`].
    pub struct FunctionAt<'a> {
        /// Module handle.
        pub module: u64,
        /// The handle the client chose.
        pub function: u64,
        /// Symbol name (mangled as in the image).
        pub name: Name<'a>,
    }
}

message! {
    /// `hipModuleGetFunction` / `hipModuleGetGlobal`.
    pub struct SymbolLookup<'a> {
        /// Module handle.
        pub module: u64,
        /// Symbol name (mangled as in the image).
        pub name: Name<'a>,
    }
}

/// Where one kernel parameter lives in the packed argument blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ParamDesc {
    /// Byte offset in the packed argument buffer.
    pub offset: U32,
    /// Size in bytes.
    pub size: U32,
}

const _: () = assert!(core::mem::size_of::<ParamDesc>() == 8);

// zerocopy's byte-order types have no `defmt::Format`, so the derive cannot be used.
#[cfg(feature = "defmt")]
impl defmt::Format for ParamDesc {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "ParamDesc {{ offset: {=u32}, size: {=u32} }}", self.offset.get(), self.size.get());
    }
}

message! {
    /// A function handle with its exact parameter layout, so the client can pack
    /// `kernelParams` into one blob without guessing sizes.
    pub struct FunctionInfo<'a> {
        /// Session-scoped handle.
        pub function: u64,
        /// Parameters in declaration order.
        pub params: List<'a, ParamDesc, MAX_KERNEL_PARAMS>,
    }
}

message! {
    /// A device global.
    pub struct GlobalInfo {
        /// Device address.
        pub ptr: u64,
        /// Bytes.
        pub size: u64,
    }
}

message! {
    /// `hipModuleLaunchKernel` / `hipLaunchKernel`: arguments already packed by layout.
    pub struct LaunchKernel<'a> {
        /// Function handle.
        pub function: u64,
        /// Grid dimensions (blocks).
        pub grid: [u32; 3],
        /// Block dimensions (threads).
        pub block: [u32; 3],
        /// Dynamic shared memory bytes.
        pub shared_mem: u32,
        /// Stream (0 = null stream).
        pub stream: u64,
        /// The packed arguments.
        pub args: ArgBlob<'a>,
    }
}

message! {
    /// A request naming one function.
    pub struct FunctionRef {
        /// Handle.
        pub function: u64,
    }
}

message! {
    /// `hipFuncSetAttribute`.
    pub struct FuncSetAttribute {
        /// Handle.
        pub function: u64,
        /// `hipFuncAttribute`: 8 max dynamic shared memory, 9 preferred shared-memory carveout.
        pub attribute: u32,
        /// New value.
        pub value: i32,
    }
}

message! {
    /// `hipFuncAttributes`.
    pub struct FuncAttributes {
        /// Binary version.
        pub binary_version: i32,
        /// Cache mode.
        pub cache_mode_ca: i32,
        /// Constant memory bytes.
        pub const_size: u64,
        /// Local memory bytes per thread.
        pub local_size: u64,
        /// Maximum dynamic shared memory.
        pub max_dynamic_shared_size: i32,
        /// Maximum threads per block.
        pub max_threads_per_block: i32,
        /// Registers per thread.
        pub num_regs: i32,
        /// Preferred shared-memory carve-out.
        pub preferred_shmem_carveout: i32,
        /// PTX version.
        pub ptx_version: i32,
        /// Static shared memory bytes.
        pub shared_size: u64,
    }
}

message! {
    /// `hipModuleOccupancyMaxActiveBlocksPerMultiprocessor`.
    pub struct OccupancyQuery {
        /// Function handle.
        pub function: u64,
        /// Threads per block.
        pub block_size: u32,
        /// Dynamic shared memory bytes.
        pub dynamic_shared: u64,
        /// Flags.
        pub flags: u32,
    }
}

message! {
    /// Active blocks per multiprocessor.
    pub struct Occupancy {
        /// Blocks.
        pub blocks: u32,
    }
}

message! {
    /// `hipModuleOccupancyMaxPotentialBlockSize`.
    pub struct BlockSizeQuery {
        /// Function handle.
        pub function: u64,
        /// Dynamic shared memory bytes.
        pub dynamic_shared: u64,
        /// Upper bound on the block size (0 = none).
        pub block_size_limit: u32,
        /// Flags.
        pub flags: u32,
    }
}

message! {
    /// Suggested launch configuration.
    pub struct BlockSize {
        /// Minimum grid size for full occupancy.
        pub min_grid_size: u32,
        /// Block size.
        pub block_size: u32,
    }
}
