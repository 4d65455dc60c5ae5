/*
 * hip-remote: hip/hip_hcc.h: ROCm's deprecated HCC compatibility header: the runtime.
 */
#ifndef HIP_REMOTE_HIP_HCC_H
#define HIP_REMOTE_HIP_HCC_H

#include <hip/hip_runtime.h>

#endif /* HIP_REMOTE_HIP_HCC_H */
