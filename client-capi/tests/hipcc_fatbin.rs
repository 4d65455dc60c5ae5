//! Real fat binaries: `testdata/hipcc/` holds a tiny `<<<>>>` program built by Debian 12's
//! `hipcc` (ROCm 5.2) for gfx90a and for gfx90a + gfx1030, its `.hip_fatbin` section, and that
//! section as compressed bundles (`build.sh` regenerates them all).
//!
//! - the parser reads hipcc's own output: wrapper, bundle, entries, the amdgcn code objects,
//!   and picks the right code object per architecture;
//! - the executable, run against this library and a host-backend worker, registers its fat
//!   binary and gets `hipErrorNoBinaryForGpu` on launch, with a message naming the
//!   architectures it carries and the worker's (`host`).

mod support;

use amdhip64::fatbin::{self, Bundle, Extent, ImageKind, Wrapper};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hipcc").join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(testdata(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `(file offset, address, size)` of the named section of a 64-bit little-endian ELF file.
fn section(elf: &[u8], want: &str) -> (usize, u64, usize) {
    let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
    let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
    let (shoff, shnum, shstrndx) = (u64_at(40) as usize, u16_at(60), u16_at(62));
    let strtab = u64_at(shoff + shstrndx * 64 + 24) as usize;
    (0..shnum)
        .map(|i| shoff + i * 64)
        .find(|&sh| {
            let name = &elf[strtab + u32_at(sh)..];
            &name[..name.iter().position(|&b| b == 0).unwrap()] == want.as_bytes()
        })
        .map(|sh| (u64_at(sh + 24) as usize, u64_at(sh + 16), u64_at(sh + 32) as usize))
        .unwrap_or_else(|| panic!("no section {want}"))
}

/// The extent of the image starting at `data[0]`, growing the view as a pointer reader does.
fn extent(data: &[u8]) -> Extent {
    let mut seen = 0;
    loop {
        match fatbin::image_extent(&data[..seen]).expect("extent") {
            Extent::NeedMore(n) => {
                assert!(n > seen && n <= data.len(), "NeedMore({n}) with {} bytes", data.len());
                seen = n;
            }
            done => return done,
        }
    }
}

#[test]
fn hipcc_wrapper_and_bundle_parse() {
    let exe = read("vadd-gfx90a-gfx1030");
    let section_bundle = read("vadd-2arch.bundle");
    // The wrapper in .hipFatBinSegment points at .hip_fatbin.
    let (seg_off, _, seg_len) = section(&exe, ".hipFatBinSegment");
    let (fb_off, fb_addr, fb_len) = section(&exe, ".hip_fatbin");
    assert_eq!(seg_len, fatbin::WRAPPER_LEN);
    let wrapper = Wrapper::parse(&exe[seg_off..seg_off + seg_len]).expect("wrapper");
    assert_eq!(wrapper.binary, fb_addr);
    // The bundle's own headers give its length: the section less its trailing NUL (clang
    // emits the bundle as a string constant).
    let in_exe = &exe[fb_off..fb_off + fb_len];
    assert_eq!(in_exe, section_bundle.as_slice());
    let Extent::Complete(len) = extent(in_exe) else { panic!("a plain bundle has a size") };
    assert!(len <= fb_len && in_exe[len..].iter().all(|&b| b == 0), "bundle {len} bytes, section {fb_len}");
    assert_eq!(fatbin::classify(in_exe), Ok(ImageKind::Bundle));

    let bundle = Bundle::parse(in_exe).expect("bundle");
    let ids: Vec<&str> = bundle.entries().iter().map(|e| e.id).collect();
    assert_eq!(ids, ["host-x86_64-unknown-linux", "hipv4-amdgcn-amd-amdhsa--gfx1030", "hipv4-amdgcn-amd-amdhsa--gfx90a"]);
    for e in &bundle.entries()[1..] {
        // Each GPU entry is an AMD GPU code object whose headers account for all its bytes.
        assert_eq!(fatbin::classify(e.code), Ok(ImageKind::Elf { machine: fatbin::EM_AMDGPU }), "{}", e.id);
        assert_eq!(extent(e.code), Extent::Complete(e.code.len()), "{}", e.id);
    }
    assert!(bundle.entries()[0].code.is_empty());
}

