// Package libgputest holds the GPU tests of the raw library bindings under
// generated/: one real call of each library (NVRTC and
// nvJitLink, cuBLAS, cuBLASLt, cuRAND, cuFFT, cuSPARSE, cuSOLVER) checked
// against a result computed on the CPU, made through the raw packages and
// generated/cu only, so that the generated layer is what is tested. It has
// no code outside its tests.
//
// Where there is no GPU or driver (cu.Init fails) or a library cannot be
// loaded (its package's ErrNoLibrary), the test that needs it skips and
// says why; with GOCUDA_TEST_LIBS=required it fails instead, so that a
// run on the GPU machine cannot pass by skipping. The test of
// the missing-library path (every package's ErrNoLibrary, in a child
// process whose library paths do not exist) needs neither and runs
// everywhere.
//
// On the GPU machine, with a binary built here:
//
//	go test -c -tags cuda13000 -o libgpu.test ./internal/libgputest
//	LD_LIBRARY_PATH=/usr/local/cuda/lib64 GOCUDA_TEST_LIBS=required ./libgpu.test -test.v
package libgputest
