/* A small header in the shape of cuda.h, written for the tests of the
   fused calls' generator. */
#ifndef FUSED_CUDA_H
#define FUSED_CUDA_H
#include <stddef.h>
#include <stdint.h>

#define CUDA_VERSION 12040
#define CUDAAPI

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __API_PTSZ(api) api ## _ptsz
#else
#define __API_PTSZ(api) api
#endif

#define cuMemAlloc cuMemAlloc_v2
#define cuMemcpyHtoD cuMemcpyHtoD_v2
#define cuEventRecord __API_PTSZ(cuEventRecord)

typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUevent_st *CUevent;
typedef struct CUstream_st *CUstream;
typedef void (*CUhostFn)(void *userData);

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1
} CUresult;

typedef enum CUmode_enum { CU_MODE_A = 0, CU_MODE_B = 1 } CUmode;

typedef struct CUconfig_st {
    unsigned int dims[3];
    CUmode mode;
    CUstream hStream;
    void *attrs;
    CUhostFn fn;
    unsigned char tag;
} CUconfig_v1;
typedef CUconfig_v1 CUconfig;

typedef struct CUnested_st { struct { int a; } inner; } CUnested;
typedef union CUeither_u { int i; float f; } CUeither;
typedef struct CUpacked_st { char c; int i; } __attribute__((packed)) CUpacked;

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr,
                            size_t bytesize);
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult CUDAAPI cuEventDestroy(CUevent hEvent);
CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx);
CUresult CUDAAPI cuLaunch(const CUconfig *config, void **kernelParams);
CUresult CUDAAPI cuVoid(void);

/* Parameters named like the wrappers' own variables. */
CUresult CUDAAPI cuNames(CUcontext ctx, void *fn, int r, unsigned int *ops1);
CUresult CUDAAPI cuHotNames(CUstream ops2, int fn_arg, void *fn);
/* Pointers to results of every kind an out parameter may have, and of
   kinds it may not. */
CUresult CUDAAPI cuModeGet(CUmode *mode, CUhostFn *hostFn, void **ptr, int *n);
CUresult CUDAAPI cuFloatGet(float *value, CUconfig *config, void *p);
CUresult CUDAAPI cuByValue(CUconfig config);
int cuPlain(void);
#endif
