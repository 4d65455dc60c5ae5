//! `hip-remote install --prefix DIR`: an installed layout a ROCm user recognises, so that
//! `ROCM_PATH=DIR`, `ROCM_HOME=DIR` and `LD_LIBRARY_PATH=DIR/lib` are all a program needs:
//!
//! - `DIR/lib`: `libamdhip64.so.<major>.<minor>.<patch>` (the real file, named from
//!   `hip/hip_version.h` as ROCm names it) with the links `libamdhip64.so.7` and
//!   `libamdhip64.so`; `libhiprtc.so` the same way; `libamd_smi.so` (AMD SMI for the
//!   worker's devices, `client-capi/amdsmi`); the shim libraries of
//!   `hip-remote-shims` (real file named by the soname, link `lib<name>.so`);
//! - `DIR/include`: the client's headers (`hip/`, `hip_remote/`), embedded in this binary;
//! - `DIR/bin`: `hipcc`, `hipconfig` (which find `DIR/include` and `DIR/lib` from where they
//!   are), `hip-worker` and `hip-remote`; `rocminfo` and `rocm_agent_enumerator`, links to
//!   `hip-remote` that show the worker's devices in ROCm's formats;
//! - `DIR/lib/llvm/bin`: `clang++` and `clang`, links to `bin/hipcc`, which acts as a clang there
//!   (where ROCm keeps its clang: `hipconfig -l` names it; CMake's HIP language compiles with it);
//! - `DIR/lib/cmake`: the CMake packages `hip`, `hip-lang`, `hiprtc`, `hipblas`, `rocblas`, and
//!   `DIR/lib/pkgconfig`: `hip.pc`, `hiprtc.pc`, `hipblas.pc` (from `tools/cli/layout`,
//!   embedded in this binary; all find the prefix from their own place);
//! - `DIR/.info/version`: the ROCm version, as ROCm writes it.
//!
//! `--platform macos|windows` lays out a client built for that system instead (what
//! `scripts/dist.sh` archives; the worker, the shims and the links are Linux's):
//! - macOS: `lib/libamdhip64.dylib`, `libhiprtc.dylib`, `libhipblas.dylib` (install names
//!   `@rpath/<file>`), `include/`, `bin/` `hipcc`, `hipconfig`, `hip-remote`;
//! - Windows: `bin/` AMD's DLL names `amdhip64_7.dll`, `hiprtc0702.dll`, `hipblas.dll` beside
//!   `hipcc.exe`, `hipconfig.exe`, `hip-remote.exe` (Windows finds DLLs beside the program or on
//!   `PATH`), `include/`; the import libraries (`lib/amdhip64.lib`, ...) name those DLLs and are
//!   made by `scripts/dist.sh` with the MinGW `dlltool`.
//!
//! The libraries and programs are taken from the directory of this executable (a cargo
//! profile directory: `scripts/install.sh` builds them) or `--from`. Files are written under a
//! temporary name and renamed into place, so reinstalling over a layout that a running process
//! has mapped is safe.

use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/headers.rs"));

/// The libraries with a versioned real file: cargo's file name and the soname (the real file is
/// named by the HIP version, as ROCm names them).
const VERSIONED_LIBRARIES: &[(&str, &str)] = &[("libamdhip64.so", "libamdhip64.so.7"), ("libhiprtc.so", "libhiprtc.so.7")];
/// Libraries installed under their soname with the usual link name: hipBLAS (forwarded to the
/// worker's BLAS, docs/BLAS.md).
const FORWARDING_LIBRARIES: &[(&str, &str)] = &[("libhipblas.so", "libhipblas.so.3")];
/// Libraries installed under their plain name only: AMD SMI, which its users (the PyPI
/// `amdsmi` package) load as `libamd_smi.so` from `ROCM_PATH/lib` or the loader's path.
const PLAIN_LIBRARIES: &[&str] = &["libamd_smi.so"];

/// Where the clang-compatible driver goes (ROCm's clang directory), and what its `clang++`
/// links to from there: hipcc, which acts as a clang when called by that name.
const CLANG_DRIVER_DIR: &str = "lib/llvm/bin";
const CLANG_DRIVER_TARGET: &str = "../../../bin/hipcc";

/// The programs taken from the build directory (`hip-remote` is this executable).
const PROGRAMS: &[&str] = &["hipcc", "hipconfig", "hip-worker"];

/// ROCm's probe tools, installed as links to `hip-remote`, which answers to these names with
/// the worker's devices (`rocminfo.rs`).
pub const PROBE_LINKS: &[&str] = &["rocminfo", "rocm_agent_enumerator", "amd-smi"];

/// The system a layout is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Platform {
    Linux,
    Macos,
    Windows,
}

/// macOS: cargo's file names are the installed ones (the install names are `@rpath/<file>`).
const MACOS_LIBRARIES: &[(&str, &str)] =
    &[("libamdhip64.dylib", "libamdhip64.dylib"), ("libhiprtc.dylib", "libhiprtc.dylib"), ("libhipblas.dylib", "libhipblas.dylib")];
