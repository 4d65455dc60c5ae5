//! `hipcc`: see the crate documentation.

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let result = hip_remote_hipcc::args::parse(&argv).and_then(|args| hip_remote_hipcc::driver::run(&args));
    if let Err(e) = result {
        eprintln!("hipcc: error: {e}");
        std::process::exit(1);
    }
}
