//! Link settings of the drop-in library: ROCm 7's hipBLAS soname `libhipblas.so.3` on Linux (with `NEEDED
//! libamdhip64.so.7`, `RUNPATH $ORIGIN` and the `libhipblas.so.3` link beside it), an install name
//! on macOS; see `../build_support/forwarding_library.rs`.

fn main() {
    forwarding_library("libhipblas", "libhipblas.so.3");
}

include!("../build_support/soname_link.rs");
include!("../build_support/target_cc.rs");
include!("../build_support/forwarding_library.rs");
