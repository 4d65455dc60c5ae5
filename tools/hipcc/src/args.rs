//! hipcc's command line, sorted into what each pass needs.

use std::path::PathBuf;

/// The default NVIDIA virtual architecture: PTX for it JIT-compiles on Volta and every newer
/// GPU.
pub const DEFAULT_PTX_ARCH: &str = "sm_70";

/// What the invocation asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Compile and link an executable or shared library.
    Link,
    /// `-c`: objects only.
    Compile,
    /// `-E` / `--preprocess`: preprocess.
    Preprocess,
    /// `--genco`: the fat binary alone, for `hipModuleLoad`.
    CodeObject,
    /// `--version`.
    Version,
}

/// A source file and the language it is compiled as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    /// HIP (kernels allowed) or plain C/C++.
    pub hip: bool,
    /// `-x` given for it (`c`, `c++`, `hip`), passed on for non-HIP files.
    pub language: Option<String>,
}

/// How the command line is read: as AMD's `hipcc` reads it, or as clang does (the driver
/// installed where ROCm keeps its clang, `PREFIX/lib/llvm/bin/clang++`, which build systems
/// such as CMake's HIP language drive directly).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `hipcc`: `.cpp`/`.cc` sources are HIP; naming targets replaces the default ones.
    Hipcc,
    /// `clang++`: only `-x hip` and `.hip`/`.cu` sources are HIP; AMD processors named
    /// (`--offload-arch=gfx90a`, CMake's `CMAKE_HIP_ARCHITECTURES`) add to the portable
    /// targets instead of replacing them, and are left to the device source unless AMD's ROCm
    /// is named for them (`HIP_REMOTE_AMD_ROCM_PATH`).
    Clang,
}

/// The offload architecture that stands for hip-remote's default targets (PTX for
/// [`DEFAULT_PTX_ARCH`] and the device source): what the clang driver reports as its target
/// processor under `-v`, so CMake picks it as its default `CMAKE_HIP_ARCHITECTURES`.
pub const PORTABLE_ARCH: &str = "portable";

/// The parsed command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Args {
    pub mode: Mode,
    pub output: Option<PathBuf>,
    pub sources: Vec<Source>,
    /// Objects and libraries given as files.
    pub link_inputs: Vec<PathBuf>,
    /// Flags every compile pass gets (-D, -U, -I, -include, -isystem, -std=).
    pub preprocessor: Vec<String>,
    /// `-I` directories, in order (for the device source's includes).
    pub include_dirs: Vec<PathBuf>,
    /// `-O*`.
    pub optimization: Option<String>,
    /// Other flags for the host compile (warnings, -g, -f*, -m*).
    pub host_only: Vec<String>,
    /// Flags for the link (-L, -l, -Wl,, -shared, -pthread...).
    pub link: Vec<String>,
    /// NVIDIA virtual architectures to carry PTX for.
    pub ptx_archs: Vec<String>,
    /// AMD processors asked for (`--offload-arch=gfx90a`).
    pub amd_archs: Vec<String>,
    /// Whether to carry the device source (on unless `--no-device-source`).
    pub device_source: bool,
    /// `-v`: print each command.
    pub verbose: bool,
    /// `--hip-link` or a HIP source: link against our `libamdhip64` (clang dialect; hipcc
    /// always does).
    pub hip_link: bool,
    /// How the command line was read.
    pub dialect: Dialect,
    /// `--cuda-host-only`/`--offload-host-only`: the host object alone, with no device code
    /// (as clang: its kernels are not registered). CMake's HIP compiler check asks for it.
    pub host_only_object: bool,
}

impl Args {
    /// The host-pass flags the device passes get too: every clang flag (`-f…` such as
    /// `-ferror-limit=0`, warnings, `-g`, `-Xclang`/`-mllvm` pairs…) except those that belong
    /// to the host object alone: dependency files (`-M…`, which each pass would overwrite),
    /// host CPU choices (`-m…`), `-pthread` and `-v` (the device passes are printed as
    /// commands instead).
    pub fn device_pass_flags(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut flags = self.host_only.iter();
        while let Some(flag) = flags.next() {
            match flag.as_str() {
                "-MF" | "-MT" | "-MQ" => {
                    flags.next();
                }
                "-Xclang" | "-mllvm" => {
                    out.push(flag.as_str());
                    if let Some(value) = flags.next() {
                        out.push(value.as_str());
                    }
                }
                "-v" | "-pthread" => {}
                f if f.starts_with("-M") || f.starts_with("-m") => {}
                f => out.push(f),
            }
        }
        out
    }
}

