# hip-remote: the imported targets of find_package(hip), as ROCm names them:
#   hip::amdhip64  the runtime library (our libamdhip64.so: HIP calls go to a hip-remote worker)
#   hip::host      what host code links (hip::amdhip64, the platform macros, the headers)
#   hip::device    what kernel code compiles with: C++ sources become HIP sources when the C++
#                  compiler is a clang (our PREFIX/lib/llvm/bin/clang++ or bin/hipcc), with
#                  --offload-arch for each GPU_TARGETS entry when that is set.
# The prefix is found from this file's place, so a moved layout still works.
get_filename_component(_hip_remote_hip_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET hip::amdhip64)
  add_library(hip::amdhip64 SHARED IMPORTED)
  set_target_properties(hip::amdhip64 PROPERTIES
    IMPORTED_LOCATION "${_hip_remote_hip_prefix}/lib/libamdhip64.so.7"
    IMPORTED_SONAME "libamdhip64.so.7"
    INTERFACE_INCLUDE_DIRECTORIES "${_hip_remote_hip_prefix}/include"
    INTERFACE_COMPILE_DEFINITIONS "__HIP_PLATFORM_AMD__=1;__HIP_PLATFORM_HCC__=1")
endif()

if(NOT TARGET hip::host)
  add_library(hip::host INTERFACE IMPORTED)
  set_target_properties(hip::host PROPERTIES INTERFACE_LINK_LIBRARIES "hip::amdhip64")
endif()

if(NOT TARGET hip::device)
  add_library(hip::device INTERFACE IMPORTED)
  set(_hip_remote_device_options "")
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    list(APPEND _hip_remote_device_options "$<$<COMPILE_LANGUAGE:CXX>:SHELL:-x hip>")
    foreach(_hip_remote_target IN LISTS GPU_TARGETS)
      list(APPEND _hip_remote_device_options "$<$<COMPILE_LANGUAGE:CXX>:--offload-arch=${_hip_remote_target}>")
    endforeach()
  endif()
  set_target_properties(hip::device PROPERTIES
    INTERFACE_LINK_LIBRARIES "hip::host"
    INTERFACE_COMPILE_OPTIONS "${_hip_remote_device_options}")
  unset(_hip_remote_device_options)
  unset(_hip_remote_target)
endif()
