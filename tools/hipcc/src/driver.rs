//! The passes: for each HIP source, the device code for every target (PTX per NVIDIA virtual
//! architecture, the device source for workers that compile, AMD code objects when asked and
//! possible), one offload bundle holding them, and the host object embedding that bundle;
//! then the link against our `libamdhip64`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hip_code_object::fatbin::write_bundle;
use hip_code_object::portable::{SourceEntry, DEVICE_SOURCE_MACRO, PTX_ENTRY_PREFIX, SOURCE_ENTRY_ID};

use crate::args::{parse_as, Args, Dialect, Mode, Source, PORTABLE_ARCH};
use crate::device_source::{self, DeviceSource};
use crate::toolchain::{self, Layout, Toolchain};
use crate::{ast, HIP_VERSION};

/// The header every HIP pass force-includes: the kernel language on clang.
const DEVICE_HEADER: &str = "hip_remote/hipcc_device.h";
/// Names AMD's ROCm for AMD code objects (`--offload-arch=gfx…`).
const AMD_ROCM_ENV: &str = "HIP_REMOTE_AMD_ROCM_PATH";
/// Warnings about flags a device pass has no use for (host-only `-f…` options): not the user's
/// concern, and fatal under `-Werror`.
const DEVICE_PASS_QUIET: &str = "-Wno-unused-command-line-argument";
/// Entry id of the (empty) host entry clang's bundles carry.
const HOST_ENTRY_ID: &str = "host-x86_64-unknown-linux-gnu--";
/// The AMD processor named to clang in host passes: clang wants one for `-x hip`; no AMD code
/// comes from those passes.
const HOST_PASS_OFFLOAD_ARCH: &str = "--offload-arch=gfx90a";

/// The clang-compatible driver (`PREFIX/lib/llvm/bin/clang++`, what CMake's HIP language
/// compiles with): HIP work — a HIP source, `--hip-link`, an offload target named — goes
/// through hip-remote's passes into portable fat binaries; everything else (C and C++ sources,
/// plain links, queries such as `--version` or `-print-targets`) goes to the system clang
/// unchanged, its exit status passed on. With `-v` it names our installation as clang names
/// ROCm's (`Found HIP installation: PREFIX, version …`), which CMake reads for its ROCm root.
pub fn run_as_clang(argv: &[String]) -> Result<(), String> {
    if argv.iter().any(|a| a == "-v") {
        // Without our headers there is no installation to name; the clang work goes on.
        if let Ok(layout) = Layout::find() {
            let number = HIP_VERSION.split_once('-').map_or(HIP_VERSION, |(n, _)| n);
            eprintln!("Found HIP installation: {}, version {number}", layout.prefix.display());
        }
    }
    let ours = parse_as(argv, Dialect::Clang).ok().filter(|a| {
        a.mode != Mode::Version && (a.hip_link || a.sources.iter().any(|s| s.hip) || argv.iter().any(|f| f.starts_with("--offload-arch=")))
    });
    if let Some(args) = ours {
        return run(&args);
    }
    let clang = toolchain::find_clang()?;
    let status = Command::new(&clang).args(argv).status().map_err(|e| format!("cannot run {}: {e}", clang.display()))?;
    std::process::exit(status.code().unwrap_or(1));
}

/// Runs the whole invocation.
pub fn run(args: &Args) -> Result<(), String> {
    if args.mode == Mode::Version {
        return version();
    }
    if args.mode == Mode::Preprocess {
        if let Err(no_clang) = toolchain::find_clang() {
            return preprocess_without_clang(args, &no_clang);
        }
    }
    let tc = Toolchain::find()?;
    if args.mode == Mode::Preprocess {
        return preprocess(&tc, args);
    }
    let scratch = tempfile::Builder::new().prefix("hipcc-").tempdir().map_err(|e| format!("scratch directory: {e}"))?;
    let mut objects = Vec::new();
    for (i, source) in args.sources.iter().enumerate() {
        if args.mode == Mode::CodeObject {
            let out = args.output.clone().unwrap_or_else(|| source.path.with_extension("hipfb"));
            let bundle = fat_binary(&tc, args, source, scratch.path())?;
            std::fs::write(&out, bundle).map_err(|e| format!("{}: {e}", out.display()))?;
            continue;
        }
        let object = match (args.mode, &args.output) {
            (Mode::Compile, Some(out)) => out.clone(),
            (Mode::Compile, None) => PathBuf::from(source.path.file_stem().unwrap_or_default()).with_extension("o"),
            _ => scratch.path().join(format!("{i}.o")),
        };
        compile(&tc, args, source, &object, scratch.path())?;
        objects.push(object);
    }
    if args.mode == Mode::Link {
        link(&tc, args, &objects)?;
    }
    Ok(())
}

