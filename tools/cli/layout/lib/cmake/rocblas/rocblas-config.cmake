# hip-remote's rocBLAS stand-in: find_package(rocblas) gives roc::rocblas, the shim
# librocblas.so (it loads and links; its calls answer rocblas_status_not_implemented: BLAS
# work goes through hipBLAS, roc::hipblas, which the worker runs). Projects such as ggml's HIP
# back end link it beside hipBLAS without calling it.
get_filename_component(_hip_remote_rocblas_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET roc::rocblas)
  add_library(roc::rocblas SHARED IMPORTED)
  set_target_properties(roc::rocblas PROPERTIES
    IMPORTED_LOCATION "${_hip_remote_rocblas_prefix}/lib/librocblas.so.5"
    IMPORTED_SONAME "librocblas.so.5"
    INTERFACE_INCLUDE_DIRECTORIES "${_hip_remote_rocblas_prefix}/include")
endif()
set(rocblas_LIBRARIES roc::rocblas)
unset(_hip_remote_rocblas_prefix)