/// Flags that take the next argument as their value.
const WITH_VALUE: &[&str] = &[
    "-D",
    "-U",
    "-I",
    "-include",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-L",
    "-l",
    "-x",
    "-o",
    "-MF",
    "-MT",
    "-MQ",
    "-Xlinker",
    "-Xclang",
    "-mllvm",
];
/// Extensions of HIP sources (compiled with kernels, as AMD's hipcc does for .cpp too).
const HIP_EXTENSIONS: &[&str] = &["hip", "cu", "cpp", "cc", "cxx", "c++", "C"];
/// Extensions clang itself compiles as HIP or CUDA (the clang dialect).
const CLANG_HIP_EXTENSIONS: &[&str] = &["hip", "cu"];

/// Parses hipcc's arguments (without the program name).
pub fn parse(argv: &[String]) -> Result<Args, String> {
    parse_as(argv, Dialect::Hipcc)
}

/// Parses the arguments of hipcc (`Dialect::Hipcc`) or of the clang driver.
pub fn parse_as(argv: &[String], dialect: Dialect) -> Result<Args, String> {
    let mut a = Args {
        mode: Mode::Link,
        output: None,
        sources: Vec::new(),
        link_inputs: Vec::new(),
        preprocessor: Vec::new(),
        include_dirs: Vec::new(),
        optimization: None,
        host_only: Vec::new(),
        link: Vec::new(),
        ptx_archs: Vec::new(),
        amd_archs: Vec::new(),
        device_source: true,
        verbose: false,
        hip_link: dialect == Dialect::Hipcc,
        dialect,
        host_only_object: false,
    };
    let mut language: Option<String> = None;
    let mut explicit_targets = false;
    let mut portable = false;
    let mut iter = argv.iter().cloned();
    while let Some(arg) = iter.next() {
        // `-D X` and `-DX` alike.
        let (flag, value) = match WITH_VALUE.iter().find(|f| arg == **f) {
            Some(f) => (f.to_string(), Some(iter.next().ok_or_else(|| format!("{arg} needs a value"))?)),
            None => (arg.clone(), None),
        };
        if let Some(v) = value {
            match flag.as_str() {
                "-o" => a.output = Some(PathBuf::from(v)),
                "-x" => language = (v != "none").then_some(v),
                "-D" | "-U" | "-include" | "-isystem" | "-iquote" | "-idirafter" => {
                    a.preprocessor.push(flag.clone());
                    a.preprocessor.push(v);
                }
                "-I" => {
                    a.include_dirs.push(PathBuf::from(&v));
                    a.preprocessor.push(format!("-I{v}"));
                }
                "-L" | "-l" | "-Xlinker" => {
                    a.link.push(flag.clone());
                    a.link.push(v);
                }
                "-MF" | "-MT" | "-MQ" | "-Xclang" | "-mllvm" => {
                    a.host_only.push(flag.clone());
                    a.host_only.push(v);
                }
                _ => unreachable!("every flag with a value is handled"),
            }
            continue;
        }
        match flag.as_str() {
            "--version" => a.mode = Mode::Version,
            "-c" => a.mode = Mode::Compile,
            // AMD's hipcc spells it `--preprocess` too (CuPy does).
            "-E" | "--preprocess" => a.mode = Mode::Preprocess,
            "--genco" => a.mode = Mode::CodeObject,
            "-v" => {
                a.verbose = true;
                a.host_only.push(arg);
            }
            "--no-device-source" => a.device_source = false,
            "--cuda-host-only" | "--offload-host-only" => a.host_only_object = true,
            "--cuda-device-only" | "--offload-device-only" => {
                return Err(format!("{flag}: hip-remote's device code is a fat binary of several targets; write it with --genco"))
            }
            "-fno-gpu-rdc" => {}
            "-fgpu-rdc" => {
                return Err("-fgpu-rdc (relocatable device code) is not supported by hip-remote's hipcc: each \
                            translation unit's kernels must be complete in that unit (hiprtc's hipLink* APIs link \
                            device code at run time)"
                    .to_string())
            }
            _ if flag.starts_with("--offload-arch=") || flag.starts_with("--cuda-gpu-arch=") || flag.starts_with("--amdgpu-target=") => {
                explicit_targets = true;
                let list = flag.split_once('=').map(|(_, v)| v).unwrap_or("");
                for arch in list.split(',').filter(|s| !s.is_empty()) {
                    let processor = arch.split(':').next().unwrap_or(arch);
                    if processor == PORTABLE_ARCH {
                        portable = true;
                    } else if processor.starts_with("sm_") || processor.starts_with("compute_") {
                        a.ptx_archs.push(processor.replace("compute_", "sm_"));
                    } else if processor.starts_with("gfx") {
                        a.amd_archs.push(arch.to_string());
                    } else if processor == "native" || processor == "host" {
                        // The device is on the worker; nothing here to detect.
                    } else {
                        return Err(format!("unknown offload architecture '{arch}' (expected gfx…, sm_…, {PORTABLE_ARCH}, host or native)"));
                    }
                }
            }
            "--hip-link" => a.hip_link = true,
            _ if flag.starts_with("--no-offload-arch") || flag.starts_with("--rocm-path") || flag.starts_with("--hip-path") => {}
            _ if flag.starts_with("-D") || flag.starts_with("-U") || flag.starts_with("-std=") || flag.starts_with("--std=") => {
                a.preprocessor.push(flag)
            }
            _ if flag.starts_with("-I") => {
                a.include_dirs.push(PathBuf::from(&flag[2..]));
                a.preprocessor.push(flag);
            }
            _ if flag.starts_with("-O") => a.optimization = Some(flag),
            _ if flag.starts_with("-L") || flag.starts_with("-l") || flag.starts_with("-Wl,") => a.link.push(flag),
            "-shared" | "-static" | "-pthread" | "-rdynamic" | "-pie" | "-no-pie" => {
                a.link.push(flag.clone());
                if flag == "-pthread" {
                    a.host_only.push(flag);
                }
            }
            _ if flag.starts_with('-') => a.host_only.push(flag),
            _ => {
                let path = PathBuf::from(&flag);
                let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
                let extensions = if dialect == Dialect::Clang { CLANG_HIP_EXTENSIONS } else { HIP_EXTENSIONS };
                let hip = match language.as_deref() {
                    Some("hip") | Some("cuda") => true,
                    Some(_) => false,
                    None => extensions.contains(&ext),
                };
                let is_source = language.is_some() || hip || ext == "c" || HIP_EXTENSIONS.contains(&ext) || flag == "/dev/null";
                if is_source {
                    a.sources.push(Source { path, hip, language: language.clone() });
                } else {
                    a.link_inputs.push(path);
                }
            }
        }
    }
    // Without any target named, NVIDIA workers get PTX; the device source is always there.
    // clang's dialect keeps PTX unless an NVIDIA architecture is named: the AMD processors a
    // build system names are extra (the device source serves AMD workers anyway).
    let ptx_default = match dialect {
        Dialect::Hipcc => (a.amd_archs.is_empty() && !explicit_targets) || portable,
        Dialect::Clang => true,
    };
    if a.ptx_archs.is_empty() && ptx_default {
        a.ptx_archs.push(DEFAULT_PTX_ARCH.to_string());
    }
    if a.sources.iter().any(|s| s.hip) {
        a.hip_link = true;
    }
    a.ptx_archs.dedup();
    if a.mode != Mode::Version && a.sources.is_empty() && a.link_inputs.is_empty() {
        return Err("no input files".to_string());
    }
    if matches!(a.mode, Mode::Compile | Mode::CodeObject) && a.output.is_some() && a.sources.len() > 1 {
        return Err("-o with -c or --genco takes a single source file".to_string());
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, String> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn common_flags_are_sorted_by_pass() {
        let a = args("-O3 -DN=4 -I inc -Iother -std=c++17 --offload-arch=gfx90a,sm_80 -Wall -c k.hip -o k.o").unwrap();
        assert_eq!(a.mode, Mode::Compile);
        assert_eq!(a.output, Some(PathBuf::from("k.o")));
        assert_eq!(a.preprocessor, ["-DN=4", "-Iinc", "-Iother", "-std=c++17"]);
        assert_eq!(a.include_dirs, [PathBuf::from("inc"), PathBuf::from("other")]);
        assert_eq!(a.optimization.as_deref(), Some("-O3"));
        assert_eq!(a.amd_archs, ["gfx90a"]);
        assert_eq!(a.ptx_archs, ["sm_80"]);
        assert_eq!(a.host_only, ["-Wall"]);
        assert!(a.sources[0].hip);
    }

    #[test]
    fn languages_and_link_inputs() {
        let a = args("main.cpp util.c -x hip kernels.txt lib.a -L/x -lfoo -o prog").unwrap();
        let langs: Vec<(String, bool)> = a.sources.iter().map(|s| (s.path.display().to_string(), s.hip)).collect();
        assert_eq!(
            langs,
            [("main.cpp".to_string(), true), ("util.c".to_string(), false), ("kernels.txt".to_string(), true), ("lib.a".to_string(), true)]
        );
        let b = args("main.o lib.a -o prog").unwrap();
        assert_eq!(b.link_inputs, [PathBuf::from("main.o"), PathBuf::from("lib.a")]);
        assert_eq!(a.link, ["-L/x", "-lfoo"]);
        assert_eq!(a.ptx_archs, [DEFAULT_PTX_ARCH]);
        assert!(args("--offload-arch=gfx90a k.hip").unwrap().ptx_archs.is_empty(), "named targets only");
        assert!(args("--offload-arch=host k.hip").unwrap().ptx_archs.is_empty(), "the device source alone");
    }

    #[test]
    fn device_passes_get_every_clang_flag_but_the_host_object_s() {
        let a = args("-ferror-limit=0 -Wall -MD -MT k.o -MF k.d -march=native -g -Xclang -fno-x -mllvm -opt -pthread -v -c k.hip").unwrap();
        assert_eq!(a.device_pass_flags(), ["-ferror-limit=0", "-Wall", "-g", "-Xclang", "-fno-x", "-mllvm", "-opt"]);
    }

    #[test]
    fn clang_dialect_keeps_the_portable_targets() {
        let clang = |s: &str| parse_as(&s.split_whitespace().map(String::from).collect::<Vec<_>>(), Dialect::Clang);
        let a = clang("--offload-arch=gfx90a -x hip -c k.cpp -o k.o").unwrap();
        assert_eq!((a.ptx_archs.as_slice(), a.amd_archs.as_slice()), (&[DEFAULT_PTX_ARCH.to_string()][..], &["gfx90a".to_string()][..]));
        assert!(a.sources[0].hip && a.hip_link);
        let b = clang("-c main.cpp -o main.o").unwrap();
        assert!(!b.sources[0].hip && !b.hip_link, "clang compiles .cpp as C++");
        assert!(clang("main.o -o prog").is_ok_and(|c| !c.hip_link));
        assert!(clang("--hip-link main.o -o prog").unwrap().hip_link);
        let p = args("--offload-arch=portable k.hip").unwrap();
        assert_eq!(p.ptx_archs, [DEFAULT_PTX_ARCH]);
    }

    #[test]
    fn refusals_are_clear() {
        assert!(args("-fgpu-rdc -c k.hip").unwrap_err().contains("-fgpu-rdc"));
        assert!(args("--offload-arch=pentium k.hip").unwrap_err().contains("pentium"));
        assert!(args("-O2").unwrap_err().contains("no input"));
        assert!(args("-c a.hip b.hip -o x.o").is_err());
        assert_eq!(args("--version").unwrap().mode, Mode::Version);
    }

    #[test]
    fn cupy_invocations() {
        // cupy/cuda/compiler.py: `_preprocess_hipcc` and `compile_using_hipcc`.
        let pre = args("--preprocess -fcuda-flush-denormals-to-zero -I/site/cupy/_core/include /tmp/x/kern.cpp").unwrap();
        assert_eq!(pre.mode, Mode::Preprocess);
        assert_eq!(pre.include_dirs, [PathBuf::from("/site/cupy/_core/include")]);
        let genco = args("--genco -fcuda-flush-denormals-to-zero -I/site/inc /tmp/x/kern.cpp -o /tmp/x/kern.hsaco").unwrap();
        assert_eq!(genco.mode, Mode::CodeObject);
        assert_eq!(genco.output, Some(PathBuf::from("/tmp/x/kern.hsaco")));
        assert!(genco.sources[0].hip, "CuPy's .cpp source is HIP");
    }
}
