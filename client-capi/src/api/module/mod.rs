//! Module family: code objects loaded into the worker, their functions and globals, kernel
//! launches with exactly packed arguments, function attributes and occupancy; and
//! [`__hipRemoteRtcCompile`], libhiprtc's way onto this library's connection.
//!
//! **Handles.** `hipModule_t` and `hipFunction_t` (and `hipLibrary_t`, `hipKernel_t`,
//! `hipLinkState_t`) are ids into tables each worker's session keeps: a tag of the kind, the
//! worker's namespace (its first device, bits 40..48, as the worker's own handles carry it) and
//! a counter of that session, never reused. The namespace finds the session at once (no
//! search on a launch); the handle is never dereferenced, so a stale (unloaded) or made-up
//! handle is `hipErrorInvalidHandle`, not a crash. A function entry holds everything a
//! launch needs without asking the worker: the worker's handle and the parameter layout that
//! `ModuleGetFunction` returned (and the attributes once asked for).
//!
//! **Round trips.** Where the worker offers `CLIENT_ALLOCATION`, `hipModuleLoad*` and
//! `hipModuleGetFunction` are posted under handles chosen here (`ModuleLoadAt`,
//! `ModuleGetFunctionAt`; failures surface at the next synchronising call) and a kernel's
//! layout is asked for at its first launch with arguments, for all the module's pending
//! kernels in one round trip. Otherwise `hipModuleLoad*` is one round trip (the image travels
//! as the frame's bulk section; a fat binary is reduced to the one code object the worker's
//! device runs before it is sent), and `hipModuleGetFunction` one the first time a
//! module+name is asked for and none after (cached); `get_functions` resolves many names in
//! one round trip (pipelined), which the lazy loading of `<<<>>>` fat binaries uses for all
//! their kernels at once. Launches are fire-and-forget (their failures surface at the next
//! synchronising call, as on a GPU).
//!
//! **Arguments.** `kernelParams[i]` points at parameter `i`; exactly `size` bytes of it are
//! copied to `offset` in one blob, by the layout the worker reported (never a guessed 8
//! bytes). An `extra` buffer (`HIP_LAUNCH_PARAM_BUFFER_POINTER/SIZE/END`) is already packed:
//! it is sent as it is, after checking that it covers the layout's end (bytes past the end
//! are padding and are not sent).
//!
//! **Files.** `tables` (handles and lookups), `image` (code objects, fat binaries),
//! `launch` (argument packing, geometry, occupancy), `exports` (the C functions),
//! `rtc` (libhiprtc's entry point), [`register`] (`__hipRegister*` and `<<<>>>` launches).

mod blas;
mod exports;
mod ext_launch;
mod image;
mod launch;
mod library;
mod link;
mod proc_address;
pub mod register;
mod rtc;
mod tables;

pub use blas::*;
pub use exports::*;
pub use ext_launch::*;
pub(crate) use image::*;
pub use launch::*;
pub use library::*;
pub use link::*;
pub use proc_address::*;
pub use rtc::*;
pub use tables::*;

use crate::abi::*;
use crate::fatbin::{self, Bundle, Extent, ImageKind};
use crate::handle::{stream_id, Handle};
use crate::remote::with_conn;
use crate::state::devices::{current_device, launch_limits, properties};
use crate::state::sync::call_sync;
use client_core::CallError;
use hip_code_object::portable::{self, Choice, SourceEntry};
use proto_core::limits::{MAX_BULK_LEN, MAX_KERNEL_ARGS_LEN, MAX_KERNEL_PARAMS, MAX_NAME_LEN};
use proto_core::rtc_entry::{RtcCompileFn, RtcResultFn};
use proto_core::wire::{self, ModuleFormat};
use proto_core::{calls, Caller, Calls};
use proto_core::{Bulk, StrList};
use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

#[cfg(test)]
mod test {
    use super::*;

    /// A `struct Pair { char c; double d; }` argument as a C caller's memory holds it: 16 bytes,
    /// 8-aligned, its 7 padding bytes whatever they happen to be (0xa5 here).
    #[repr(C, align(8))]
    struct PairMem([u8; 16]);

