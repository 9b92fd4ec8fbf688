// Self-test: random logits (with -inf entries and a huge-magnitude row),
// GPU result against a CPU double-precision softmax + partial sort.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "softmax_topk.cu"

static int check(int rows, int V, int k, float scale, unsigned seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.f, scale);
    std::vector<float> h(static_cast<size_t>(rows) * V);
    for (auto& v : h) v = dist(gen);
    for (int r = 0; r < rows; r += 3) h[static_cast<size_t>(r) * V + (r % V)] = -INFINITY;

    float *d_x, *d_p; int* d_i;
    cudaMalloc(&d_x, h.size() * sizeof(float));
    cudaMalloc(&d_p, static_cast<size_t>(rows) * k * sizeof(float));
    cudaMalloc(&d_i, static_cast<size_t>(rows) * k * sizeof(int));
    cudaMemcpy(d_x, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaError_t err = softmax_topk_launch(d_x, rows, V, k, d_p, d_i);
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess) { std::printf("CUDA error: %s\n", cudaGetErrorString(err)); return 1; }
    std::vector<float> p(static_cast<size_t>(rows) * k);
    std::vector<int> idx(static_cast<size_t>(rows) * k);
    cudaMemcpy(p.data(), d_p, p.size() * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(idx.data(), d_i, idx.size() * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d_x); cudaFree(d_p); cudaFree(d_i);

    int bad = 0;
    for (int r = 0; r < rows; ++r) {
        const float* x = h.data() + static_cast<size_t>(r) * V;
        double m = *std::max_element(x, x + V), sum = 0;
        for (int i = 0; i < V; ++i) sum += std::exp(double(x[i]) - m);
        std::vector<int> order(V);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](int a, int b) { return x[a] > x[b] || (x[a] == x[b] && a < b); });
        for (int j = 0; j < k; ++j) {
            double want = std::exp(double(x[order[j]]) - m) / sum;
            double got = p[static_cast<size_t>(r) * k + j];
            if (x[idx[static_cast<size_t>(r) * k + j]] != x[order[j]] || std::fabs(got - want) > 1e-5 * want) ++bad;
        }
    }
    std::printf("rows=%d V=%d k=%d scale=%g: %s (%d mismatches)\n", rows, V, k, scale, bad ? "FAIL" : "ok", bad);
    return bad != 0;
}

int main() {
    int failed = 0;
    for (int V : {1000, 50257, 151936})
        for (int k : {1, 5, 32}) failed += check(37, V, k, 3.f, V + k);
    failed += check(8, 50257, 5, 1e4f, 7);  // log-sum-exp stability
    std::printf(failed ? "FAILED\n" : "all passed\n");
    return failed != 0;
}
