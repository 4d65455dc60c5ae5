//! hip-remote's `hipcc` and `hipconfig`: HIP programs with `<<<>>>` kernels, compiled by the
//! system clang into fat binaries that every hip-remote worker runs.
//!
//! A HIP source becomes one offload bundle with, beside clang's empty host entry:
//! PTX for each NVIDIA virtual architecture (`--offload-arch=sm_70` by default), AMD code
//! objects for each `--offload-arch=gfx…` (when ROCm's device libraries are installed), and
//! the device source — the program's files without host code — that a worker with no code
//! object for its device (the host backend, an AMD GPU not named) compiles on first launch
//! and caches. The host object embeds the bundle exactly as AMD's hipcc does
//! (`__hipRegisterFatBinary`), so our `libamdhip64` — or AMD's — picks what the device runs.
//! See `docs/KERNELS.md`.

pub mod args;
pub mod ast;
pub mod device_source;
pub mod driver;
pub mod toolchain;

/// The HIP version hipcc and hipconfig report, in ROCm's form `MAJOR.MINOR.PATCH-GITHASH`
/// (upstream's CMake splits it there): the ROCm release whose ABI our headers carry, and this
/// build's commit (`unknown` when built outside a git checkout).
pub const HIP_VERSION: &str = concat!("7.2.53211-", env!("HIP_REMOTE_GITHASH"));