    /// The layout clang gives `mixed(char, short, int, float, double, int*, Pair)` on AMDGPU
    /// (each parameter at its natural alignment).
    fn mixed_layout() -> ArgLayout {
        ArgLayout::new([(0, 1), (2, 2), (4, 4), (8, 4), (16, 8), (24, 8), (32, 16)]).unwrap()
    }

    #[test]
    fn test_pack_pointers_exact_sizes_and_offsets() {
        let c: i8 = -3;
        let s: i16 = 0x1234;
        let i: i32 = -0x0102_0304;
        let f: f32 = 1.5;
        let d: f64 = -2.25;
        let p: *mut i32 = 0x7f00_dead_beef as *mut i32;
        let mut pair = PairMem([0xa5; 16]);
        pair.0[0] = 7;
        pair.0[8..16].copy_from_slice(&6.5f64.to_le_bytes());
        let mut params: [*mut c_void; 7] = [
            &c as *const _ as *mut c_void,
            &s as *const _ as *mut c_void,
            &i as *const _ as *mut c_void,
            &f as *const _ as *mut c_void,
            &d as *const _ as *mut c_void,
            &p as *const _ as *mut c_void,
            &pair as *const _ as *mut c_void,
        ];
        let layout = mixed_layout();
        assert_eq!(layout.len(), 48);
        // SAFETY: one pointer per parameter, each at a value of the parameter's size.
        let blob = unsafe { layout.pack_pointers(params.as_mut_ptr()) }.unwrap();
        let mut want = vec![0u8; 48];
        want[0] = c as u8;
        want[2..4].copy_from_slice(&s.to_le_bytes());
        want[4..8].copy_from_slice(&i.to_le_bytes());
        want[8..12].copy_from_slice(&f.to_le_bytes());
        want[16..24].copy_from_slice(&d.to_le_bytes());
        want[24..32].copy_from_slice(&(p as u64).to_le_bytes());
        // The struct travels whole: all 16 bytes, its padding included, as the caller's memory
        // holds them.
        want[32..48].copy_from_slice(&pair.0);
        assert_eq!(blob, want);
        // Padding between parameters is zero, not whatever followed the smaller values.
        assert_eq!(blob[1], 0);
        assert_eq!(&blob[12..16], &[0; 4]);
    }

    #[test]
    fn test_pack_reads_exactly_size_bytes() {
        // A 1-byte parameter whose pointer sits at the very end of a buffer: reading 8 bytes
        // would run past it (Miri / ASan would flag it; here the value is checked).
        let bytes = [0xa5u8; 9];
        let last = &bytes[8] as *const u8 as *mut c_void;
        let layout = ArgLayout::new([(0, 1)]).unwrap();
        let mut params = [last];
        // SAFETY: one pointer to one byte.
        let blob = unsafe { layout.pack_pointers(params.as_mut_ptr()) }.unwrap();
        assert_eq!(blob, [0xa5]);
    }

