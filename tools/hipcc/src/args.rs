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
}

/// Flags that take the next argument as their value.
const WITH_VALUE: &[&str] =
    &["-D", "-U", "-I", "-include", "-isystem", "-iquote", "-idirafter", "-L", "-l", "-x", "-o", "-MF", "-MT", "-MQ", "-Xlinker"];
/// Extensions of HIP sources (compiled with kernels, as AMD's hipcc does for .cpp too).
const HIP_EXTENSIONS: &[&str] = &["hip", "cu", "cpp", "cc", "cxx", "c++", "C"];

/// Parses hipcc's arguments (without the program name).
pub fn parse(argv: &[String]) -> Result<Args, String> {
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
    };
    let mut language: Option<String> = None;
    let mut explicit_targets = false;
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
                "-MF" | "-MT" | "-MQ" => {
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
                    if processor.starts_with("sm_") || processor.starts_with("compute_") {
                        a.ptx_archs.push(processor.replace("compute_", "sm_"));
                    } else if processor.starts_with("gfx") {
                        a.amd_archs.push(arch.to_string());
                    } else if processor == "native" || processor == "host" {
                        // The device is on the worker; nothing here to detect.
                    } else {
                        return Err(format!("unknown offload architecture '{arch}' (expected gfx…, sm_…, host or native)"));
                    }
                }
            }
            _ if flag.starts_with("--no-offload-arch")
                || flag == "--hip-link"
                || flag.starts_with("--rocm-path")
                || flag.starts_with("--hip-path") => {}
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
                let hip = match language.as_deref() {
                    Some("hip") | Some("cuda") => true,
                    Some(_) => false,
                    None => HIP_EXTENSIONS.contains(&ext),
                };
                let is_source = language.is_some() || hip || ext == "c" || flag == "/dev/null";
                if is_source {
                    a.sources.push(Source { path, hip, language: language.clone() });
                } else {
                    a.link_inputs.push(path);
                }
            }
        }
    }
    // Without any target named, NVIDIA workers get PTX; the device source is always there.
    if a.ptx_archs.is_empty() && a.amd_archs.is_empty() && !explicit_targets {
        a.ptx_archs.push(DEFAULT_PTX_ARCH.to_string());
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
