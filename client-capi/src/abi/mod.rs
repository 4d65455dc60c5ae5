//! The ROCm 7 C ABI of `libamdhip64.so.7` / `libhiprtc.so.7`, mirrored in Rust.
//!
//! One source of truth with `client-capi/include/hip/*.h`: both were generated from the same
//! description of ROCm 7.2 (HIP 7.2.53211): bindgen output of ROCm's own headers (crate
//! `cubecl-hip-sys`, `bindings_53211.rs`), cross-checked against hip-python 7.x `.pxd` files.
//! Every struct size/alignment (and every field offset of the key structs) asserted in `layout` was
//! measured by the C compiler on our C headers, so a drift between the Rust and C views fails to
//! compile. `hipDeviceProp_tR0600` is 1472 bytes (the ROCm 6/7 layout); the legacy
//! `hipDeviceProp_tR0000` is 792 bytes. Error names/strings are ROCm's (`hip_error.cpp`).
//!
//! Enums are plain integer aliases plus constants (as bindgen emits them), never Rust `enum`s:
//! a C caller can pass any value and a Rust enum with an unknown discriminant is UB.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, dead_code)]
#![allow(clippy::all)]

mod error;
mod layout;
mod types;

pub use error::*;
pub use proto_core::hip_abi::{hipDeviceArch_t, hipDeviceProp_tR0600, hipUUID, hipUUID_t};
pub use types::*;

#[allow(unused_imports)] // each file takes what it needs through `use super::*`
use core::ffi::{c_char, c_int, c_longlong, c_uchar, c_uint, c_ulonglong, c_ushort, c_void, CStr};

// ------------------------------------------------------------------------------------------------
// Version
// ------------------------------------------------------------------------------------------------

pub const HIP_VERSION_MAJOR: u32 = 7;
pub const HIP_VERSION_MINOR: u32 = 2;
pub const HIP_VERSION_PATCH: u32 = 53211;
/// `HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH`.
pub const HIP_VERSION: u32 = HIP_VERSION_MAJOR * 10_000_000 + HIP_VERSION_MINOR * 100_000 + HIP_VERSION_PATCH;
