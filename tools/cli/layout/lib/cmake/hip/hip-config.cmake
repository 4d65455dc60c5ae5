# hip-remote's HIP package: `find_package(hip)` as with ROCm 7.2, for programs whose HIP calls
# and kernels run on a hip-remote worker's device (NVIDIA, AMD or the CPU).
#
# Targets: hip::host, hip::device, hip::amdhip64 (hip-targets.cmake).
# Variables: hip_VERSION (7.2.x, from hip-config-version.cmake), hip_INCLUDE_DIRS,
# hip_LIBRARIES, HIP_PLATFORM (amd), HIP_RUNTIME (rocclr), HIP_COMPILER (clang), HIP_ROOT_DIR,
# HIP_CLANG_PATH (our clang-compatible driver's directory), HIP_HIPCC_EXECUTABLE,
# HIP_HIPCONFIG_EXECUTABLE.
#
# Kernels are compiled by either of our drivers: CMAKE_CXX_COMPILER=PREFIX/bin/hipcc, or
# enable_language(HIP) with CMAKE_HIP_COMPILER (HIPCXX) = PREFIX/lib/llvm/bin/clang++.
get_filename_component(_hip_remote_hip_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

include("${CMAKE_CURRENT_LIST_DIR}/hip-targets.cmake")

set(HIP_PLATFORM "amd")
set(HIP_RUNTIME "rocclr")
set(HIP_COMPILER "clang")
set(HIP_ROOT_DIR "${_hip_remote_hip_prefix}")
set(HIP_CLANG_PATH "${_hip_remote_hip_prefix}/lib/llvm/bin")
set(HIP_HIPCC_EXECUTABLE "${_hip_remote_hip_prefix}/bin/hipcc")
set(HIP_HIPCONFIG_EXECUTABLE "${_hip_remote_hip_prefix}/bin/hipconfig")
set(hip_INCLUDE_DIR "${_hip_remote_hip_prefix}/include")
set(hip_INCLUDE_DIRS "${_hip_remote_hip_prefix}/include")
set(hip_LIB_INSTALL_DIR "${_hip_remote_hip_prefix}/lib")
set(hip_BIN_INSTALL_DIR "${_hip_remote_hip_prefix}/bin")
set(hip_LIBRARIES hip::host)
set(hip_DEVICE_LIBRARIES hip::device)
if(NOT DEFINED ROCM_PATH)
  set(ROCM_PATH "${_hip_remote_hip_prefix}")
endif()
unset(_hip_remote_hip_prefix)
