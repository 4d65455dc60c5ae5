//! Kernel metadata of real code objects: `testdata/` holds `mixed.hip` built by Debian 12's
//! hipcc (ROCm 5.2) as bare code objects (v4 for gfx90a, v5 for gfx1030; `build.sh`). When
//! hipcc is installed, the same source is also built here into offload bundles, the code
//! objects taken out with `fatbin`, and checked the same way.

use hip_code_object::fatbin::{self, Bundle};
use hip_code_object::metadata::{self, KernelInfo, MetadataError, ParamInfo};
use std::path::{Path, PathBuf};
use std::process::Command;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata").join(name)
}

fn kernel<'a>(kernels: &'a [KernelInfo], name: &str) -> &'a KernelInfo {
    kernels.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no kernel {name} in {kernels:#?}"))
}

fn layout(k: &KernelInfo) -> Vec<(u32, u32, &str)> {
    k.params.iter().map(|p: &ParamInfo| (p.offset, p.size, p.value_kind.as_str())).collect()
}

/// `mixed.hip`'s kernels, against the C ABI: each argument at the next multiple of its
/// alignment, a struct by value as one argument of its size (`Pair` is 16 bytes, 8-aligned).
fn check_mixed(code_object: &[u8], version: u32, wavefront: u32, what: &str) {
    let all = metadata::parse(code_object).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(all.code_object_version, version, "{what}");
    let kernels = metadata::kernel_param_layouts(code_object).unwrap();
    assert_eq!(kernels, all.kernels);
    assert_eq!(kernels.len(), 3, "{what}: {kernels:#?}");

    let mixed = kernel(&kernels, "mixed");
    assert_eq!(mixed.symbol, "mixed.kd", "{what}");
    #[rustfmt::skip]
    assert_eq!(layout(mixed), [
        (0, 1, "by_value"),       // char
        (2, 2, "by_value"),       // short
        (4, 4, "by_value"),       // int
        (8, 8, "by_value"),       // double
        (16, 16, "by_value"),     // struct Pair { char; double; }
        (32, 8, "global_buffer"), // float*
    ], "{what}");
    // Hidden arguments follow the caller's: left out of params, counted in the segment. v5's
    // implicit arguments are a 256-byte block (blockDim reads from it); ROCm 5.2 drops v4's
    // when unused.
    let hidden = if version >= 5 { 256 } else { 0 };
    assert!(mixed.kernarg_size >= 40 + hidden, "{what}: {mixed:#?}");
    assert!(mixed.kernarg_align >= 8, "{what}");
    assert_eq!(mixed.attributes.group_segment_fixed_size, 64 * 4, "{what}: __shared__ float[64]");
    assert_eq!(mixed.attributes.private_segment_fixed_size, 0, "{what}");
    assert_eq!(mixed.attributes.max_flat_workgroup_size, 1024, "{what}");
    assert_eq!(mixed.attributes.wavefront_size, wavefront, "{what}");
    assert!(mixed.attributes.sgpr_count > 0 && mixed.attributes.vgpr_count > 0, "{what}: {mixed:#?}");

    assert_eq!(layout(kernel(&kernels, "tail_char")), [(0, 8, "global_buffer"), (8, 1, "by_value")], "{what}");
    let none = kernel(&kernels, "no_args");
    assert!(none.params.is_empty(), "{what}: {none:#?}");
    assert_eq!(none.attributes.group_segment_fixed_size, 0, "{what}");
}

#[test]
fn checked_in_code_objects() {
    let v4 = std::fs::read(testdata("mixed-gfx90a-v4.co")).unwrap();
    check_mixed(&v4, 4, 64, "gfx90a v4");
    assert_eq!(metadata::parse(&v4).unwrap().target.as_deref(), Some("amdgcn-amd-amdhsa--gfx90a"));
    let v5 = std::fs::read(testdata("mixed-gfx1030-v5.co")).unwrap();
    check_mixed(&v5, 5, 32, "gfx1030 v5");
    assert_eq!(metadata::parse(&v5).unwrap().target.as_deref(), Some("amdgcn-amd-amdhsa--gfx1030"));
}

