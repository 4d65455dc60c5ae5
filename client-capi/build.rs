//! Link settings of the drop-in library: the ROCm 7 soname on Linux, an install name on macOS.
fn main() {
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    match target_os.as_str() {
        "linux" => println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libamdhip64.so.7"),
        "macos" => println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libamdhip64.dylib"),
        _ => {}
    }
    println!("cargo:rerun-if-changed=build.rs");
}
