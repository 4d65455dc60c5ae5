/*
 * hip-remote: hip/math_functions.h: HIP's device math. Under our hipcc it comes with every kernel
 * source (hip_remote/device_math.h); this header brings in the runtime and the C math library,
 * as ROCm's does.
 */
#ifndef HIP_REMOTE_MATH_FUNCTIONS_H
#define HIP_REMOTE_MATH_FUNCTIONS_H

#include <hip/hip_runtime.h>
#include <math.h>

#endif /* HIP_REMOTE_MATH_FUNCTIONS_H */
