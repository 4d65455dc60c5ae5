//! Where things are: the system clang, our headers and our libraries, for a source tree
//! (`target/<profile>/hipcc`) and for an installed layout (`PREFIX/bin/hipcc` beside
//! `PREFIX/include` and `PREFIX/lib`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable naming the clang++ to drive.
pub const CLANG_ENV: &str = "HIP_REMOTE_CLANG";
/// clang++ executables tried in order when the variable is unset (the first that runs).
const CLANG_CANDIDATES: &[&str] = &["clang++-15", "clang++-16", "clang++-17", "clang++-18", "clang++-19", "clang++-14", "clang++"];
/// Environment variable naming libdevice (`libdevice.10.bc`) for NVIDIA math functions.
pub const LIBDEVICE_ENV: &str = "HIP_REMOTE_LIBDEVICE";
/// A file that marks a directory as our include directory.
const INCLUDE_MARKER: &str = "hip_remote/hipcc_device.h";
/// Where an installed layout keeps its clang-compatible driver (`clang`, `clang++`: links to
/// `bin/hipcc`), relative to the prefix: ROCm keeps its clang in `lib/llvm/bin`, which
/// `hipconfig --hipclangpath` names and CMake's HIP language looks in.
pub const CLANG_DRIVER_DIR: &str = "lib/llvm/bin";
/// How far above the executable's directory an installed prefix is looked for
/// (`PREFIX/bin/hipcc`, `PREFIX/lib/llvm/bin/clang++`).
const MAX_PREFIX_DEPTH: usize = 3;

/// The paths hipcc works with.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub clang: PathBuf,
    /// Our HIP headers (`hip/hip_runtime.h`, `hip_remote/hipcc_device.h`).
    pub include_dir: PathBuf,
    /// Where `libamdhip64.so` is.
    pub lib_dir: PathBuf,
    /// libdevice, when found: NVIDIA math functions at full precision.
    pub libdevice: Option<PathBuf>,
    /// The installation prefix (`hipconfig --path`).
    pub prefix: PathBuf,
}

/// Where our headers and libraries are: all that hipconfig, `hipcc --version` and the include
/// list of `hipcc -E -v` need (no compiler).
#[derive(Clone, Debug)]
pub struct Layout {
    /// Our HIP headers (`hip/hip_runtime.h`, `hip_remote/hipcc_device.h`).
    pub include_dir: PathBuf,
    /// Where `libamdhip64.so` is.
    pub lib_dir: PathBuf,
    /// The installation prefix (`hipconfig --path`).
    pub prefix: PathBuf,
}

impl Layout {
    /// Finds the headers and libraries (an installed prefix, `ROCM_PATH`, or a source tree), or
    /// says what is missing.
    pub fn find() -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot locate hipcc itself: {e}"))?;
        let exe_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
        let env_prefix = ["HIP_PATH", "ROCM_PATH", "ROCM_HOME"]
            .iter()
            .filter_map(std::env::var_os)
            .map(PathBuf::from)
            .find(|p| p.join("include").join(INCLUDE_MARKER).is_file());
        let installed =
            exe_dir.ancestors().skip(1).take(MAX_PREFIX_DEPTH).find(|p| p.join("include").join(INCLUDE_MARKER).is_file()).map(Path::to_path_buf);
        let (prefix, include_dir, lib_dir) = match env_prefix.or(installed) {
            Some(prefix) => (prefix.clone(), prefix.join("include"), prefix.join("lib")),
            None => {
                // A source tree: headers in client-capi/include, libraries beside this binary.
                let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../client-capi/include");
                let include = include.canonicalize().unwrap_or(include);
                (exe_dir.clone(), include, exe_dir.clone())
            }
        };
        if !include_dir.join(INCLUDE_MARKER).is_file() {
            return Err(format!("hip-remote's headers are not at {} (set ROCM_PATH to an installed prefix)", include_dir.display()));
        }
        Ok(Self { include_dir, lib_dir, prefix })
    }

    /// The clang-compatible driver's directory when this layout has one (an installed prefix).
    pub fn clang_driver_dir(&self) -> Option<PathBuf> {
        let dir = self.prefix.join(CLANG_DRIVER_DIR);
        dir.join("clang++").is_file().then_some(dir)
    }
}

impl Toolchain {
    /// Finds everything, or says what is missing.
    pub fn find() -> Result<Self, String> {
        let Layout { include_dir, lib_dir, prefix } = Layout::find()?;
        Ok(Self { clang: find_clang()?, include_dir, lib_dir, libdevice: find_libdevice(), prefix })
    }

    /// `clang++` with `args`.
    pub fn clang(&self) -> Command {
        Command::new(&self.clang)
    }
}

/// Whether `program` is a clang that runs, and not this very driver (`PREFIX/lib/llvm/bin/
/// clang++` links to hipcc: driving it would call ourselves forever).
fn runs(program: &Path) -> bool {
    let ourselves = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    if ourselves.is_some() && std::fs::canonicalize(program).ok() == ourselves {
        return false;
    }
    Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// The clang++ hipcc drives: `HIP_REMOTE_CLANG`, else `HIP_CLANG_PATH/clang++`, else the first
/// of the usual names on `PATH` that runs.
/// The path is absolute when found on `PATH`, so its directory can be reported
/// (`hipconfig --hipclangpath`).
pub fn find_clang() -> Result<PathBuf, String> {
    if let Some(named) = std::env::var_os(CLANG_ENV) {
        let named = on_path(Path::new(&named));
        return if runs(&named) { Ok(named) } else { Err(format!("{CLANG_ENV}={} does not run", named.display())) };
    }
    if let Some(dir) = std::env::var_os("HIP_CLANG_PATH") {
        let clang = PathBuf::from(dir).join("clang++");
        if runs(&clang) {
            return Ok(clang);
        }
    }
    CLANG_CANDIDATES.iter().map(|name| on_path(Path::new(name))).find(|c| runs(c)).ok_or_else(|| {
        format!(
            "no clang++ found (tried {}): hip-remote's hipcc drives the system clang (14 or newer, with the \
             NVPTX target); install clang or name one with {CLANG_ENV}",
            CLANG_CANDIDATES.join(", ")
        )
    })
}

/// `program` as the shell would find it: a bare name looked up on `PATH` (itself when absent).
fn on_path(program: &Path) -> PathBuf {
    if program.components().count() != 1 {
        return program.to_path_buf();
    }
    let dirs = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&dirs).map(|dir| dir.join(program)).find(|p| p.is_file()).unwrap_or_else(|| program.to_path_buf())
}

fn find_libdevice() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(LIBDEVICE_ENV) {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let roots = ["CUDA_PATH", "CUDA_HOME"].iter().filter_map(std::env::var_os).map(PathBuf::from).chain([PathBuf::from("/usr/local/cuda")]);
    roots.map(|r| r.join("nvvm/libdevice/libdevice.10.bc")).find(|p| p.is_file())
}
