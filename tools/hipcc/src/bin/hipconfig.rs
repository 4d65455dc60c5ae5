//! `hipconfig`: what build tools ask a HIP installation (`--path`, `--version`, `--platform`,
//! `--compiler`, `--runtime`, `--cpp_config`, `--full`).

use hip_remote_hipcc::toolchain::Toolchain;
use hip_remote_hipcc::HIP_VERSION;

fn main() {
    let tc = match Toolchain::find() {
        Ok(tc) => tc,
        Err(e) => {
            eprintln!("hipconfig: error: {e}");
            std::process::exit(1);
        }
    };
    let cpp_config = format!("-D__HIP_PLATFORM_AMD__= -D__HIP_PLATFORM_HCC__= -I{}", tc.include_dir.display());
    let version = HIP_VERSION.split('-').next().unwrap_or(HIP_VERSION);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let first = args.first().map(String::as_str).unwrap_or("--full");
    match first {
        "--path" | "-p" => print!("{}", tc.prefix.display()),
        "--rocmpath" | "-R" => print!("{}", tc.prefix.display()),
        "--version" | "-v" => print!("{version}"),
        "--platform" | "-P" => print!("amd"),
        "--compiler" | "-c" => print!("clang"),
        "--runtime" | "-r" => print!("rocclr"),
        "--cpp_config" | "--cxx_config" | "-C" => print!("{cpp_config}"),
        "--hipclangpath" | "-l" => print!("{}", tc.clang.parent().map(|p| p.display().to_string()).unwrap_or_default()),
        "--check" => println!("hip-remote: clang {}, headers {}, libraries {}", tc.clang.display(), tc.include_dir.display(), tc.lib_dir.display()),
        "--full" | "-f" | "--help" | "-h" => {
            println!("HIP version  : {HIP_VERSION}");
            println!("HIP path     : {}", tc.prefix.display());
            println!("Platform     : amd (hip-remote: kernels run on the worker's device)");
            println!("Compiler     : {}", tc.clang.display());
            println!("Includes     : {}", tc.include_dir.display());
            println!("Libraries    : {}", tc.lib_dir.display());
            println!("CPP config   : {cpp_config}");
        }
        other => {
            eprintln!("hipconfig: unknown option {other} (try --full)");
            std::process::exit(1);
        }
    }
}
