//! AMD GPU code objects as HIP programs carry them, read from untrusted bytes:
//!
//! - [`fatbin`]: the `<<<>>>` fat binary wrapper, clang offload bundles (plain and compressed)
//!   and the choice of the code object a device can run;
//! - [`metadata`]: the kernels of one AMDGPU code object (ELF) and their argument layouts, from
//!   its `NT_AMDGPU_METADATA` msgpack note; a backend packs launch arguments with them;
//! - [`kernel_names`]: the kernel names an image holds (code objects, PTX, cubins, annotated
//!   host modules), so a lookup of a name the image lacks needs no worker;
//! - [`portable`]: the PTX and device-source entries hip-remote's hipcc adds, and the choice
//!   among all entries of what a device (AMD, NVIDIA or host) runs.
//!
//! Every parser here is bounded by named limits; hostile input gives an error, never a panic.
#![forbid(unsafe_code)]

pub mod fatbin;
pub mod kernel_names;
pub mod metadata;
pub mod portable;
