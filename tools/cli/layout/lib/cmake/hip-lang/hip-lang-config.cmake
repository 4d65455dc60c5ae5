# hip-remote's HIP runtime for CMake's HIP language: enable_language(HIP) with
# CMAKE_HIP_COMPILER (HIPCXX) = PREFIX/lib/llvm/bin/clang++ loads this file (CMake finds the
# prefix from the compiler's `-v` output, "Found HIP installation: PREFIX") and links every HIP
# target with the target it names in _CMAKE_HIP_DEVICE_RUNTIME_TARGET.
#   hip-lang::amdhip64  our libamdhip64.so (HIP calls go to a hip-remote worker)
#   hip-lang::host      hip-lang::amdhip64 with the headers and platform macros
#   hip-lang::device    hip-lang::host for HIP sources
get_filename_component(_hip_remote_hip_lang_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

set(HIP_COMPILER "clang")
set(HIP_RUNTIME "rocclr")

if(NOT TARGET hip-lang::amdhip64)
  add_library(hip-lang::amdhip64 SHARED IMPORTED)
  set_target_properties(hip-lang::amdhip64 PROPERTIES
    IMPORTED_LOCATION "${_hip_remote_hip_lang_prefix}/lib/libamdhip64.so.7"
    IMPORTED_SONAME "libamdhip64.so.7")
endif()
if(NOT TARGET hip-lang::host)
  add_library(hip-lang::host INTERFACE IMPORTED)
  set_target_properties(hip-lang::host PROPERTIES
    INTERFACE_LINK_LIBRARIES "hip-lang::amdhip64"
    INTERFACE_INCLUDE_DIRECTORIES "${_hip_remote_hip_lang_prefix}/include"
    INTERFACE_COMPILE_DEFINITIONS "$<$<COMPILE_LANGUAGE:HIP,CXX,C>:__HIP_PLATFORM_AMD__=1;__HIP_PLATFORM_HCC__=1>")
endif()
if(NOT TARGET hip-lang::device)
  add_library(hip-lang::device INTERFACE IMPORTED)
  set_target_properties(hip-lang::device PROPERTIES INTERFACE_LINK_LIBRARIES "hip-lang::host")
endif()

set(_CMAKE_HIP_DEVICE_RUNTIME_TARGET "hip-lang::device")
unset(_hip_remote_hip_lang_prefix)
