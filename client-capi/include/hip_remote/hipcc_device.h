/* hip-remote: the HIP kernel language for hipcc's clang passes (placeholder: minimal host-pass
 * declarations; the full device API lands with issue #16's device headers). */
#pragma once
#include <hip/hip_runtime.h>
#if defined(__cplusplus)
struct __hip_remote_coord { unsigned x, y, z; };
extern const __device__ __hip_remote_coord threadIdx, blockIdx, blockDim, gridDim;
extern "C" hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0, hipStream_t stream = 0);
extern "C" hipError_t __hipPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem, hipStream_t* stream);
#endif
