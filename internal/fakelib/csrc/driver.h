// The fake CUDA driver as the fake libraries find it: the one package cu
// loaded, whose device memory is host memory, so that a fake may read and
// write it directly.
#ifndef FAKELIB_DRIVER_H
#define FAKELIB_DRIVER_H

// fake_driver returns the handle of the driver package cu loaded
// (GOCUDA_LIBCUDA, else libcuda.so.1), opening it if need be, or NULL
// with *err saying why, naming who ("the fake cuRAND"): no driver, or one
// that is not the fake. Call it once (it keeps the message in a buffer of
// its own).
void *fake_driver(const char *who, const char **err);

#endif
