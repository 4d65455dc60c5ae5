//! Arbitrary bytes as a HIP image, through every reader of `hip-code-object` a worker or the
//! client library runs on untrusted images: `classify`, `image_extent` (grown as a pointer
//! reader does), `Wrapper::parse`, `decompress`, `Bundle::parse` + `select`, and
//! `metadata::parse` and `kernel_names::read` on the image and on every bundle entry. No
//! panic; an extent never asks for fewer bytes than it was shown; every parsed kernel argument
//! lies inside its kernarg segment; kernel names stay within their limits. Seeds: `fuzz/corpus/code_object/` (hipcc-built code objects and bundles).
#![no_main]

use hip_code_object::fatbin::{self, Bundle, Extent, ImageKind, Wrapper};
use hip_code_object::{kernel_names, metadata};
use libfuzzer_sys::fuzz_target;

fn check_metadata(code: &[u8]) {
    check_kernel_names(code);
    if let Ok(m) = metadata::parse(code) {
        assert!(metadata::SUPPORTED_CODE_OBJECT_VERSIONS.contains(&m.code_object_version));
        for k in &m.kernels {
            assert!(k.kernarg_size <= metadata::MAX_KERNARG_SIZE);
            for p in &k.params {
                assert!(u64::from(p.offset) + u64::from(p.size) <= u64::from(k.kernarg_size), "{k:?}");
            }
        }
    }
}

fn check_kernel_names(code: &[u8]) {
    if let Ok(names) = kernel_names::read(code) {
        assert!(names.len() <= kernel_names::MAX_LISTED_KERNELS);
        for name in names.names() {
            assert!(!name.is_empty() && name.len() <= kernel_names::MAX_NAME_LEN, "{name:?}");
            assert_eq!(names.presence(name), kernel_names::Presence::Present);
        }
    }
}

fn check_bundle(data: &[u8]) {
    if let Ok(bundle) = Bundle::parse(data) {
        for entry in bundle.entries() {
            check_metadata(entry.code);
        }
        for arch in ["gfx90a:sramecc+:xnack-", "gfx1030", "gfx942", "host"] {
            let _ = fatbin::select(&bundle, arch);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = Wrapper::parse(data);
    let mut seen = data.len().min(4);
    while let Ok(Extent::NeedMore(n)) = fatbin::image_extent(&data[..seen]) {
        assert!(n > seen, "NeedMore({n}) after {seen} bytes");
        if n > data.len() {
            break;
        }
        seen = n;
    }
    match fatbin::classify(data) {
        Ok(ImageKind::Bundle) => check_bundle(data),
        Ok(ImageKind::CompressedBundle) => {
            if let Ok(plain) = fatbin::decompress(data) {
                check_bundle(&plain);
            }
        }
        _ => {}
    }
    check_metadata(data);
});