/// ROCm's `hipcc --version`: the HIP version line, then the compiler's own version text (which
/// names where it is installed) when there is a compiler; nothing else needs one.
fn version() -> Result<(), String> {
    println!("HIP version: {HIP_VERSION}");
    println!("hip-remote hipcc {} (HIP programs for any hip-remote worker)", env!("CARGO_PKG_VERSION"));
    match toolchain::find_clang() {
        Ok(clang) => {
            let out = Command::new(&clang).arg("--version").output().map_err(|e| format!("{}: {e}", clang.display()))?;
            println!("Compiler: {}", clang.display());
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
        Err(e) => eprintln!("hipcc: note: {e} (compiling needs one; this answer does not)"),
    }
    Ok(())
}

/// Runs `cmd`, failing with its name and status; its output goes to ours.
fn exec(mut cmd: Command, verbose: bool) -> Result<(), String> {
    if verbose {
        eprintln!("{cmd:?}");
    }
    let status = cmd.status().map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} failed ({status})", Path::new(cmd.get_program()).display()))
    }
}

/// Flags every HIP pass shares: our headers as system headers, the kernel language, the
/// user's preprocessor flags and optimization level.
fn common_hip_flags(tc: &Toolchain, args: &Args, cmd: &mut Command) {
    cmd.arg("-isystem").arg(&tc.include_dir).arg("-D__HIP_REMOTE_HIPCC__=1").arg("-include").arg(DEVICE_HEADER);
    cmd.args(&args.preprocessor);
    if let Some(o) = &args.optimization {
        cmd.arg(o);
    }
}

/// The host pass of a HIP source: clang's HIP host compilation, embedding `bundle`.
fn host_pass(tc: &Toolchain, args: &Args, source: &Source, bundle: Option<&Path>, object: &Path) -> Result<(), String> {
    let mut cmd = tc.clang();
    if source.hip {
        cmd.args(["-x", "hip", "--cuda-host-only", "-nogpuinc", "-nogpulib", HOST_PASS_OFFLOAD_ARCH]);
        common_hip_flags(tc, args, &mut cmd);
        if let Some(bundle) = bundle {
            cmd.args(["-Xclang", "-fcuda-include-gpubinary", "-Xclang"]).arg(bundle);
        }
    } else {
        if let Some(lang) = &source.language {
            cmd.args(["-x", lang]);
        }
        cmd.arg("-isystem").arg(&tc.include_dir).args(&args.preprocessor);
        if let Some(o) = &args.optimization {
            cmd.arg(o);
        }
    }
    cmd.args(&args.host_only).arg("-c").arg(&source.path).arg("-o").arg(object);
    exec(cmd, args.verbose)
}

fn compile(tc: &Toolchain, args: &Args, source: &Source, object: &Path, scratch: &Path) -> Result<(), String> {
    if !source.hip || args.host_only_object {
        return host_pass(tc, args, source, None, object);
    }
    let bundle = fat_binary(tc, args, source, scratch)?;
    let stem = source.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let bundle_path = scratch.join(format!("{stem}-{}.hipfb", std::process::id()));
    std::fs::write(&bundle_path, &bundle).map_err(|e| format!("{}: {e}", bundle_path.display()))?;
    host_pass(tc, args, source, Some(&bundle_path), object)
}

