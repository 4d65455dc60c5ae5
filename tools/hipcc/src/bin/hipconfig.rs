//! `hipconfig`: what build tools ask a HIP installation (`--path`, `--version`, `--platform`,
//! `--compiler`, `--runtime`, `--cpp_config`, `--hipclangpath`, `--full`, `--check`), in ROCm's
//! formats (no trailing newline unless `--newline`). Only `--hipclangpath` and `--check` look for
//! a compiler; nothing else needs one.

use hip_remote_hipcc::toolchain::{find_clang, Layout};
use hip_remote_hipcc::HIP_VERSION;

fn fail(message: &str) -> ! {
    eprintln!("hipconfig: error: {message}");
    std::process::exit(1);
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let newline = args.iter().any(|a| a == "--newline" || a == "-n");
    args.retain(|a| a != "--newline" && a != "-n");
    let layout = Layout::find().unwrap_or_else(|e| fail(&e));
    let cpp_config = format!("-D__HIP_PLATFORM_AMD__= -D__HIP_PLATFORM_HCC__= -I{}", layout.include_dir.display());
    let answer = match args.first().map(String::as_str).unwrap_or("--full") {
        "--path" | "-p" | "--rocmpath" | "-R" => layout.prefix.display().to_string(),
        // ROCm's form, `MAJOR.MINOR.PATCH-GITHASH`: upstream's CMake splits it at the dash.
        "--version" | "-v" => HIP_VERSION.to_string(),
        "--platform" | "-P" => "amd".to_string(),
        "--compiler" | "-c" => "clang".to_string(),
        "--runtime" | "-r" => "rocclr".to_string(),
        "--cpp_config" | "--cxx_config" | "-C" => cpp_config,
        // ROCm's clang directory (`<rocm>/lib/llvm/bin`): in an installed layout, that of our
        // clang-compatible driver (CMake's HIP language compiles with it); in a source tree,
        // that of the clang hipcc drives.
        "--hipclangpath" | "-l" => match layout.clang_driver_dir().map(|dir| dir.join("clang++")).ok_or(()).or_else(|()| find_clang()) {
            Ok(clang) => match clang.parent().filter(|dir| !dir.as_os_str().is_empty()) {
                Some(dir) => dir.display().to_string(),
                None => fail(&format!("cannot tell the directory of {}", clang.display())),
            },
            Err(e) => fail(&e),
        },
        "--check" => match find_clang() {
            Ok(clang) => {
                format!("hip-remote: clang {}, headers {}, libraries {}\n", clang.display(), layout.include_dir.display(), layout.lib_dir.display())
            }
            Err(e) => fail(&e),
        },
        "--full" | "-f" | "--help" | "-h" => {
            let compiler = find_clang().map(|c| c.display().to_string()).unwrap_or_else(|e| format!("none ({e})"));
            let lines = [
                format!("HIP version  : {HIP_VERSION}"),
                format!("HIP path     : {}", layout.prefix.display()),
                "Platform     : amd (hip-remote: kernels run on the worker's device)".to_string(),
                format!("Compiler     : {compiler}"),
                format!("Includes     : {}", layout.include_dir.display()),
                format!("Libraries    : {}", layout.lib_dir.display()),
                format!("CPP config   : {}", cpp_config),
            ];
            lines.join("\n") + "\n"
        }
        other => fail(&format!("unknown option {other} (try --full)")),
    };
    print!("{answer}");
    if newline && !answer.ends_with('\n') {
        println!();
    }
}
