#include "objects.h"

#include <pthread.h>
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

long reg_count(int kind) {
	long n = 0;
	pthread_mutex_lock(&g_mu);
	for (struct entry *e = g_live; e != NULL; e = e->next)
		n += e->kind == kind;
	pthread_mutex_unlock(&g_mu);
	return n;
}
