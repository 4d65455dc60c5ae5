/*
 * hip-remote: hip/device_functions.h: HIP's device functions. Under our hipcc they come with every
 * kernel source (hip_remote/hipcc_device.h is pre-included); this header only brings in the
 * runtime, as ROCm's does.
 */
#ifndef HIP_REMOTE_DEVICE_FUNCTIONS_H
#define HIP_REMOTE_DEVICE_FUNCTIONS_H

#include <hip/hip_runtime.h>

#endif /* HIP_REMOTE_DEVICE_FUNCTIONS_H */
