package cuda

// A fused table for the generator's tests.

//fused bound cuMemAlloc out=dptr
//fused bound cuMemcpyHtoD sync
//fused bound cuEventCreate out=phEvent
//fused bound cuEventDestroy
//fused bound cuNames out=ops1
//fused bound cuModeGet out=mode sync
//fused hot cuEventRecord
//fused hot cuLaunch
//fused hot cuHotNames
//fused type cuCtxGetCurrent
//fused type cuVoid
//fused struct CUconfig
