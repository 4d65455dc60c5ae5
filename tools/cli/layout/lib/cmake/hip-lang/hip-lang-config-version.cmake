# hip-remote: HIP 7.2, as hip/hip-config-version.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/../hip/hip-config-version.cmake")