/// The offload bundle of one HIP source.
fn fat_binary(tc: &Toolchain, args: &Args, source: &Source, scratch: &Path) -> Result<Vec<u8>, String> {
    let mut entries: Vec<(String, Vec<u8>)> = vec![(HOST_ENTRY_ID.to_string(), Vec::new())];
    // clang's dialect leaves AMD processors to the device source unless AMD's ROCm is named.
    let amd_rocm_named = std::env::var_os(AMD_ROCM_ENV).is_some();
    let amd_archs: &[String] = if args.dialect == Dialect::Clang && !amd_rocm_named { &[] } else { &args.amd_archs };
    if args.verbose && args.dialect == Dialect::Clang {
        // As clang's `-v` names its device target (CMake takes its default
        // CMAKE_HIP_ARCHITECTURES from the first ` -target-cpu NAME `).
        eprintln!(
            " hip-remote offload -target-cpu {PORTABLE_ARCH} (PTX for {}; the device source for every other device{})",
            args.ptx_archs.join(", "),
            if args.amd_archs.len() > amd_archs.len() { format!(", {} included", args.amd_archs.join(", ")) } else { String::new() }
        );
    }
    for sm in &args.ptx_archs {
        entries.push((format!("{PTX_ENTRY_PREFIX}{sm}"), ptx_pass(tc, args, source, sm, scratch)?));
    }
    for arch in amd_archs {
        entries.push((format!("hipv4-amdgcn-amd-amdhsa--{arch}"), amd_pass(tc, args, source, arch, scratch)?));
    }
    if args.device_source {
        let ds = device_source_pass(tc, args, source, scratch)?;
        let marker = format!("-D{DEVICE_SOURCE_MACRO}=1");
        let mut options: Vec<&str> = vec![&marker];
        options.extend(device_source_options(args));
        let entry = SourceEntry {
            name: &ds.main_name,
            source: &ds.main_text,
            headers: ds.headers.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect(),
            options,
            kernels: ds.kernels.iter().map(|s| (s.registered.as_str(), s.expression.as_str())).collect(),
            variables: ds.variables.iter().map(|s| (s.registered.as_str(), s.expression.as_str())).collect(),
        };
        entries.push((SOURCE_ENTRY_ID.to_string(), entry.encode()));
    }
    let refs: Vec<(&str, &[u8])> = entries.iter().map(|(id, code)| (id.as_str(), code.as_slice())).collect();
    Ok(write_bundle(&refs))
}

/// The options the device source is compiled with on the worker: macros and the language
/// standard (include directories are the client's: the files travel instead).
fn device_source_options(args: &Args) -> Vec<&str> {
    let mut out = Vec::new();
    let mut iter = args.preprocessor.iter();
    while let Some(flag) = iter.next() {
        match flag.as_str() {
            "-D" | "-U" => {
                out.push(flag.as_str());
                if let Some(v) = iter.next() {
                    out.push(v.as_str());
                }
            }
            "-include" | "-isystem" | "-iquote" | "-idirafter" => {
                iter.next();
            }
            f if f.starts_with("-D") || f.starts_with("-U") || f.starts_with("-std=") || f.starts_with("--std=") => out.push(f),
            _ => {}
        }
    }
    out
}

/// PTX for NVIDIA virtual architecture `sm`, from clang's NVPTX back end.
fn ptx_pass(tc: &Toolchain, args: &Args, source: &Source, sm: &str, scratch: &Path) -> Result<Vec<u8>, String> {
    let out = scratch.join(format!("device-{sm}.ptx"));
    let mut cmd = tc.clang();
    cmd.args(["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib"]).arg(format!("--cuda-gpu-arch={sm}"));
    common_hip_flags(tc, args, &mut cmd);
    // The NVPTX back end has no __float128, which clang still announces from the host
    // (x86-64) side: under `-std=gnu++…` libstdc++ then declares overloads for it and the pass
    // fails. Without the macros libstdc++ leaves them out, as under `-std=c++…`.
    cmd.args(["-U__FLOAT128__", "-U__SIZEOF_FLOAT128__"]);
    cmd.arg(DEVICE_PASS_QUIET).args(args.device_pass_flags());
    if args.optimization.is_none() {
        cmd.arg("-O2");
    }
    if let Some(libdevice) = &tc.libdevice {
        cmd.arg("-D__HIP_REMOTE_LIBDEVICE__=1").args(["-Xclang", "-mlink-builtin-bitcode", "-Xclang"]).arg(libdevice);
    }
    cmd.arg("-S").arg(&source.path).arg("-o").arg(&out);
    exec(cmd, args.verbose).map_err(|e| format!("{}: the NVIDIA ({sm}) device pass: {e}", source.path.display()))?;
    let mut ptx = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    ptx.push(0);
    Ok(ptx)
}

