// What the fake exports beside the library's entry points, and its
// reports.
#include "fakecusparse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

// fakecusparse_live counts the live objects of a kind, for leak checks:
// 0 handles, 1 sparse matrices, 2 dense vectors, 3 dense matrices,
// 4 SpGEMM descriptors, 5 SpSV descriptors, 6 SpSM descriptors.
EXPORT long fakecusparse_live(int kind) { return reg_count(kind); }

// fakecusparse_marker tells the fake from the real library (Is).
EXPORT int fakecusparse_marker(void) { return 1; }

static __thread char t_err[512];

cusparseStatus_t fail(cusparseStatus_t r, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t_err, sizeof t_err, fmt, ap);
	va_end(ap);
	const char *v = getenv("FAKECUSPARSE_VERBOSE");
	if (v != NULL && *v != 0)
		fprintf(stderr, "fakecusparse: %s\n", t_err);
	return r;
}

// fakecusparse_last_error is the message of the calling thread's last
// call that failed, "" when none has.
EXPORT const char *fakecusparse_last_error(void) { return t_err; }

void run_error(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fputs("fakecusparse: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
