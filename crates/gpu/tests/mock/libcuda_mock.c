/* A stand-in for libcuda.so.1 with the entry points gyre-gpu uses, for the tests on
 * machines without a GPU: device memory is host memory, the "JIT" accepts any PTX that
 * does not contain "MOCK_INVALID" (else error 218 with a log), and a launch runs the host
 * version of one of two known kernels, reading its arguments from the parameter buffer
 * exactly as the device would (CU_LAUNCH_PARAM_BUFFER_POINTER). It checks the calls'
 * arguments the way the driver does and fails with the driver's codes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;

static int initialised;
static int ctx_token, mod_token, event_token;
static int live_allocs;
static float tab[4] = {10, 20, 30, 40}; /* a __constant__ array "tab" */
static int funcs[2];                     /* 0: saxpy, 1: copy_tab */

CUresult cuInit(unsigned flags) { if (flags) return 1; initialised = 1; return 0; }
CUresult cuDeviceGetCount(int *n) { if (!initialised) return 3; *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { if (ordinal != 0) return 101; *d = 0; return 0; }
CUresult cuDeviceGetName(char *name, int len, int dev) {
    snprintf(name, (size_t)len, "Mock GPU %d", dev);
    return 0;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
    (void)dev;
    switch (attr) {
    case 75: *v = 8; return 0;  /* compute capability 8.7 */
    case 76: *v = 7; return 0;
    case 97: *v = 99 * 1024; return 0;
    default: return 1;
    }
}
CUresult cuCtxCreate_v2(void **ctx, unsigned flags, int dev) {
    (void)flags; (void)dev; *ctx = &ctx_token; return 0;
}
CUresult cuCtxDestroy_v2(void *ctx) { return ctx == &ctx_token ? 0 : 201; }
CUresult cuCtxSynchronize(void) { return 0; }

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals) {
    char *err = NULL; size_t err_size = 0;
    for (unsigned i = 0; i < n; i++) {
        if (opts[i] == 5) err = vals[i];
        if (opts[i] == 6) err_size = (size_t)vals[i];
        if (opts[i] == 3 && vals[i]) ((char *)vals[i])[0] = 0;
    }
    if (strstr(image, "MOCK_INVALID")) {
        if (err && err_size) snprintf(err, err_size, "ptxas application ptx input, line 1; error   : mock rejects this PTX");
        return 218;
    }
    *mod = &mod_token;
    return 0;
}
CUresult cuModuleUnload(void *mod) { return mod == &mod_token ? 0 : 400; }
CUresult cuModuleGetFunction(void **f, void *mod, const char *name) {
    if (mod != &mod_token) return 400;
    if (!strcmp(name, "saxpy")) { *f = &funcs[0]; return 0; }
    if (!strcmp(name, "copy_tab")) { *f = &funcs[1]; return 0; }
    return 500;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *size, void *mod, const char *name) {
    if (mod != &mod_token) return 400;
    if (strcmp(name, "tab")) return 500;
    *p = (CUdeviceptr)(uintptr_t)tab; *size = sizeof tab; return 0;
}
CUresult cuFuncSetAttribute(void *f, int attr, int v) { (void)f; (void)attr; (void)v; return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    if (n == 0) return 1; /* CUDA_ERROR_INVALID_VALUE, as the driver */
    *p = (CUdeviceptr)(uintptr_t)calloc(1, n); live_allocs++; return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); live_allocs--; return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return 0; }

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, void *stream,
                        void **params, void **extra) {
    (void)stream; (void)shared;
    if (params || !extra || extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)0)
        return 1;
    const unsigned char *buf = extra[1];
    size_t size = *(size_t *)extra[3];
    unsigned threads = gx * gy * gz * bx * by * bz;
    if (f == &funcs[0]) {
        /* saxpy(.u64 x, .u64 y, .f32 a, .u32 n): offsets 0, 8, 16, 20; 24 bytes. */
        if (size != 24) return 1;
        uint64_t x, y; float a; uint32_t n;
        memcpy(&x, buf, 8); memcpy(&y, buf + 8, 8); memcpy(&a, buf + 16, 4); memcpy(&n, buf + 20, 4);
        for (unsigned i = 0; i < threads && i < n; i++)
            ((float *)(uintptr_t)y)[i] = a * ((float *)(uintptr_t)x)[i] + ((float *)(uintptr_t)y)[i];
        return 0;
    }
    if (f == &funcs[1]) {
        /* copy_tab(.u8 flag, .align 8 .b8 s[12], .u64 out): offsets 0, 8, 24; 32 bytes.
         * out[i] = tab[i] + s.bytes[0] for i < 4, and out[4] = flag. */
        if (size != 32) return 1;
        uint64_t out; memcpy(&out, buf + 24, 8);
        for (int i = 0; i < 4; i++) ((float *)(uintptr_t)out)[i] = tab[i] + buf[8];
        ((float *)(uintptr_t)out)[4] = buf[0];
        tab[0] = -1; /* the kernel writes the global too */
        return 0;
    }
    return 400;
}

CUresult cuEventCreate(void **e, unsigned flags) { (void)flags; *e = &event_token; return 0; }
CUresult cuEventDestroy_v2(void *e) { return e == &event_token ? 0 : 400; }
CUresult cuEventRecord(void *e, void *stream) { (void)stream; return e == &event_token ? 0 : 400; }
CUresult cuEventSynchronize(void *e) { return e == &event_token ? 0 : 400; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 0.25f; return 0; }
CUresult cuGetErrorString(CUresult c, const char **s) {
    *s = c == 218 ? "a PTX JIT compilation failed" : c == 500 ? "named symbol not found" : "mock error";
    return 0;
}
CUresult cuGetErrorName(CUresult c, const char **s) {
    *s = c == 218 ? "CUDA_ERROR_INVALID_PTX" : c == 500 ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_MOCK";
    return 0;
}
/* For the test: allocations not yet freed. */
int mock_live_allocs(void) { return live_allocs; }
