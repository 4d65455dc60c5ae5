//! Exact argument layout over the real wire: a host module (`testdata/host_module/mixed.c`,
//! built here with the system C compiler) whose kernel takes char, short, int, float, double,
//! a pointer and a struct by value is loaded with `hipModuleLoad` into a host-backend worker
//! and launched through `kernelParams` and through an `extra` buffer; the kernel writes what it
//! received, and the values come back intact. Also: the function cache, globals, attributes,
//! occupancy, the `extra` size check, unloading. One test per binary (process-wide connection).
#![cfg(target_os = "linux")]

mod support;

use amdhip64::abi::*;
use amdhip64::api::device::hipDeviceSynchronize;
use amdhip64::api::memory::{hipFree, hipMalloc, hipMemcpy};
use amdhip64::api::module::*;
use std::ffi::{c_void, CString};
use std::path::Path;
use std::process::Command;
use std::ptr::{addr_of, null_mut};

#[repr(C)]
#[derive(Clone, Copy)]
struct Pair {
    c: i8,
    d: f64,
}

/// What `mixed` writes for thread `idx`.
#[allow(clippy::too_many_arguments)] // the kernel's parameter list, plus the global and the index
fn expected(c: i8, s: i16, i: i32, f: f32, d: f64, p: Pair, counter: i32, idx: u32) -> f64 {
    f64::from(c) + f64::from(s) + f64::from(i) + f64::from(f) + d + f64::from(p.c) + p.d + f64::from(counter) + f64::from(idx) * 1000.0
}

