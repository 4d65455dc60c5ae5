//! The module API and fat-binary registration in-process, against a host-backend worker: GPU
//! images are refused with `hipErrorNoBinaryForGpu` (the host backend runs host modules only),
//! bad input with the right codes, and nothing crashes on bad handles. One test per binary:
//! the library's connection (and its `HIP_REMOTE_WORKER`) is process-wide.
#![cfg(target_os = "linux")]

mod support;

use amdhip64::abi::*;
use amdhip64::api::module::*;
use amdhip64::api::register::*;
use amdhip64::fatbin::{self, Bundle};
use proto_core::wire;
use std::ffi::{c_char, c_void};
use std::path::Path;
use std::ptr::{null, null_mut};

#[test]
fn module_api_against_the_host_backend() {
    let dir = support::temp_dir("module-api");
    let worker = support::Worker::start(&dir);
    std::env::set_var("HIP_REMOTE_WORKER", &worker.addr);
    std::env::remove_var("HIP_REMOTE_DEBUG");
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hipcc");
    let bundle = std::fs::read(testdata.join("vadd-2arch.bundle")).unwrap();
    let compressed = std::fs::read(testdata.join("vadd-2arch.ccob-v3-zstd")).unwrap();
    let code_object = Bundle::parse(&bundle).unwrap().entries()[2].code.to_vec();
    assert_eq!(fatbin::classify(&code_object), Ok(fatbin::ImageKind::Elf { machine: fatbin::EM_AMDGPU }));

    // SAFETY: every image below is a complete buffer; outputs are valid.
    unsafe {
        let mut m: hipModule_t = null_mut();
        for image in [&bundle, &compressed, &code_object] {
            assert_eq!(hipModuleLoadData(&mut m, image.as_ptr() as *const c_void), HipError::NO_BINARY_FOR_GPU);
            assert!(m.is_null(), "a failed load leaves the output alone");
        }
        let junk = [0x42u8; 64];
        assert_eq!(hipModuleLoadData(&mut m, junk.as_ptr() as *const c_void), HipError::INVALID_IMAGE);
        assert_eq!(hipModuleLoadData(null_mut(), bundle.as_ptr() as *const c_void), HipError::INVALID_VALUE);
        assert_eq!(hipModuleLoadData(&mut m, null()), HipError::INVALID_VALUE);
        assert_eq!(hipModuleLoadDataEx(&mut m, bundle.as_ptr() as *const c_void, 0, null_mut(), null_mut()), HipError::NO_BINARY_FOR_GPU);
        let path = testdata.join("vadd-2arch.bundle");
        let path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        assert_eq!(hipModuleLoad(&mut m, path.as_ptr()), HipError::NO_BINARY_FOR_GPU);
        assert_eq!(hipModuleLoad(&mut m, c"/nonexistent/kernels.co".as_ptr()), HipError::FILE_NOT_FOUND);
        assert_eq!(hipModuleUnload(0x7777 as hipModule_t), HipError::INVALID_HANDLE);
        let mut f: hipFunction_t = null_mut();
        assert_eq!(hipModuleGetFunction(&mut f, 0x7777 as hipModule_t, c"k".as_ptr()), HipError::INVALID_HANDLE);
        let r = hipModuleLaunchKernel(0x7778 as hipFunction_t, 1, 1, 1, 1, 1, 1, 0, null_mut(), null_mut(), null_mut());
        assert_eq!(r, HipError::INVALID_HANDLE);

        // Registration as hipcc's constructor does it, with the real bundle (in heap memory
        // here, so its length comes from its headers alone).
        let mut wrapper = [0u8; 24];
        wrapper[..4].copy_from_slice(b"FPIH");
        wrapper[4..8].copy_from_slice(&1u32.to_le_bytes());
        wrapper[8..16].copy_from_slice(&(bundle.as_ptr() as u64).to_le_bytes());
        let handle = __hipRegisterFatBinary(wrapper.as_ptr() as *const c_void);
        static KERNEL: u8 = 0;
        static mut SCALE: i32 = 0;
        let kernel = &KERNEL as *const u8 as *const c_void;
        let scale = std::ptr::addr_of_mut!(SCALE) as *mut c_void;
        let name = c"_Z4vaddPKfS0_Pfi";
        __hipRegisterFunction(
            handle,
            kernel,
            name.as_ptr() as *mut c_char,
            name.as_ptr(),
            u32::MAX,
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
            null_mut(),
        );
        __hipRegisterVar(handle, scale, c"scale".as_ptr() as *mut c_char, c"scale".as_ptr() as *mut c_char, 0, 4, 0, 0);

        assert_eq!(__hipPushCallConfiguration(dim3::new(1, 1, 1), dim3::new(64, 1, 1), 0, null_mut()), HipError::SUCCESS);
        let (mut g, mut b, mut s, mut q) = (dim3::new(0, 0, 0), dim3::new(0, 0, 0), 0usize, null_mut());
        assert_eq!(__hipPopCallConfiguration(&mut g, &mut b, &mut s, &mut q), HipError::SUCCESS);
        let mut args: [*mut c_void; 0] = [];
        assert_eq!(hipLaunchKernel(kernel, g, b, args.as_mut_ptr(), s, q), HipError::NO_BINARY_FOR_GPU);
        // The failure is permanent for this fat binary, and reported for its variables too.
        assert_eq!(hipLaunchKernel(kernel, g, b, args.as_mut_ptr(), s, q), HipError::NO_BINARY_FOR_GPU);
        let two = 2i32;
        let r = hipMemcpyToSymbol(scale, &two as *const i32 as *const c_void, 4, 0, hipMemcpyHostToDevice);
        assert_eq!(r, HipError::NO_BINARY_FOR_GPU);
        let mut size = 0usize;
        assert_eq!(hipGetSymbolSize(&mut size, scale), HipError::NO_BINARY_FOR_GPU);
        let mut attrs = hipFuncAttributes::zeroed();
        assert_eq!(hipFuncGetAttributes(&mut attrs, kernel), HipError::NO_BINARY_FOR_GPU);
        // Not registered at all.
        let other = 0u8;
        assert_eq!(hipLaunchKernel(&other as *const u8 as *const c_void, g, b, args.as_mut_ptr(), 0, null_mut()), HipError::INVALID_DEVICE_FUNCTION);
        assert_eq!(hipGetSymbolAddress(&mut null_mut(), &other as *const u8 as *const c_void), HipError::INVALID_SYMBOL);
        __hipUnregisterFatBinary(handle);
        assert_eq!(hipLaunchKernel(kernel, g, b, args.as_mut_ptr(), s, q), HipError::INVALID_DEVICE_FUNCTION);
    }
    // Pipelined requests: one round trip, each answer (or error) in its request's place.
    let reqs = [wire::DeviceRef { device: 0 }, wire::DeviceRef { device: 999 }, wire::DeviceRef { device: 0 }];
    let answers = amdhip64::remote::with_conn(|c| c.call_batch::<proto_core::calls::GetDeviceProperties, _>(reqs, |i, p| (i, p.warp_size)))
        .expect("connection");
    assert_eq!(answers.len(), 3);
    assert!(answers[0].as_ref().is_ok_and(|&(i, warp)| i == 0 && warp > 0), "{:?}", answers[0]);
    assert!(answers[1].as_ref().is_err_and(|e| e.code != HipError::SUCCESS));
    assert!(answers[2].as_ref().is_ok_and(|&(i, _)| i == 2), "{:?}", answers[2]);

    assert_eq!(worker.log_text().matches("session opened").count(), 1, "{}", worker.log_text());
    drop(worker);
    let _ = std::fs::remove_dir_all(&dir);
}