#[test]
fn hipcc_code_object_selection() {
    let data = read("vadd-2arch.bundle");
    let bundle = Bundle::parse(&data).unwrap();
    let pick = |arch: &str| fatbin::select(&bundle, arch).map(|e| e.id);
    assert_eq!(pick("gfx90a:sramecc+:xnack-"), Ok("hipv4-amdgcn-amd-amdhsa--gfx90a"));
    assert_eq!(pick("gfx90a:sramecc-:xnack+"), Ok("hipv4-amdgcn-amd-amdhsa--gfx90a"));
    assert_eq!(pick("gfx1030"), Ok("hipv4-amdgcn-amd-amdhsa--gfx1030"));
    let miss = fatbin::select(&bundle, "gfx942:sramecc+:xnack-").unwrap_err();
    assert_eq!(miss.available, ["gfx1030", "gfx90a"]);
    let host = fatbin::select(&bundle, "host").unwrap_err().to_string();
    assert!(host.contains("'host'") && host.contains("gfx1030, gfx90a") && host.contains("can never run there"), "{host}");

    let single = read("vadd-gfx90a");
    let (off, _, len) = section(&single, ".hip_fatbin");
    let one = Bundle::parse(&single[off..off + len]).unwrap();
    assert_eq!(fatbin::select(&one, "gfx90a").unwrap().id, "hipv4-amdgcn-amd-amdhsa--gfx90a");
    assert_eq!(fatbin::select(&one, "gfx1030").unwrap_err().available, ["gfx90a"]);
}

#[test]
fn compressed_bundles_decompress_to_the_hipcc_section() {
    let plain = read("vadd-2arch.bundle");
    for (name, sized) in [("vadd-2arch.ccob-v1-zstd", false), ("vadd-2arch.ccob-v2-zlib", true), ("vadd-2arch.ccob-v3-zstd", true)] {
        let c = read(name);
        assert_eq!(fatbin::classify(&c), Ok(ImageKind::CompressedBundle), "{name}");
        assert_eq!(fatbin::decompress(&c).unwrap().as_ref(), plain.as_slice(), "{name}");
        let want = if sized { Extent::Complete(c.len()) } else { Extent::Unsized };
        assert_eq!(extent(&c), want, "{name}");
        // Followed by the next translation unit's bundle (as in .hip_fatbin): still exact.
        let mut followed = c.clone();
        followed.extend_from_slice(&plain);
        assert_eq!(fatbin::decompress(&followed).unwrap().as_ref(), plain.as_slice(), "{name}");
        // Every truncation and every single-byte corruption is an error or a valid parse,
        // never a panic.
        for n in 0..c.len() {
            let _ = fatbin::decompress(&c[..n]);
        }
        for i in (0..c.len()).step_by(7) {
            let mut bad = c.clone();
            bad[i] ^= 0x5a;
            if let Ok(p) = fatbin::decompress(&bad) {
                let _ = Bundle::parse(&p);
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn hipcc_program_on_the_host_backend_gets_no_binary_for_gpu() {
    let dir = support::temp_dir("hipcc-fatbin");
    // hipcc (ROCm 5.2) linked the program against libamdhip64.so.5.
    let lib = support::artifact("libamdhip64.so");
    for name in ["libamdhip64.so.5", "libamdhip64.so.7"] {
        std::os::unix::fs::symlink(&lib, dir.join(name)).expect("symlink");
    }
    let worker = support::Worker::start(&dir);
    for exe in ["vadd-gfx90a", "vadd-gfx90a-gfx1030"] {
        let out = support::run_bounded(
            Command::new(testdata(exe)).env("LD_LIBRARY_PATH", &dir).env("HIP_REMOTE_WORKER", &worker.addr).env_remove("HIP_REMOTE_DEBUG"),
            Duration::from_secs(60),
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ctx = format!("{exe}: status {}\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status);
        assert_eq!(out.status.code(), Some(1), "{ctx}");
        for line in [
            "malloc: 0 hipSuccess",
            "copy: 0 hipSuccess",
            "symbol: 209 hipErrorNoBinaryForGpu",
            "launch: 209 hipErrorNoBinaryForGpu",
            "sync: 0 hipSuccess",
        ] {
            assert!(stdout.lines().any(|l| l == line), "missing {line:?}\n{ctx}");
        }
        // Said once, without HIP_REMOTE_DEBUG, naming both sides.
        let said: Vec<&str> = stderr.lines().filter(|l| l.contains("hipErrorNoBinaryForGpu")).collect();
        assert_eq!(said.len(), 1, "{ctx}");
        let carried = if exe == "vadd-gfx90a" { "carries: gfx90a." } else { "carries: gfx1030, gfx90a." };
        assert!(said[0].contains("'host'") && said[0].contains(carried) && said[0].contains("build the program with hip-remote's hipcc"), "{ctx}");
        assert!(!stderr.contains("version information"), "symbol version warning from the loader:\n{ctx}");
    }
    drop(worker);
    let _ = std::fs::remove_dir_all(&dir);
}
