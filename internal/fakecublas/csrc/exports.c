// What the fake exports beside the library's entry points, and its
// reports.
#include "fakecublas.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

// fakecublas_live counts the live objects of a kind, for leak checks:
// 0 cuBLAS handles, 1 cuBLASLt handles, 2 matmul descriptors, 3 matrix
// layouts, 4 preferences.
EXPORT long fakecublas_live(int kind) { return reg_count(kind); }

void run_error(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("fakecublas: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
