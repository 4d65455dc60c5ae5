/*
 * Signature-drift guard between hip-remote's HIP headers (client-capi/include/hip) and the Rust
 * exports of client-capi. Run by client-capi/tests/c_signatures.rs, which first writes
 * hip_remote_exports.h with cbindgen: one C declaration per `#[no_mangle] extern "C" fn` under
 * client-capi/src (the generated hipErrorNotSupported stubs excluded), types named as in Rust.
 * C requires all declarations of a function to have compatible types, so any parameter or
 * return type that differs between a header prototype and our implementation fails to compile.
 *
 * By hand (from the repository root, after the test has written the header once):
 *   cc -std=c11 -Wall -Werror -fsyntax-only -I client-capi/include \
 *      -I target/tmp/c_signatures tests/c/exports_match.c
 */
#include <hip/hip_runtime.h>
#include <hip/hip_ext.h>

/*
 * ROCm's headers map these names to the R0600 forms with macros; the library also exports the
 * unsuffixed legacy symbols (R0000 layout), which no header declares. Undefine the macros so
 * that the Rust declarations keep their own names (they are then compared with nothing).
 */
#undef hipGetDeviceProperties
#undef hipChooseDevice
#undef hipDeviceProp_t

#include "hip_remote_exports.h"
