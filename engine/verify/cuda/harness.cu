// Host-side helpers benchtui builds beside a CUDA answer (in the answer's
// sandboxed process) and alone (in the checker's, for the library baselines):
// device buffers, inputs made on the device from a seed, an L2 flush that also
// drops persisting lines, and event timing bracketed by device-wide syncs.
//
// Every symbol is prefixed benchtui_h_ so it cannot clash with an answer's.
// The input generator must stay bit-identical to engine/verify/cuda/device.py's
// seeded_rows: the checker regenerates sampled rows on the host to verify the
// outputs of timed calls.
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

namespace {

__host__ __device__ inline uint64_t benchtui_mix(uint64_t z) {  // splitmix64's finaliser
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Element i of the input for a 128-bit seed (lo, hi): uniform on [-8, 8) in
// steps of 2^-20, every value exact in float32, so host and device agree bit
// for bit.
__host__ __device__ inline float benchtui_seeded_value(uint64_t i, uint64_t lo, uint64_t hi) {
    uint64_t h = benchtui_mix(lo ^ benchtui_mix(i ^ benchtui_mix(hi)));
    return (float)(uint32_t)(h >> 40) * 9.5367431640625e-07f - 8.0f;
}

// The element types a seeded input can have (cuda_device.DTYPES holds the same codes).
enum { BENCHTUI_F32 = 0, BENCHTUI_F16 = 1, BENCHTUI_BF16 = 2, BENCHTUI_I32 = 3, BENCHTUI_I64 = 4, BENCHTUI_U8 = 5 };

// float32 -> bfloat16 bits, rounding to nearest even (the values made here are finite).
__host__ __device__ inline uint16_t benchtui_bf16_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

// Element i of a seeded input of type ``dtype``. Floating types: the float32
// value above times 2^a (exact), rounded to nearest even for float16 and
// bfloat16. Integer types: a + (h mod (b - a)), the whole 64-bit hash when b == a.
__host__ __device__ inline void benchtui_store_seeded(void* dst, uint64_t i, int dtype, long long a, long long b,
                                                       uint64_t lo, uint64_t hi) {
    if (dtype <= BENCHTUI_BF16) {
        float v = benchtui_seeded_value(i, lo, hi) * ldexpf(1.0f, (int)a);
        if (dtype == BENCHTUI_F32) ((float*)dst)[i] = v;
        else if (dtype == BENCHTUI_F16) ((__half_raw*)dst)[i] = (__half_raw)__float2half_rn(v);
        else ((uint16_t*)dst)[i] = benchtui_bf16_bits(v);
        return;
    }
    uint64_t h = benchtui_mix(lo ^ benchtui_mix(i ^ benchtui_mix(hi)));
    uint64_t span = (uint64_t)(b - a);
    uint64_t value = (uint64_t)a + (span ? h % span : h);
    if (dtype == BENCHTUI_I32) ((int32_t*)dst)[i] = (int32_t)value;
    else if (dtype == BENCHTUI_I64) ((int64_t*)dst)[i] = (int64_t)value;
    else ((uint8_t*)dst)[i] = (uint8_t)value;
}

__global__ void benchtui_generate_typed_kernel(void* dst, uint64_t n, int dtype, long long a, long long b, uint64_t lo,
                                               uint64_t hi) {
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        benchtui_store_seeded(dst, i, dtype, a, b, lo, hi);
}

__global__ void benchtui_generate_kernel(float* dst, uint64_t n, uint64_t lo, uint64_t hi) {
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = benchtui_seeded_value(i, lo, hi);
}

__global__ void benchtui_fill_kernel(uint32_t* dst, uint64_t n, uint32_t value) {
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = value;
}

cudaEvent_t benchtui_start_event = nullptr, benchtui_stop_event = nullptr;

int grid_for(uint64_t n) {
    uint64_t blocks = (n + 255) / 256;
    return (int)(blocks < 65535 ? (blocks ? blocks : 1) : 65535);
}

}  // namespace

extern "C" {

int benchtui_h_malloc(void** ptr, long long bytes) { return (int)cudaMalloc(ptr, (size_t)bytes); }
int benchtui_h_free(void* ptr) { return (int)cudaFree(ptr); }
int benchtui_h_to_device(void* dst, const void* src, long long bytes) {
    return (int)cudaMemcpy(dst, src, (size_t)bytes, cudaMemcpyHostToDevice);
}
int benchtui_h_to_host(void* dst, const void* src, long long bytes) {
    return (int)cudaMemcpy(dst, src, (size_t)bytes, cudaMemcpyDeviceToHost);
}
int benchtui_h_sync(void) { return (int)cudaDeviceSynchronize(); }
int benchtui_h_last_error(void) { return (int)cudaGetLastError(); }
const char* benchtui_h_error_name(int code) { return cudaGetErrorName((cudaError_t)code); }
const char* benchtui_h_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }

int benchtui_h_fill32(void* dst, long long count, unsigned int value) {
    benchtui_fill_kernel<<<grid_for((uint64_t)count), 256>>>((uint32_t*)dst, (uint64_t)count, value);
    cudaError_t err = cudaGetLastError();
    return (int)(err != cudaSuccess ? err : cudaDeviceSynchronize());
}

int benchtui_h_generate(float* dst, long long count, unsigned long long seed_lo, unsigned long long seed_hi) {
    benchtui_generate_kernel<<<grid_for((uint64_t)count), 256>>>(dst, (uint64_t)count, (uint64_t)seed_lo,
                                                                 (uint64_t)seed_hi);
    cudaError_t err = cudaGetLastError();
    return (int)(err != cudaSuccess ? err : cudaDeviceSynchronize());
}

int benchtui_h_generate_typed(void* dst, long long count, int dtype, long long a, long long b, unsigned long long seed_lo,
                              unsigned long long seed_hi) {
    benchtui_generate_typed_kernel<<<grid_for((uint64_t)count), 256>>>(dst, (uint64_t)count, dtype, a, b,
                                                                       (uint64_t)seed_lo, (uint64_t)seed_hi);
    cudaError_t err = cudaGetLastError();
    return (int)(err != cudaSuccess ? err : cudaDeviceSynchronize());
}

// Persisting lines survive ordinary traffic, so they are reset before the
// scratch buffer (larger than L2) is rewritten.
int benchtui_h_flush_l2(void* scratch, long long bytes, int value) {
    cudaError_t err = cudaCtxResetPersistingL2Cache();
    if (err != cudaSuccess && err != cudaErrorNotSupported) return (int)err;
    cudaGetLastError();
    err = cudaMemset(scratch, value & 0xff, (size_t)bytes);
    return (int)(err != cudaSuccess ? err : cudaDeviceSynchronize());
}

// Device-wide syncs on both sides: work an answer leaves running on another
// stream is counted, and nothing queued before the start is.
int benchtui_h_timer_start(void) {
    cudaError_t err;
    if (!benchtui_start_event) {
        if ((err = cudaEventCreate(&benchtui_start_event)) != cudaSuccess) return (int)err;
        if ((err = cudaEventCreate(&benchtui_stop_event)) != cudaSuccess) return (int)err;
    }
    if ((err = cudaDeviceSynchronize()) != cudaSuccess) return (int)err;
    return (int)cudaEventRecord(benchtui_start_event, 0);
}

int benchtui_h_timer_stop(float* ms) {
    cudaError_t err;
    if ((err = cudaDeviceSynchronize()) != cudaSuccess) return (int)err;
    if ((err = cudaEventRecord(benchtui_stop_event, 0)) != cudaSuccess) return (int)err;
    if ((err = cudaEventSynchronize(benchtui_stop_event)) != cudaSuccess) return (int)err;
    return (int)cudaEventElapsedTime(ms, benchtui_start_event, benchtui_stop_event);
}

// Read from the device, not a table: name, compute capability, memory clock
// and bus width (peak bandwidth), L2 size and total memory.
int benchtui_h_device_info(char* name, int name_len, int* major, int* minor, int* mem_clock_khz, int* bus_bits,
                           int* l2_bytes, long long* total_bytes) {
    int dev = 0;
    cudaError_t err = cudaGetDevice(&dev);
    if (err != cudaSuccess) return (int)err;
    cudaDeviceProp prop;
    if ((err = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess) return (int)err;
    strncpy(name, prop.name, (size_t)name_len - 1);
    name[name_len - 1] = 0;
    *major = prop.major;
    *minor = prop.minor;
    *total_bytes = (long long)prop.totalGlobalMem;
    if ((err = cudaDeviceGetAttribute(mem_clock_khz, cudaDevAttrMemoryClockRate, dev)) != cudaSuccess) return (int)err;
    if ((err = cudaDeviceGetAttribute(bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev)) != cudaSuccess) return (int)err;
    return (int)cudaDeviceGetAttribute(l2_bytes, cudaDevAttrL2CacheSize, dev);
}

}  // extern "C"
