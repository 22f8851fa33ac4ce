/* Two versions of a small API in one header, for the API diff's tests: read
   as it is, it is CUDA 12.4; with CUDA_VERSION raised to 13000, the next. */
#ifndef API_H
#define API_H

#define CUDA_VERSION 12040

typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 } CUresult;
typedef struct CUctx_st *CUcontext;
typedef int CUdevice;

/* Values added, removed and changed. */
typedef enum CUattr_enum {
    CU_ATTR_A = 1,
#if CUDA_VERSION < 13000
    CU_ATTR_OLD = 2,
    CU_ATTR_MAX = 3
#else
    CU_ATTR_NEW = 4,
    CU_ATTR_MAX = 5
#endif
} CUattr;

#if CUDA_VERSION < 13000
typedef enum CUgone_enum { CU_GONE = 0 } CUgone;
#else
typedef enum CUfresh_enum { CU_FRESH_A = 0, CU_FRESH_B = 1 } CUfresh;
#endif

/* Members added, removed and widened (which moves the next one). */
typedef struct CUparams_st {
    unsigned int flags;
#if CUDA_VERSION < 13000
    int dropped;
    int widened;
#else
    long long widened;
    void *added;
#endif
} CUparams;

/* Renamed: the old name stays a typedef of the versioned one. */
#if CUDA_VERSION < 13000
typedef struct CUnode_st { int a; } CUnode;
#else
typedef struct CUnode_st { int a; long long b; } CUnode_v1;
typedef CUnode_v1 CUnode;
#endif

#if CUDA_VERSION < 13000
typedef struct CUold_st { int x; } CUold;
typedef CUparams CUkernelParams;
#else
typedef union CUnew_u { int y; float z; } CUnew;
typedef CUnode CUkernelParams;
#endif

#if CUDA_VERSION >= 13000
#define cuCtxCreate cuCtxCreate_v4
#define cuStreamGetInfo cuStreamGetInfo_v2
#else
#define cuCtxCreate cuCtxCreate_v2
#endif

CUresult cuInit(unsigned int Flags);
#if CUDA_VERSION < 13000
CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuGone(CUgone g);
CUresult cuStreamGetInfo(int *info);
CUresult cuStreamGetInfo_v2(int *info, int *more);
CUresult cuRenamedParam(int before);
CUresult cuWidened(int n);
#else
CUresult cuCtxCreate(CUcontext *pctx, CUparams *params, unsigned int flags, CUdevice dev);
CUresult cuFresh(CUfresh f, CUnew *n);
CUresult cuStreamGetInfo(int *info, int *more);
CUresult cuRenamedParam(int after);
CUresult cuWidened(long long n);
#endif
#endif