#[test]
fn kernel_arguments_arrive_exactly() {
    let dir = support::temp_dir("module-launch");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let so = dir.join("mixed.so");
    let cc = std::env::var("CC").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "cc".into());
    let built = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror"])
        .arg("-I")
        .arg(manifest.join("../worker/include"))
        .arg(manifest.join("testdata/host_module/mixed.c"))
        .arg("-o")
        .arg(&so)
        .status()
        .expect("run the C compiler");
    assert!(built.success(), "building the host module failed");
    let worker = support::Worker::start(&dir);
    std::env::set_var("HIP_REMOTE_WORKER", &worker.addr);
    std::env::remove_var("HIP_REMOTE_DEBUG");

    // SAFETY: every pointer handed to the API below is valid for what it describes.
    unsafe {
        let path = CString::new(so.to_str().unwrap()).unwrap();
        let mut module: hipModule_t = null_mut();
        assert_eq!(hipModuleLoad(&mut module, path.as_ptr()), HipError::SUCCESS, "{}", worker.log_text());
        let (mut f, mut again): (hipFunction_t, hipFunction_t) = (null_mut(), null_mut());
        assert_eq!(hipModuleGetFunction(&mut f, module, c"mixed".as_ptr()), HipError::SUCCESS);
        assert_eq!(hipModuleGetFunction(&mut again, module, c"mixed".as_ptr()), HipError::SUCCESS);
        assert_eq!(f, again, "one handle per module+name");
        assert_eq!(hipModuleGetFunction(&mut again, module, c"nope".as_ptr()), HipError::NOT_FOUND);

        // hip-remote's layout extension (what a chained hip-backend worker reads): the count
        // alone, a short buffer filled only up to its capacity, then the whole layout.
        let mut count = 0u32;
        assert_eq!(hipRemoteFunctionParamLayout(f, &mut count, null_mut(), null_mut(), 0), HipError::SUCCESS);
        assert_eq!(count, 7, "char, short, int, float, double, pointer, struct");
        assert_eq!(hipRemoteFunctionParamLayout(f, &mut count, null_mut(), null_mut(), 1), HipError::INVALID_VALUE);
        assert_eq!(hipRemoteFunctionParamLayout(f, null_mut(), null_mut(), null_mut(), 0), HipError::INVALID_VALUE);
        let (mut offsets, mut sizes) = ([0xa5a5_a5a5u32; 8], [0xa5a5_a5a5u32; 8]);
        assert_eq!(hipRemoteFunctionParamLayout(f, &mut count, offsets.as_mut_ptr(), sizes.as_mut_ptr(), 3), HipError::SUCCESS);
        assert_eq!((count, &sizes[..4]), (7, &[1, 2, 4, 0xa5a5_a5a5][..]), "only `capacity` entries written");
        assert_eq!(hipRemoteFunctionParamLayout(f, &mut count, offsets.as_mut_ptr(), sizes.as_mut_ptr(), 8), HipError::SUCCESS);
        assert_eq!(&sizes[..7], &[1, 2, 4, 4, 8, 8, 16]);
        assert_eq!(&offsets[..7], &[0, 2, 4, 8, 16, 24, 32], "x86-64 C layout of the parameters");
        assert_eq!(sizes[7], 0xa5a5_a5a5);

        // The global, set through its device address.
        let (mut counter, mut size): (hipDeviceptr_t, usize) = (null_mut(), 0);
        assert_eq!(hipModuleGetGlobal(&mut counter, &mut size, module, c"counter".as_ptr()), HipError::SUCCESS);
        assert_eq!(size, 16);
        let seven = [7i32, 0, 0, 0];
        assert_eq!(hipMemcpy(counter, seven.as_ptr() as *const c_void, 16, hipMemcpyHostToDevice), HipError::SUCCESS);

        const THREADS: u32 = 8; // 2 blocks of 4
        let bytes = THREADS as usize * 8;
        let (mut out1, mut out2): (*mut c_void, *mut c_void) = (null_mut(), null_mut());
        assert_eq!(hipMalloc(&mut out1, bytes), HipError::SUCCESS);
        assert_eq!(hipMalloc(&mut out2, bytes), HipError::SUCCESS);

        // 1. kernelParams: one pointer per parameter, each of its exact size.
        let (c, s, i, fl, d) = (-3i8, 300i16, -70_000i32, 0.5f32, 1e6f64);
        let p = Pair { c: 9, d: 0.25 };
        let mut params: [*mut c_void; 7] = [
            addr_of!(c) as *mut c_void,
            addr_of!(s) as *mut c_void,
            addr_of!(i) as *mut c_void,
            addr_of!(fl) as *mut c_void,
            addr_of!(d) as *mut c_void,
            addr_of!(out1) as *mut c_void,
            addr_of!(p) as *mut c_void,
        ];
        let r = hipModuleLaunchKernel(f, 2, 1, 1, 4, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut());
        assert_eq!(r, HipError::SUCCESS);

        // 2. extra: the same arguments packed by hand at clang's offsets, plus tail padding.
        let mut buf = [0u8; 64];
        buf[0] = 5i8 as u8;
        buf[2..4].copy_from_slice(&(-2i16).to_le_bytes());
        buf[4..8].copy_from_slice(&40i32.to_le_bytes());
        buf[8..12].copy_from_slice(&1.5f32.to_le_bytes());
        buf[16..24].copy_from_slice(&(-0.5f64).to_le_bytes());
        buf[24..32].copy_from_slice(&(out2 as u64).to_le_bytes());
        buf[32] = 1;
        buf[40..48].copy_from_slice(&2.0f64.to_le_bytes());
        let len = std::cell::Cell::new(64usize);
        let mut extra = [
            HIP_LAUNCH_PARAM_BUFFER_POINTER,
            buf.as_mut_ptr() as *mut c_void,
            HIP_LAUNCH_PARAM_BUFFER_SIZE,
            len.as_ptr() as *mut c_void,
            HIP_LAUNCH_PARAM_END,
        ];
        let r = hipModuleLaunchKernel(f, 2, 1, 1, 4, 1, 1, 0, null_mut(), null_mut(), extra.as_mut_ptr());
        assert_eq!(r, HipError::SUCCESS);
        assert_eq!(hipDeviceSynchronize(), HipError::SUCCESS, "{}", worker.log_text());

        let mut got = [0f64; THREADS as usize];
        assert_eq!(hipMemcpy(got.as_mut_ptr() as *mut c_void, out1, bytes, hipMemcpyDeviceToHost), HipError::SUCCESS);
        for (idx, v) in got.iter().enumerate() {
            assert_eq!(*v, expected(c, s, i, fl, d, p, 7, idx as u32), "kernelParams launch, thread {idx}");
        }
        assert_eq!(hipMemcpy(got.as_mut_ptr() as *mut c_void, out2, bytes, hipMemcpyDeviceToHost), HipError::SUCCESS);
        for (idx, v) in got.iter().enumerate() {
            assert_eq!(*v, expected(5, -2, 40, 1.5, -0.5, Pair { c: 1, d: 2.0 }, 7, idx as u32), "extra launch, thread {idx}");
        }

        // An extra buffer shorter than the layout, both argument forms, none: refused now.
        len.set(40);
        let r = hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, null_mut(), null_mut(), extra.as_mut_ptr());
        assert_eq!(r, HipError::INVALID_VALUE);
        let r = hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, null_mut(), params.as_mut_ptr(), extra.as_mut_ptr());
        assert_eq!(r, HipError::INVALID_VALUE);
        let r = hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, null_mut(), null_mut(), null_mut());
        assert_eq!(r, HipError::INVALID_VALUE);
        let r = hipModuleLaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut());
        assert_eq!(r, HipError::INVALID_VALUE);

        // Attributes and occupancy answer.
        let mut v = 0;
        assert_eq!(hipFuncGetAttribute(&mut v, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f), HipError::SUCCESS);
        assert!(v > 0);
        let mut blocks = 0;
        assert_eq!(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&mut blocks, f, 64, 0), HipError::SUCCESS);
        let (mut grid, mut block) = (0, 0);
        assert_eq!(hipModuleOccupancyMaxPotentialBlockSize(&mut grid, &mut block, f, 0, 0), HipError::SUCCESS);
        assert!(block > 0);

        assert_eq!(hipFree(out1), HipError::SUCCESS);
        assert_eq!(hipFree(out2), HipError::SUCCESS);
        assert_eq!(hipModuleUnload(module), HipError::SUCCESS);
        assert_eq!(hipModuleUnload(module), HipError::INVALID_HANDLE);
        let r = hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, null_mut(), params.as_mut_ptr(), null_mut());
        assert_eq!(r, HipError::INVALID_HANDLE, "a function of an unloaded module");
    }
    drop(worker);
    let _ = std::fs::remove_dir_all(&dir);
}
