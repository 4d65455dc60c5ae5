//! Link settings of the drop-in library: ROCm 7's soname `libhiprtc.so.7` on Linux (with `NEEDED
//! libamdhip64.so.7`, `RUNPATH $ORIGIN` and the `libhiprtc.so.7` link beside it), an install name
//! on macOS; see `../build_support/forwarding_library.rs`.

fn main() {
    forwarding_library("libhiprtc", "libhiprtc.so.7");
}

include!("../build_support/soname_link.rs");
include!("../build_support/target_cc.rs");
include!("../build_support/forwarding_library.rs");