/// Windows: cargo's DLL names and AMD's (HIP 7: `amdhip64_7.dll`; hiprtc by major and minor).
pub const WINDOWS_LIBRARIES: &[(&str, &str)] =
    &[("amdhip64.dll", "amdhip64_7.dll"), ("hiprtc.dll", "hiprtc0702.dll"), ("hipblas.dll", "hipblas.dll")];
/// The client programs of a macOS or Windows layout (there is no worker there).
const CLIENT_PROGRAMS: &[&str] = &["hipcc", "hipconfig", "hip-remote"];

/// What `cargo build` must have made for an install.
pub const BUILD_COMMAND: &str =
    "cargo build --profile dist -p client-capi -p client-hiprtc -p client-hipblas -p client-amdsmi -p hip-remote-hipcc -p hip-worker -p hip-remote";

/// `(major, minor, patch)` from the embedded `hip/hip_version.h`.
pub fn hip_version() -> Result<(u32, u32, u32), String> {
    let header = HEADERS
        .iter()
        .find(|(path, _)| *path == "hip/hip_version.h")
        .map(|(_, bytes)| String::from_utf8_lossy(bytes))
        .ok_or("no hip/hip_version.h among the embedded headers")?;
    let field = |name: &str| -> Result<u32, String> {
        header
            .lines()
            .find_map(|l| l.trim().strip_prefix("#define ")?.strip_prefix(name)?.trim().parse().ok())
            .ok_or_else(|| format!("hip/hip_version.h defines no numeric {name}"))
    };
    Ok((field("HIP_VERSION_MAJOR")?, field("HIP_VERSION_MINOR")?, field("HIP_VERSION_PATCH")?))
}

pub fn install(prefix: &Path, from: Option<PathBuf>, platform: Platform) -> Result<(), String> {
    match platform {
        Platform::Linux => install_linux(prefix, from),
        Platform::Macos | Platform::Windows => {
            let from = from.ok_or("--platform macos or windows needs --from: the build directory of that target (scripts/dist.sh)")?;
            install_client(prefix, &from, platform)
        }
    }
}

/// A macOS or Windows client layout (see the module's documentation) from `from`.
fn install_client(prefix: &Path, from: &Path, platform: Platform) -> Result<(), String> {
    let (major, minor, patch) = hip_version()?;
    let (libraries, library_dir, exe_suffix) = match platform {
        Platform::Macos => (MACOS_LIBRARIES, prefix.join("lib"), ""),
        _ => (WINDOWS_LIBRARIES, prefix.join("bin"), ".exe"),
    };
    let programs: Vec<String> = CLIENT_PROGRAMS.iter().map(|p| format!("{p}{exe_suffix}")).collect();
    let missing: Vec<&str> =
        libraries.iter().map(|(file, _)| *file).chain(programs.iter().map(String::as_str)).filter(|name| !from.join(name).is_file()).collect();
    if !missing.is_empty() {
        return Err(format!("{} lacks {} (build them: scripts/dist.sh TARGET)", from.display(), missing.join(", ")));
    }
    let (include, bin, info) = (prefix.join("include"), prefix.join("bin"), prefix.join(".info"));
    for dir in [&library_dir, &include, &bin, &info] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    for (file, installed) in libraries {
        copy(&from.join(file), &library_dir.join(installed))?;
    }
    for name in &programs {
        copy(&from.join(name), &bin.join(name))?;
    }
    for (relative, bytes) in HEADERS {
        write(&include.join(relative), bytes)?;
    }
    write(&info.join("version"), format!("{major}.{minor}.0\n").as_bytes())?;
    println!(
        "installed the hip-remote client for {} (HIP {major}.{minor}.{patch}) into {}: {} libraries, {} headers, {}",
        if platform == Platform::Macos { "macOS" } else { "Windows" },
        prefix.display(),
        libraries.len(),
        HEADERS.len(),
        programs.join(", ")
    );
    Ok(())
}

