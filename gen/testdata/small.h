/* A small header in the shape of cuda.h, written for the generator's tests. */
#ifndef SMALL_H
#define SMALL_H
#include <stddef.h>
#include <stdint.h>

#define CUDA_VERSION 12040
#define CU_FLAG_A 0x01
#define CU_FLAG_B (1U << 4)
#define CU_NEG (-2)
#define CU_PARAM_END ((void*)0x00)
#define CU_BIG 0xffffffffffffffffULL

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __API_PTDS(api) api ## _ptds
#else
#define __API_PTDS(api) api
#endif

#define cuMemAlloc cuMemAlloc_v2
#define cuMemcpy __API_PTDS(cuMemcpy_v2)
#if CUDA_VERSION >= 12000
#define cuOld cuOld_v3
#endif

typedef uint64_t cuuint64_t;
typedef unsigned long long CUdeviceptr_v2;
typedef CUdeviceptr_v2 CUdeviceptr;
typedef int CUdevice_v1;
typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st *CUcontext;

typedef enum cudaError_enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ALIAS = 600
} CUresult;

typedef enum CUsigned_enum { CU_MINUS = -1, CU_PLUS = 1 } CUsigned;

typedef void (*CUhostFn)(void *userData);

typedef struct CUrec_st {
    unsigned int flags;
    CUdeviceptr ptr;
    char name[16];
    struct {
        int a;
        union { float f; double d; } u;
    } inner;
    CUhostFn fn;
    void *user;
    CUcontext ctx;
} CUrec_v1;
typedef CUrec_v1 CUrec;

typedef struct CUloc_st { CUsigned kind; int id; } CUloc;

/* An unnamed union member: C reaches i and f as members of CUanon. */
typedef struct CUanon_st { int kind; union { int i; float f; }; } CUanon;

CUresult cuAnon(CUanon *a);
CUresult cuInit(unsigned int Flags);
CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult cuOld(CUrec *rec, CUhostFn fn, void *userData);
CUresult cuByValue(CUloc loc, CUcontext ctx);
CUresult cuVoid(void);
CUresult cuVariadic(int n, ...);
#endif