#[test]
fn every_truncation_and_byte_flip_is_an_error_or_a_checked_result() {
    let v4 = std::fs::read(testdata("mixed-gfx90a-v4.co")).unwrap();
    // The section headers close the file: every prefix loses them.
    for n in 0..v4.len() {
        assert!(metadata::parse(&v4[..n]).is_err(), "{n}");
    }
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..20_000 {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let mut bad = v4.clone();
        let at = (rng as usize) % bad.len();
        bad[at] ^= (rng >> 32) as u8 | 1;
        if let Ok(m) = metadata::parse(&bad) {
            for k in &m.kernels {
                for p in &k.params {
                    assert!(p.offset + p.size <= k.kernarg_size, "{k:#?}");
                }
            }
        }
    }
}

#[test]
fn without_section_headers_the_note_segment_is_read() {
    let mut stripped = std::fs::read(testdata("mixed-gfx1030-v5.co")).unwrap();
    stripped[40..48].fill(0); // e_shoff
    stripped[60..64].fill(0); // e_shnum, e_shstrndx
    check_mixed(&stripped, 5, 32, "gfx1030 v5 without section headers");
}

#[test]
fn refusals_name_the_problem() {
    let v4 = std::fs::read(testdata("mixed-gfx90a-v4.co")).unwrap();
    assert!(matches!(metadata::parse(b"not an elf"), Err(MetadataError::Elf(_))));
    let mut cuda = v4.clone();
    cuda[18..20].copy_from_slice(&fatbin::EM_CUDA.to_le_bytes());
    assert!(matches!(metadata::parse(&cuda), Err(MetadataError::NotAmdgpu { .. })));
    let mut v2 = v4.clone();
    v2[8] = 0; // EI_ABIVERSION 0: code object v2
    assert_eq!(metadata::parse(&v2), Err(MetadataError::UnsupportedVersion { code_object_version: 2 }));
    // The note's type changed: no metadata left.
    let note_type = 32u32.to_le_bytes();
    let owner = v4.windows(7).position(|w| w == b"AMDGPU\0").expect("note owner");
    assert_eq!(&v4[owner - 4..owner], note_type);
    let mut untyped = v4.clone();
    untyped[owner - 4] = 33;
    assert_eq!(metadata::parse(&untyped), Err(MetadataError::NoMetadata));
}

/// hipcc's own bundles (when hipcc is installed): the code object `fatbin::select` picks per
/// architecture carries the same layouts.
#[test]
fn hipcc_built_bundles() {
    if Command::new("hipcc").arg("--version").output().is_err() {
        transport_core::test_skip::skip(
            "hipcc-built code objects: hipcc is not installed (Debian 12: apt-get install hipcc); the checked-in ones were tested",
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("hip-code-object-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for version in [4, 5] {
        let out = dir.join(format!("mixed-v{version}.bundle"));
        let status = Command::new("hipcc")
            .args(["--offload-arch=gfx90a", "--offload-arch=gfx1030", "-O2", "--cuda-device-only", "-c"])
            .arg(format!("-mcode-object-version={version}"))
            .arg("-o")
            .arg(&out)
            .arg(testdata("mixed.hip"))
            .output()
            .expect("hipcc");
        assert!(status.status.success(), "hipcc: {}", String::from_utf8_lossy(&status.stderr));
        let data = std::fs::read(&out).unwrap();
        let bundle = Bundle::parse(&data).unwrap();
        for (arch, wavefront) in [("gfx90a:sramecc+:xnack-", 64), ("gfx1030", 32)] {
            let entry = fatbin::select(&bundle, arch).unwrap();
            check_mixed(entry.code, version, wavefront, &format!("hipcc v{version} {}", entry.id));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
