# hip-remote: the version find_package(hip) compares against: HIP 7.2 (ROCm 7.2's ABI, the
# headers' hip/hip_version.h). Any request up to 7.2.x is met; a request for 8 is not.
set(PACKAGE_VERSION "7.2.53211")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
# A 64-bit library: a 32-bit project cannot use it.
if("${CMAKE_SIZEOF_VOID_P}" STREQUAL "4")
  set(PACKAGE_VERSION "${PACKAGE_VERSION} (64-bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
