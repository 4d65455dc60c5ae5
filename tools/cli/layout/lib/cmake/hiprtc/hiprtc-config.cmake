# hip-remote's hiprtc: find_package(hiprtc) gives hiprtc::hiprtc, our libhiprtc.so (programs are
# compiled by the worker's compiler for its device).
get_filename_component(_hip_remote_hiprtc_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET hiprtc::hiprtc)
  add_library(hiprtc::hiprtc SHARED IMPORTED)
  set_target_properties(hiprtc::hiprtc PROPERTIES
    IMPORTED_LOCATION "${_hip_remote_hiprtc_prefix}/lib/libhiprtc.so.7"
    IMPORTED_SONAME "libhiprtc.so.7"
    INTERFACE_INCLUDE_DIRECTORIES "${_hip_remote_hiprtc_prefix}/include"
    INTERFACE_COMPILE_DEFINITIONS "__HIP_PLATFORM_AMD__=1;__HIP_PLATFORM_HCC__=1")
endif()
set(hiprtc_INCLUDE_DIRS "${_hip_remote_hiprtc_prefix}/include")
set(hiprtc_LIBRARIES hiprtc::hiprtc)
unset(_hip_remote_hiprtc_prefix)
