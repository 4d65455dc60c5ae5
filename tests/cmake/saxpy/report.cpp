#include "report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

int count_mismatches(float a, const float* x, const float* y_before, const float* y_after, int n) {
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        float expected = a * x[i] + y_before[i];
        if (std::fabs(y_after[i] - expected) > 1e-5f * (1.0f + std::fabs(expected))) {
            if (bad < 5) std::printf("y[%d] = %g, expected %g\n", i, y_after[i], expected);
            ++bad;
        }
    }
    return bad;
}

void check(hipError_t status, const char* what) {
    if (status != hipSuccess) {
        std::printf("%s failed: %s\n", what, hipGetErrorString(status));
        std::exit(1);
    }
}
