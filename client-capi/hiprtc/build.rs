//! Link settings of the drop-in library: ROCm 7's soname `libhiprtc.so.7` on Linux, an
//! install name on macOS.
fn main() {
    match std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default().as_str() {
        "linux" => println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhiprtc.so.7"),
        "macos" => println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libhiprtc.dylib"),
        _ => {}
    }
    println!("cargo:rerun-if-changed=build.rs");
}