fn install_linux(prefix: &Path, from: Option<PathBuf>) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot locate hip-remote itself: {e}"))?;
    let from = match from {
        Some(dir) => dir,
        None => exe.parent().map(Path::to_path_buf).ok_or("hip-remote's executable has no directory")?,
    };
    let (major, minor, patch) = hip_version()?;
    let (lib, include, bin, info) = (prefix.join("lib"), prefix.join("include"), prefix.join("bin"), prefix.join(".info"));

    // Everything is checked before anything is written: no half-made layout for a missing build.
    let mut missing = Vec::new();
    let mut need = |name: &str| {
        let path = from.join(name);
        if !path.is_file() {
            missing.push(name.to_string());
        }
        path
    };
    let libraries: Vec<(PathBuf, &str)> = VERSIONED_LIBRARIES.iter().map(|(file, soname)| (need(file), *soname)).collect();
    let forwarding: Vec<(PathBuf, &str)> = FORWARDING_LIBRARIES.iter().map(|(file, soname)| (need(file), *soname)).collect();
    let plain: Vec<(PathBuf, &str)> = PLAIN_LIBRARIES.iter().map(|name| (need(name), *name)).collect();
    let shims: Vec<(PathBuf, &hip_remote_shims::ShimLibrary)> = hip_remote_shims::SHIMS.iter().map(|s| (need(s.soname), s)).collect();
    let programs: Vec<(PathBuf, &str)> = PROGRAMS.iter().map(|name| (need(name), *name)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} lacks {} (build them: `{BUILD_COMMAND}`, or run scripts/install.sh {})",
            from.display(),
            missing.join(", "),
            prefix.display()
        ));
    }

    for dir in [&lib, &include, &bin, &info] {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    for (source, soname) in &libraries {
        let link_name = soname.rsplit_once('.').map_or(*soname, |(stem, _)| stem);
        let real = format!("{link_name}.{major}.{minor}.{patch}");
        copy(source, &lib.join(&real))?;
        symlink(&real, &lib.join(soname))?;
        symlink(soname, &lib.join(link_name))?;
    }
    for (source, soname) in &forwarding {
        copy(source, &lib.join(soname))?;
        symlink(soname, &lib.join(soname.rsplit_once('.').map_or(*soname, |(stem, _)| stem)))?;
    }
    for (source, name) in &plain {
        copy(source, &lib.join(name))?;
    }
    for (source, shim) in &shims {
        copy(source, &lib.join(shim.soname))?;
        symlink(shim.soname, &lib.join(shim.link_name()))?;
    }
    for (relative, bytes) in HEADERS {
        write(&include.join(relative), bytes)?;
    }
    for (relative, bytes) in LAYOUT_FILES {
        write(&prefix.join(relative), bytes)?;
    }
    for (source, name) in &programs {
        copy(source, &bin.join(name))?;
    }
    let clang_dir = prefix.join(CLANG_DRIVER_DIR);
    std::fs::create_dir_all(&clang_dir).map_err(|e| format!("{}: {e}", clang_dir.display()))?;
    symlink(CLANG_DRIVER_TARGET, &clang_dir.join("clang++"))?;
    symlink("clang++", &clang_dir.join("clang"))?;
    // A build directory's own hip-remote (another machine's, for a cross build), else this one.
    let built = from.join("hip-remote");
    copy(if built.is_file() { &built } else { &exe }, &bin.join("hip-remote"))?;
    for name in PROBE_LINKS {
        symlink("hip-remote", &bin.join(name))?;
    }
    write(&info.join("version"), format!("{major}.{minor}.0\n").as_bytes())?;

    println!(
        "installed hip-remote (HIP {major}.{minor}.{patch}) into {}:\n  \
         lib/      libamdhip64.so*, libhiprtc.so*, libamd_smi.so, {} shim libraries\n  \
         include/  {} headers (hip/, hip_remote/)\n  \
         bin/      hipcc, hipconfig, hip-worker, hip-remote, rocminfo, rocm_agent_enumerator, amd-smi\n  \
         lib/llvm/bin/clang++ (for CMake's HIP language)\n  \
         lib/cmake, lib/pkgconfig: hip, hip-lang, hiprtc, hipblas, rocblas; hip.pc, hiprtc.pc, hipblas.pc\n\
         use it with: export ROCM_PATH={p} ROCM_HOME={p} LD_LIBRARY_PATH={p}/lib (CMake: -DCMAKE_PREFIX_PATH={p})",
        prefix.display(),
        shims.len(),
        HEADERS.len(),
        p = prefix.display()
    );
    Ok(())
}

/// A temporary name beside `dest`, for writing before a rename.
fn temporary(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp-{}", std::process::id()));
    dest.with_file_name(name)
}

/// Copies `source` (with its permissions) to `dest`, replacing a file or link there.
fn copy(source: &Path, dest: &Path) -> Result<(), String> {
    let tmp = temporary(dest);
    std::fs::copy(source, &tmp).map_err(|e| format!("copy {} to {}: {e}", source.display(), tmp.display()))?;
    std::fs::rename(&tmp, dest).map_err(|e| format!("{}: {e}", dest.display()))
}

fn write(dest: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let tmp = temporary(dest);
    std::fs::write(&tmp, bytes).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, dest).map_err(|e| format!("{}: {e}", dest.display()))
}

/// Makes `link` a relative symlink to `target` (a name in the same directory), replacing
/// what is there.
fn symlink(target: &str, link: &Path) -> Result<(), String> {
    let tmp = temporary(link);
    let _ = std::fs::remove_file(&tmp);
    #[cfg(unix)]
    std::os::unix::fs::symlink(target, &tmp).map_err(|e| format!("{} -> {target}: {e}", tmp.display()))?;
    #[cfg(not(unix))]
    return Err(format!("{}: symbolic links need a Unix system", link.display()));
    std::fs::rename(&tmp, link).map_err(|e| format!("{}: {e}", link.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_version_are_embedded() {
        assert!(HEADERS.iter().any(|(p, _)| *p == "hip/hip_runtime.h"));
        assert!(HEADERS.iter().any(|(p, _)| *p == "hip_remote/hipcc_device.h"));
        let (major, _, _) = hip_version().unwrap();
        assert_eq!(major, 7);
    }
}
