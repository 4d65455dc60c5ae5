/*
 * hip-remote: hip/linker_types.h: JIT option enums shared by HIP and hiprtc
 *
 * Part of hip-remote's own HIP headers (host API only). Types, enum values, struct layouts and
 * prototypes mirror the ROCm 7.2 (HIP 7.2.53211) C ABI exactly so that programs built against
 * these headers run unchanged against a real libamdhip64.so.7 and vice versa. Facts were taken
 * from bindgen output of ROCm 7.2's headers (crate cubecl-hip-sys, bindings_53211.rs), the
 * hip-python 7.x .pxd files, and ROCm 5.2 headers (C++ default arguments).
 * Generated, then reviewed; see client-capi/src/abi/ for the Rust mirror.
 */

#ifndef HIP_INCLUDE_HIP_LINKER_TYPES_H
#define HIP_INCLUDE_HIP_LINKER_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum hipJitOption {
  hipJitOptionMaxRegisters = 0,
  hipJitOptionThreadsPerBlock = 1,
  hipJitOptionWallTime = 2,
  hipJitOptionInfoLogBuffer = 3,
  hipJitOptionInfoLogBufferSizeBytes = 4,
  hipJitOptionErrorLogBuffer = 5,
  hipJitOptionErrorLogBufferSizeBytes = 6,
  hipJitOptionOptimizationLevel = 7,
  hipJitOptionTargetFromContext = 8,
  hipJitOptionTarget = 9,
  hipJitOptionFallbackStrategy = 10,
  hipJitOptionGenerateDebugInfo = 11,
  hipJitOptionLogVerbose = 12,
  hipJitOptionGenerateLineInfo = 13,
  hipJitOptionCacheMode = 14,
  hipJitOptionSm3xOpt = 15,
  hipJitOptionFastCompile = 16,
  hipJitOptionGlobalSymbolNames = 17,
  hipJitOptionGlobalSymbolAddresses = 18,
  hipJitOptionGlobalSymbolCount = 19,
  hipJitOptionLto = 20,
  hipJitOptionFtz = 21,
  hipJitOptionPrecDiv = 22,
  hipJitOptionPrecSqrt = 23,
  hipJitOptionFma = 24,
  hipJitOptionPositionIndependentCode = 25,
  hipJitOptionMinCTAPerSM = 26,
  hipJitOptionMaxThreadsPerBlock = 27,
  hipJitOptionOverrideDirectiveValues = 28,
  hipJitOptionNumOptions = 29,
  hipJitOptionIRtoISAOptExt = 10000,
  hipJitOptionIRtoISAOptCountExt = 10001,
} hipJitOption;

typedef enum hipJitInputType {
  hipJitInputCubin = 0,
  hipJitInputPtx = 1,
  hipJitInputFatBinary = 2,
  hipJitInputObject = 3,
  hipJitInputLibrary = 4,
  hipJitInputNvvm = 5,
  hipJitNumLegacyInputTypes = 6,
  hipJitInputLLVMBitcode = 100,
  hipJitInputLLVMBundledBitcode = 101,
  hipJitInputLLVMArchivesOfBundledBitcode = 102,
  hipJitInputSpirv = 103,
  hipJitNumInputTypes = 10,
} hipJitInputType;

typedef enum hipJitCacheMode {
  hipJitCacheOptionNone = 0,
  hipJitCacheOptionCG = 1,
  hipJitCacheOptionCA = 2,
} hipJitCacheMode;

typedef enum hipJitFallback {
  hipJitPreferPTX = 0,
  hipJitPreferBinary = 1,
} hipJitFallback;

typedef enum hipLibraryOption_e {
  hipLibraryHostUniversalFunctionAndDataTable = 0,
  hipLibraryBinaryIsPreserved = 1,
} hipLibraryOption_e;

typedef hipLibraryOption_e hipLibraryOption;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HIP_INCLUDE_HIP_LINKER_TYPES_H */