/// An AMD code object for `arch`, from the system's HIP installation (ROCm's device headers
/// and device libraries): the only pass that uses AMD's headers rather than ours.
fn amd_pass(tc: &Toolchain, args: &Args, source: &Source, arch: &str, scratch: &Path) -> Result<Vec<u8>, String> {
    let rocm = ["ROCM_DEVICE_PATH", AMD_ROCM_ENV]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/opt/rocm"), PathBuf::from("/usr")])
        .find(|p| p.join("include/hip/hip_runtime.h").is_file() && p.join("include/hip/amd_detail").is_dir())
        .ok_or_else(|| {
            format!(
                "--offload-arch={arch}: AMD code objects need ROCm's device headers and libraries (not found in \
                 /opt/rocm or /usr; set HIP_REMOTE_AMD_ROCM_PATH). Without them leave AMD targets out: AMD workers \
                 compile the device source"
            )
        })?;
    let bitcode = [rocm.join("amdgcn/bitcode"), rocm.join("lib/amdgcn/bitcode"), PathBuf::from("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")]
        .into_iter()
        .find(|d| d.join("ockl.bc").is_file())
        .ok_or_else(|| format!("--offload-arch={arch}: ROCm's device libraries (ockl.bc) are not installed under {}", rocm.display()))?;
    let out = scratch.join(format!("device-{}.co", arch.replace(':', "_")));
    let mut cmd = tc.clang();
    cmd.args(["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output"])
        .arg(format!("--offload-arch={arch}"))
        .arg(format!("--rocm-path={}", rocm.display()))
        .arg(format!("--rocm-device-lib-path={}", bitcode.display()))
        .args(&args.preprocessor)
        .arg(DEVICE_PASS_QUIET)
        .args(args.device_pass_flags());
    if let Some(o) = &args.optimization {
        cmd.arg(o);
    }
    cmd.arg("-c").arg(&source.path).arg("-o").arg(&out);
    exec(cmd, args.verbose).map_err(|e| format!("{}: the AMD ({arch}) device pass: {e}", source.path.display()))?;
    std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))
}

/// The device source: clang's AST of the host compilation, and the files it read.
fn device_source_pass(tc: &Toolchain, args: &Args, source: &Source, scratch: &Path) -> Result<DeviceSource, String> {
    let deps = scratch.join("device-source.d");
    let mut cmd = tc.clang();
    cmd.args(["-x", "hip", "--cuda-host-only", "-nogpuinc", "-nogpulib", HOST_PASS_OFFLOAD_ARCH]);
    common_hip_flags(tc, args, &mut cmd);
    cmd.args(args.device_pass_flags());
    cmd.args(["-fsyntax-only", "-Wno-everything", "-Xclang", "-ast-dump=json", "-MMD", "-MF"]).arg(&deps).arg(&source.path);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if args.verbose {
        eprintln!("{cmd:?}");
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run {}: {e}", tc.clang.display()))?;
    let stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let parsed = ast::parse(stdout);
    let status = child.wait().map_err(|e| e.to_string())?;
    let errors = errors.join().unwrap_or_default();
    // clang's own words first, whatever went wrong: they are what the user can act on.
    if !status.success() || parsed.is_err() {
        eprint!("{errors}");
    }
    if !status.success() {
        return Err(format!("{}: compilation failed ({status})", source.path.display()));
    }
    let tu = parsed.map_err(|e| format!("{}: the device-source pass: {e}", source.path.display()))?;
    let listed = std::fs::read_to_string(&deps).map_err(|e| format!("{}: {e}", deps.display()))?;
    let ours = tc.include_dir.canonicalize().unwrap_or_else(|_| tc.include_dir.clone());
    let user_files: Vec<PathBuf> =
        dependency_files(&listed).into_iter().filter(|p| !p.canonicalize().unwrap_or_else(|_| p.clone()).starts_with(&ours)).collect();
    device_source::build(&source.path, &tu, &user_files, &args.include_dirs)
}

/// The prerequisites of a make rule as clang writes it (`out.o: a.hip \` newline `b.h`).
fn dependency_files(rule: &str) -> Vec<PathBuf> {
    let joined = rule.replace("\\\n", " ");
    let body = joined.split_once(": ").map(|(_, b)| b).unwrap_or("");
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => current.push(chars.next().unwrap_or(' ')),
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(PathBuf::from(current));
    }
    out
}

fn preprocess(tc: &Toolchain, args: &Args) -> Result<(), String> {
    let mut cmd = tc.clang();
    cmd.args(["-x", "hip", "--cuda-host-only", "-nogpuinc", "-nogpulib", HOST_PASS_OFFLOAD_ARCH]);
    common_hip_flags(tc, args, &mut cmd);
    cmd.args(&args.host_only).arg("-E");
    for s in &args.sources {
        cmd.arg(&s.path);
    }
    if let Some(out) = &args.output {
        cmd.arg("-o").arg(out);
    }
    exec(cmd, args.verbose)
}

