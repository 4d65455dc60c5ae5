# hip-remote's hipBLAS: find_package(hipblas) gives roc::hipblas (ROCm's name; hipblas::hipblas
# too), our libhipblas.so, which forwards each call to the worker's BLAS (docs/BLAS.md).
get_filename_component(_hip_remote_hipblas_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include(CMakeFindDependencyMacro)
find_dependency(hip CONFIG PATHS "${_hip_remote_hipblas_prefix}/lib/cmake/hip" NO_DEFAULT_PATH)
if(NOT TARGET roc::hipblas)
  add_library(roc::hipblas SHARED IMPORTED)
  set_target_properties(roc::hipblas PROPERTIES
    IMPORTED_LOCATION "${_hip_remote_hipblas_prefix}/lib/libhipblas.so.3"
    IMPORTED_SONAME "libhipblas.so.3"
    INTERFACE_INCLUDE_DIRECTORIES "${_hip_remote_hipblas_prefix}/include;${_hip_remote_hipblas_prefix}/include/hipblas"
    INTERFACE_LINK_LIBRARIES "hip::host")
endif()
if(NOT TARGET hipblas::hipblas)
  add_library(hipblas::hipblas INTERFACE IMPORTED)
  set_target_properties(hipblas::hipblas PROPERTIES INTERFACE_LINK_LIBRARIES "roc::hipblas")
endif()
set(hipblas_INCLUDE_DIRS "${_hip_remote_hipblas_prefix}/include")
set(hipblas_LIBRARIES roc::hipblas)
unset(_hip_remote_hipblas_prefix)
