// Helpers shared by the sample programs, in the manner of rocm-examples' example_utils.hpp:
// every HIP call is checked, and a failure names the call, the error and where it happened.
#pragma once

#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdlib>
#include <iostream>

// Exit status of a sample whose HIP call failed or whose result was wrong.
constexpr int error_exit_code = 1;

#define HIP_CHECK(condition)                                                                   \
    {                                                                                          \
        const hipError_t error = condition;                                                    \
        if(error != hipSuccess)                                                                \
        {                                                                                      \
            std::cerr << "An error encountered: \"" << hipGetErrorString(error) << "\" at "   \
                      << __FILE__ << ':' << __LINE__ << std::endl;                             \
            std::exit(error_exit_code);                                                        \
        }                                                                                      \
    }

// Rounds `dividend / divisor` up: the blocks needed to cover `dividend` items.
template<typename T>
constexpr T ceiling_div(const T& dividend, const T& divisor)
{
    return (dividend + divisor - 1) / divisor;
}

// Whether `actual` is within a relative `tolerance` of `expected` (absolute near zero).
inline bool nearly_equal(double actual, double expected, double tolerance)
{
    return std::fabs(actual - expected) <= tolerance * std::fmax(1.0, std::fabs(expected));
}

// Prints the verdict as the program's last line and gives its exit status.
inline int report_validation(int errors)
{
    if(errors != 0)
    {
        std::cout << "Validation failed: " << errors << " wrong result(s)." << std::endl;
        return error_exit_code;
    }
    std::cout << "PASS" << std::endl;
    return 0;
}