/// `-E` with no clang installed. `-v` prints the include search list in clang's words (what
/// CuPy's `hipcc -x hip -E -v /dev/null` reads: the kernels themselves compile on the worker);
/// empty inputs preprocess to nothing; anything else needs the compiler.
fn preprocess_without_clang(args: &Args, no_clang: &str) -> Result<(), String> {
    let layout = Layout::find()?;
    if args.verbose {
        eprint!("{}", include_search_list(args, &layout));
    }
    for source in &args.sources {
        let text = std::fs::read(&source.path).map_err(|e| format!("{}: {e}", source.path.display()))?;
        if !text.is_empty() {
            return Err(format!("{}: preprocessing needs a compiler: {no_clang}", source.path.display()));
        }
    }
    if let Some(out) = &args.output {
        std::fs::write(out, "").map_err(|e| format!("{}: {e}", out.display()))?;
    }
    Ok(())
}

/// The directories a HIP pass searches, listed as clang's `-v` lists them: `-iquote` for
/// `#include "..."`; for `#include <...>`, `-I`, `-isystem`, our headers, the system
/// directories and `-idirafter`, in that order.
fn include_search_list(args: &Args, layout: &Layout) -> String {
    let mut quote = Vec::new();
    let (mut user, mut system, mut after) = (Vec::new(), Vec::new(), Vec::new());
    let mut flags = args.preprocessor.iter();
    while let Some(flag) = flags.next() {
        let list = match flag.as_str() {
            "-iquote" => &mut quote,
            "-isystem" => &mut system,
            "-idirafter" => &mut after,
            _ => {
                if let Some(dir) = flag.strip_prefix("-I") {
                    user.push(PathBuf::from(dir));
                }
                continue;
            }
        };
        if let Some(dir) = flags.next() {
            list.push(PathBuf::from(dir));
        }
    }
    let standard = SYSTEM_INCLUDE_DIRS.iter().map(PathBuf::from).filter(|d| d.is_dir());
    let named = user.into_iter().chain(system).chain([layout.include_dir.clone()]);
    let angle: Vec<PathBuf> = named.chain(standard).chain(after).collect();
    // As clang: named directories that do not exist are reported and left out.
    let mut text = String::new();
    for dir in quote.iter().chain(&angle).filter(|d| !d.is_dir()) {
        text += &format!("ignoring nonexistent directory \"{}\"\n", dir.display());
    }
    let (quote, angle): (Vec<PathBuf>, Vec<PathBuf>) =
        (quote.into_iter().filter(|d| d.is_dir()).collect(), angle.into_iter().filter(|d| d.is_dir()).collect());
    text += "#include \"...\" search starts here:\n";
    for dir in quote {
        text += &format!(" {}\n", dir.display());
    }
    text += "#include <...> search starts here:\n";
    for dir in angle {
        text += &format!(" {}\n", dir.display());
    }
    text + "End of search list.\n"
}

/// The system header directories clang searches on Linux (those that exist are listed).
const SYSTEM_INCLUDE_DIRS: &[&str] = &["/usr/local/include", "/usr/include/x86_64-linux-gnu", "/usr/include"];

/// Links against our `libamdhip64` (found at run time through the rpath).
fn link(tc: &Toolchain, args: &Args, objects: &[PathBuf]) -> Result<(), String> {
    let mut cmd = tc.clang();
    cmd.args(objects).args(&args.link_inputs).args(&args.link);
    if args.hip_link {
        cmd.arg("-L").arg(&tc.lib_dir).arg(format!("-Wl,-rpath,{}", tc.lib_dir.display())).arg("-lamdhip64");
    }
    cmd.args(args.host_only.iter().filter(|f| f.starts_with("-g") || f.starts_with("-f") || f.starts_with("-m") || *f == "-v"));
    if let Some(out) = &args.output {
        cmd.arg("-o").arg(out);
    }
    exec(cmd, args.verbose)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_rules_are_split() {
        let rule = "k.o: /src/k.hip \\\n  /src/my\\ dir/a.h /src/b.h\n";
        assert_eq!(dependency_files(rule), [PathBuf::from("/src/k.hip"), PathBuf::from("/src/my dir/a.h"), PathBuf::from("/src/b.h")]);
    }
}