    #[test]
    fn test_pack_refuses_null() {
        let layout = mixed_layout();
        // SAFETY: null is checked before any read.
        assert_eq!(unsafe { layout.pack_pointers(std::ptr::null()) }.unwrap_err().code, HipError::INVALID_VALUE);
        let x = 0u64;
        let mut params: [*mut c_void; 7] = [&x as *const _ as *mut c_void; 7];
        params[3] = std::ptr::null_mut();
        // SAFETY: entries 0..3 point at 8 readable bytes, entry 3 is null and refused.
        let e = unsafe { layout.pack_pointers(params.as_mut_ptr()) }.unwrap_err();
        assert!(e.message.contains("kernelParams[3]"), "{}", e.message);
        // A kernel without parameters needs no array.
        // SAFETY: nothing is read.
        assert_eq!(unsafe { ArgLayout::default().pack_pointers(std::ptr::null()) }.unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn test_layout_limits() {
        assert!(ArgLayout::new([(0, 8), (MAX_KERNEL_ARGS_LEN as u32 - 8, 8)]).is_ok());
        assert!(ArgLayout::new([(MAX_KERNEL_ARGS_LEN as u32, 1)]).is_err());
        assert!(ArgLayout::new([(u32::MAX, u32::MAX)]).is_err());
        // Parameters reported out of offset order still give the right end.
        assert_eq!(ArgLayout::new([(8, 8), (0, 4)]).unwrap().len(), 16);
    }

    fn extra_for(buf: &[u8], size: &usize) -> [*mut c_void; 5] {
        [
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            buf.as_ptr() as *mut c_void,
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            size as *const usize as *mut c_void,
            HIP_LAUNCH_PARAM_END,
        ]
    }

    #[test]
    fn test_extra_buffer() {
        let layout = mixed_layout();
        let buf: Vec<u8> = (0..64).collect();
        // Exactly the layout's size: sent as it is.
        let size = 48usize;
        let extra = extra_for(&buf, &size);
        // SAFETY: a well-formed extra array over a live buffer.
        let got = unsafe { extra_buffer(extra.as_ptr()) }.unwrap();
        assert_eq!(layout.check_buffer(got).unwrap(), &buf[..48]);
        // Larger (tail padding): cut at the layout's end.
        let size = 64usize;
        let extra = extra_for(&buf, &size);
        // SAFETY: as above.
        let got = unsafe { extra_buffer(extra.as_ptr()) }.unwrap();
        assert_eq!(got.len(), 64);
        assert_eq!(layout.check_buffer(got).unwrap(), &buf[..48]);
        // Smaller than the layout: refused.
        let size = 40usize;
        let extra = extra_for(&buf, &size);
        // SAFETY: as above.
        let got = unsafe { extra_buffer(extra.as_ptr()) }.unwrap();
        let e = layout.check_buffer(got).unwrap_err();
        assert_eq!(e.code, HipError::INVALID_VALUE);
        assert!(e.message.contains("40") && e.message.contains("48"), "{}", e.message);
        // Keys in the other order.
        let size = 48usize;
        let swapped = [
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            &size as *const usize as *mut c_void,
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            buf.as_ptr() as *mut c_void,
            HIP_LAUNCH_PARAM_END,
        ];
        // SAFETY: as above.
        assert_eq!(unsafe { extra_buffer(swapped.as_ptr()) }.unwrap().len(), 48);
    }

    #[test]
    fn test_extra_malformed() {
        let buf = [0u8; 8];
        let size = 8usize;
        // Missing size.
        let no_size = [HIP_LAUNCH_PARAM_BUFFER_POINTER, buf.as_ptr() as *mut c_void, HIP_LAUNCH_PARAM_END];
        // SAFETY: END-terminated.
        assert!(unsafe { extra_buffer(no_size.as_ptr()) }.is_err());
        // Unknown key.
        let unknown = [0x42 as *mut c_void, buf.as_ptr() as *mut c_void, HIP_LAUNCH_PARAM_END];
        // SAFETY: END-terminated.
        assert!(unsafe { extra_buffer(unknown.as_ptr()) }.is_err());
        // Oversized buffer.
        let huge = MAX_KERNEL_ARGS_LEN + 1;
        let extra = extra_for(&buf, &huge);
        // SAFETY: refused before the buffer is read.
        assert!(unsafe { extra_buffer(extra.as_ptr()) }.is_err());
        // Null size pointer.
        let null_size = [HIP_LAUNCH_PARAM_BUFFER_SIZE, std::ptr::null_mut(), HIP_LAUNCH_PARAM_END];
        // SAFETY: END-terminated.
        assert!(unsafe { extra_buffer(null_size.as_ptr()) }.is_err());
        // No END within the bound: the scan stops instead of running on.
        let mut endless: Vec<*mut c_void> = Vec::new();
        for _ in 0..MAX_EXTRA_ENTRIES {
            endless.push(HIP_LAUNCH_PARAM_BUFFER_SIZE);
            endless.push(&size as *const usize as *mut c_void);
        }
        // SAFETY: the array has MAX_EXTRA_ENTRIES * 2 entries, more than the scan reads.
        assert!(unsafe { extra_buffer(endless.as_ptr()) }.is_err());
    }

    /// This library's handles carry their kind's tag, their worker's namespace (which
    /// `device_of_handle` reads back, finding the session without a search) and a counter
    /// that stops below the namespace bits.
    #[test]
    fn test_local_handles_name_their_kind_and_worker() {
        use client_core::client_handles::NAMESPACE_SHIFT;
        let mut issued = 0;
        let namespace = 3 << NAMESPACE_SHIFT;
        let f = issue_handle(&mut issued, FUNCTION_HANDLE_TAG, namespace, "function").unwrap();
        assert_eq!(f, FUNCTION_HANDLE_TAG | 3 << NAMESPACE_SHIFT | 1);
        assert_eq!(crate::remote::device_of_handle(f), Some(3), "the worker whose first device is 3");
        assert_eq!(namespace_of(f), namespace);
        let m = issue_handle(&mut issued, MODULE_HANDLE_TAG, 0, "module").unwrap();
        assert_eq!(m, MODULE_HANDLE_TAG | 2, "one counter, never reused");
        assert_eq!(crate::remote::device_of_handle(m), Some(0));
        // A module handle is not a function's, nor a function's a module's.
        assert_eq!(function(m).unwrap_err().code, HipError::INVALID_HANDLE);
        assert_eq!(module_worker(f).unwrap_err().code, HipError::INVALID_HANDLE);
        issued = MAX_LOCAL_HANDLES - 2;
        let last = issue_handle(&mut issued, MODULE_HANDLE_TAG, namespace, "module").unwrap();
        assert_eq!(namespace_of(last), namespace, "the last counter stays out of the namespace bits");
        let spent = issue_handle(&mut issued, MODULE_HANDLE_TAG, namespace, "module").unwrap_err();
        assert_eq!(spent.code, HipError::OUT_OF_MEMORY);
        assert!(spent.message.contains("module handles"), "{}", spent.message);
    }

    #[test]
    fn test_bad_handles_are_errors() {
        assert_eq!(function(0xdead_beef).unwrap_err().code, HipError::INVALID_HANDLE);
        assert_eq!(module_worker(0).unwrap_err().code, HipError::INVALID_HANDLE);
        assert_eq!(hipModuleUnload(crate::handle::from_id(0x1234).unwrap()), HipError::INVALID_HANDLE);
        let mut v = 0;
        // SAFETY: valid output pointer; the handle is checked before use.
        assert_eq!(unsafe { hipFuncGetAttribute(&mut v, 0, crate::handle::from_id(0x4321).unwrap()) }, HipError::INVALID_HANDLE);
        // SAFETY: as above; nothing is dereferenced for a bad handle.
        let r = unsafe {
            hipModuleLaunchKernel(
                crate::handle::from_id(0x4321).unwrap(),
                1,
                1,
                1,
                1,
                1,
                1,
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(r, HipError::INVALID_HANDLE);
    }

    #[test]
    fn test_image_at_elf_and_bundle() {
        // A bundle in a heap buffer: the extent comes from its headers alone.
        let mut data = crate::fatbin::test_support::bundle(&[("hipv4-amdgcn-amd-amdhsa--gfx90a", b"code")]);
        let len = data.len();
        data.extend_from_slice(&[0xa5; 32]);
        // SAFETY: the buffer holds the whole image.
        let got = unsafe { image_at(data.as_ptr(), "test") }.unwrap();
        assert_eq!(got.len(), len);
        // SAFETY: null is refused before any read.
        assert_eq!(unsafe { image_at(std::ptr::null(), "test") }.unwrap_err().code, HipError::INVALID_VALUE);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn test_mapped_len() {
        static IN_DATA: [u8; 64] = [1; 64];
        let n = mapped_len(IN_DATA.as_ptr() as usize).expect("a static lies in a loaded segment");
        assert!(n >= 64);
        let heap = Box::new([0u8; 16]);
        assert_eq!(mapped_len(heap.as_ptr() as usize), None);
    }
}
