//! `hipcc`, and the clang-compatible driver when called as `clang`/`clang++` (an installed
//! layout's `lib/llvm/bin/clang++` links here): see the crate documentation.

use hip_remote_hipcc::args::Dialect;

fn main() {
    let mut args = std::env::args();
    let program = args.next().unwrap_or_default();
    let argv: Vec<String> = args.collect();
    let name = std::path::Path::new(&program).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dialect = if name.starts_with("clang") { Dialect::Clang } else { Dialect::Hipcc };
    let result = match dialect {
        Dialect::Hipcc => hip_remote_hipcc::args::parse(&argv).and_then(|args| hip_remote_hipcc::driver::run(&args)),
        Dialect::Clang => hip_remote_hipcc::driver::run_as_clang(&argv),
    };
    match result {
        Ok(()) => {}
        Err(e) => {
            eprintln!("{}: error: {e}", if dialect == Dialect::Clang { "clang (hip-remote)" } else { "hipcc" });
            std::process::exit(1);
        }
    }
}
