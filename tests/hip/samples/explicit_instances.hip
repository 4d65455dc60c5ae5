// Kernels launched from host function templates that are instantiated explicitly (ggml's
// pattern: `extern` instantiations in the header, the instance files defining them with the
// header's macro). On a host worker the device source must compile with them.
#include "explicit_instances.hpp"
#include "sample_utils.hpp"

#include <vector>

namespace instances {
DECL_SCALE_CASE(float, 3);
DECL_SCALE_CASE(int, 5);
template void Offsetter::add_on_device<float>(float*, float, int, hipStream_t) const;
template int Offsetter::blocks_for<float>(int) const;
} // namespace instances

template <typename T>
int check(const char* what, const std::vector<T>& got, const std::vector<T>& expected)
{
    int errors = 0;
    for(size_t i = 0; i < got.size(); ++i)
    {
        if(got[i] != expected[i] && errors++ < 10)
        {
            std::cout << what << "[" << i << "] = " << got[i] << ", expected " << expected[i] << std::endl;
        }
    }
    std::cout << what << " on " << got.size() << " items: " << (errors == 0 ? "correct" : "WRONG") << std::endl;
    return errors;
}

int main()
{
    constexpr int n = 1000;
    std::vector<float> xf(n), expected_f(n);
    std::vector<int>   xi(n), expected_i(n);
    for(int i = 0; i < n; ++i)
    {
        xf[i]         = static_cast<float>(i) * 0.5f;
        xi[i]         = i - 300;
        expected_f[i] = xf[i] * 3 + 0.25f;
        expected_i[i] = xi[i] * 5;
    }
    float* d_xf{};
    float* d_yf{};
    int*   d_xi{};
    int*   d_yi{};
    HIP_CHECK(hipMalloc(&d_xf, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&d_yf, n * sizeof(float)));
    HIP_CHECK(hipMalloc(&d_xi, n * sizeof(int)));
    HIP_CHECK(hipMalloc(&d_yi, n * sizeof(int)));
    HIP_CHECK(hipMemcpy(d_xf, xf.data(), n * sizeof(float), hipMemcpyHostToDevice));
    HIP_CHECK(hipMemcpy(d_xi, xi.data(), n * sizeof(int), hipMemcpyHostToDevice));

    instances::scale_on_device<float, 3>(d_xf, d_yf, n, nullptr);
    instances::scale_on_device<int, 5>(d_xi, d_yi, n, nullptr);
    instances::Offsetter().add_on_device<float>(d_yf, 0.25f, n, nullptr);
    HIP_CHECK(hipGetLastError());
    HIP_CHECK(hipDeviceSynchronize());

    std::vector<float> yf(n);
    std::vector<int>   yi(n);
    HIP_CHECK(hipMemcpy(yf.data(), d_yf, n * sizeof(float), hipMemcpyDeviceToHost));
    HIP_CHECK(hipMemcpy(yi.data(), d_yi, n * sizeof(int), hipMemcpyDeviceToHost));
    HIP_CHECK(hipFree(d_xf));
    HIP_CHECK(hipFree(d_yf));
    HIP_CHECK(hipFree(d_xi));
    HIP_CHECK(hipFree(d_yi));

    int errors = check("scale<float, 3> + 0.25", yf, expected_f);
    errors += check("scale<int, 5>", yi, expected_i);
    return report_validation(errors);
}
