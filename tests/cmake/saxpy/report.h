#pragma once
#include <hip/hip_runtime_api.h>

// Host-only helper (a plain C++ library linked with hip::host): counts the elements of y that
// differ from a*x+y computed on the host.
int count_mismatches(float a, const float* x, const float* y_before, const float* y_after, int n);
// Fails the program with a message when a HIP call did not succeed.
void check(hipError_t status, const char* what);
