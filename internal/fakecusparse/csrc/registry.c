// The live objects of the fake, for the checks of every entry point: a
// handle or descriptor that was destroyed, or never made, is refused with
// the status cuSPARSE documents instead of being read.
#include "fakecusparse.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct entry {
	int kind;
	const void *p;
	struct entry *next;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct entry *g_live;

void reg_add(int kind, void *p) {
	struct entry *e = malloc(sizeof *e);
	if (e == NULL)
		abort();
	pthread_mutex_lock(&g_mu);
	*e = (struct entry){kind, p, g_live};
	g_live = e;
	pthread_mutex_unlock(&g_mu);
}

int reg_has(int kind, const void *p) {
	if (p == NULL)
		return 0;
	pthread_mutex_lock(&g_mu);
	struct entry *e = g_live;
	while (e != NULL && !(e->p == p && e->kind == kind))
		e = e->next;
	pthread_mutex_unlock(&g_mu);
	return e != NULL;
}

int reg_del(int kind, const void *p) {
	if (p == NULL)
		return 0;
	pthread_mutex_lock(&g_mu);
	struct entry **q = &g_live;
	while (*q != NULL && !((*q)->p == p && (*q)->kind == kind))
		q = &(*q)->next;
	struct entry *e = *q;
	if (e != NULL)
		*q = e->next;
	pthread_mutex_unlock(&g_mu);
	free(e);
	return e != NULL;
}

// fakecusparse_live counts the live objects of a kind, for leak checks:
// 0 handles, 1 sparse matrices, 2 dense vectors, 3 dense matrices,
// 4 SpGEMM descriptors, 5 SpSV descriptors, 6 SpSM descriptors.
EXPORT long fakecusparse_live(int kind) {
	long n = 0;
	pthread_mutex_lock(&g_mu);
	for (struct entry *e = g_live; e != NULL; e = e->next)
		n += e->kind == kind;
	pthread_mutex_unlock(&g_mu);
	return n;
}

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
