// A fake NVTX tool: what Nsight Systems' injection library is to an
// application, written from NVTX v3's documented ABI. It attaches the
// way a tool does (InitializeInjectionNvtx2, the export tables, the
// function tables of the CORE and CORE2 modules) and writes every call
// it gets, one line each, to the file named by FAKENVTX_LOG.

#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*slot)(void);

// nvtxEventAttributes_t of NVTX v3.
typedef struct {
	uint16_t version;
	uint16_t size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type;
	int32_t reserved0;
	union {
		uint64_t u64;
		int64_t i64;
		double f64;
		uint32_t u32;
		int32_t i32;
		float f32;
	} payload;
	int32_t message_type;
	union {
		const char *ascii;
		const void *unicode;
		const void *registered;
	} message;
} attrs;

typedef struct {
	size_t struct_size;
	int (*get_module_function_table)(int module, slot ***table, unsigned *size);
} callbacks_table;

typedef struct {
	size_t struct_size;
	uint32_t version;
	uint32_t reserved0;
	void (*set_injection_version)(uint32_t);
} version_table;

typedef const void *(*get_export_table_fn)(uint32_t);

// Domains and registered strings are these structs; their handles point
// at them, so a line can name what the application passed.
typedef struct {
	int index;
	char *name;
} domain;

typedef struct {
	domain *dom;
	char *text;
} string;

enum { MAX_DOMAINS = 32 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static domain *domains[MAX_DOMAINS];
static int ndomains;
static uint64_t next_range = 1;
static __thread int depth[MAX_DOMAINS + 1]; // push depth per domain, 0: default

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void logf_(const char *fmt, ...) {
	char line[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof line - 2)
		n = sizeof line - 2;
	line[n++] = '\n';
	if (log_fd >= 0 && write(log_fd, line, n) != n)
		abort();
}

static const char *dom_name(const void *d) {
	return d == NULL ? "null" : ((const domain *)d)->name;
}

static int dom_index(const void *d) {
	return d == NULL ? 0 : ((const domain *)d)->index;
}

// describe writes a's fields into buf as one field list.
static void describe(char *buf, size_t n, const attrs *a) {
	char msg[1200], color[16], payload[64];
	switch (a->message_type) {
	case 1:
		snprintf(msg, sizeof msg, "\"%s\"", a->message.ascii);
		break;
	case 3: {
		const string *s = a->message.registered;
		snprintf(msg, sizeof msg, "reg(%s)\"%s\"", s->dom->name, s->text);
		break;
	}
	default:
		snprintf(msg, sizeof msg, "type%d", a->message_type);
	}
	if (a->color_type == 1)
		snprintf(color, sizeof color, "%08x", a->color);
	else
		snprintf(color, sizeof color, "none/%d", a->color_type);
	switch (a->payload_type) {
	case 0:
		snprintf(payload, sizeof payload, "none");
		break;
	case 1:
		snprintf(payload, sizeof payload, "u64:%llu", (unsigned long long)a->payload.u64);
		break;
	case 2:
		snprintf(payload, sizeof payload, "i64:%lld", (long long)a->payload.i64);
		break;
	case 3:
		snprintf(payload, sizeof payload, "f64:%.17g", a->payload.f64);
		break;
	case 4:
		snprintf(payload, sizeof payload, "u32:%u", a->payload.u32);
		break;
	case 5:
		snprintf(payload, sizeof payload, "i32:%d", a->payload.i32);
		break;
	case 6:
		snprintf(payload, sizeof payload, "f32:%.9g", (double)a->payload.f32);
		break;
	default:
		snprintf(payload, sizeof payload, "type%d", a->payload_type);
	}
	snprintf(buf, n, "v%u/%u %s cat=%u color=%s payload=%s", a->version, a->size, msg, a->category, color, payload);
}

#define DESCRIBE(a)          \
	char desc[1400];     \
	describe(desc, sizeof desc, a)

static void mark_ex(const attrs *a) {
	DESCRIBE(a);
	logf_("mark %s", desc);
}

static uint64_t range_start_ex(const attrs *a) {
	DESCRIBE(a);
	uint64_t id = __atomic_fetch_add(&next_range, 1, __ATOMIC_RELAXED);
	logf_("start %s -> %llu", desc, (unsigned long long)id);
	return id;
}

static void range_end(uint64_t id) {
	logf_("end %llu", (unsigned long long)id);
}

static int range_push_ex(const attrs *a) {
	DESCRIBE(a);
	int level = depth[0]++;
	logf_("push %s -> %d", desc, level);
	return level;
}

static int range_pop(void) {
	if (depth[0] == 0) {
		logf_("pop -> -1");
		return -1;
	}
	int level = --depth[0];
	logf_("pop -> %d", level);
	return level;
}

static void name_category(uint32_t id, const char *name) {
	logf_("category %u \"%s\"", id, name);
}

static void domain_mark_ex(void *d, const attrs *a) {
	DESCRIBE(a);
	logf_("domain_mark %s %s", dom_name(d), desc);
}

static uint64_t domain_range_start_ex(void *d, const attrs *a) {
	DESCRIBE(a);
	uint64_t id = __atomic_fetch_add(&next_range, 1, __ATOMIC_RELAXED);
	logf_("domain_start %s %s -> %llu", dom_name(d), desc, (unsigned long long)id);
	return id;
}

static void domain_range_end(void *d, uint64_t id) {
	logf_("domain_end %s %llu", dom_name(d), (unsigned long long)id);
}

static int domain_range_push_ex(void *d, const attrs *a) {
	DESCRIBE(a);
	int level = depth[dom_index(d)]++;
	logf_("domain_push %s %s -> %d", dom_name(d), desc, level);
	return level;
}

static int domain_range_pop(void *d) {
	int *p = &depth[dom_index(d)];
	if (*p == 0) {
		logf_("domain_pop %s -> -1", dom_name(d));
		return -1;
	}
	int level = --*p;
	logf_("domain_pop %s -> %d", dom_name(d), level);
	return level;
}

static void domain_name_category(void *d, uint32_t id, const char *name) {
	logf_("domain_category %s %u \"%s\"", dom_name(d), id, name);
}

static void *domain_register_string(void *d, const char *text) {
	if (d == NULL) {
		logf_("register null \"%s\"", text);
		return NULL;
	}
	string *s = calloc(1, sizeof *s);
	s->dom = d;
	s->text = strdup(text);
	logf_("register %s \"%s\"", dom_name(d), text);
	return s;
}

static void *domain_create(const char *name) {
	pthread_mutex_lock(&mu);
	domain *d = NULL;
	if (ndomains < MAX_DOMAINS) {
		d = calloc(1, sizeof *d);
		d->index = ndomains + 1;
		d->name = strdup(name);
		domains[ndomains++] = d;
	}
	pthread_mutex_unlock(&mu);
	logf_("domain_create \"%s\"", name);
	return d;
}

static int want(const char *modules, const char *name) {
	size_t n = strlen(name);
	for (const char *p = modules; (p = strstr(p, name)) != NULL; p += n)
		if ((p == modules || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

static void fill(slot **table, unsigned size, unsigned id, slot fn) {
	if (id < size && table[id] != NULL)
		*table[id] = fn;
}

// The entry point a tool exports. Built with FAKENVTX_NO_ENTRY it is
// hidden: a library that is no NVTX tool.
#ifdef FAKENVTX_NO_ENTRY
#define ENTRY static __attribute__((unused))
#else
#define ENTRY EXPORT
#endif

ENTRY int InitializeInjectionNvtx2(get_export_table_fn get) {
	const char *path = getenv("FAKENVTX_LOG");
	if (path != NULL)
		log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	const char *modules = getenv("FAKENVTX_MODULES");
	if (modules == NULL)
		modules = "core,core2";

	const callbacks_table *cb = get(1);
	const version_table *ver = get(3);
	if (cb == NULL || ver == NULL) {
		logf_("init: export tables missing");
		return 0;
	}
	ver->set_injection_version(ver->version);
	char sizes[256];
	int off = 0;
	static const char *names[] = {NULL, "core", "cuda", "opencl", "cudart", "core2", "sync"};
	for (int m = 1; m <= 6; m++) {
		slot **table = NULL;
		unsigned size = 0;
		if (!cb->get_module_function_table(m, &table, &size)) {
			off += snprintf(sizes + off, sizeof sizes - off, " %s=refused", names[m]);
			continue;
		}
		// Entry 0 is no function, and the entry past the end is NULL.
		const char *ends = table[0] == NULL && table[size] == NULL ? "" : "(bad ends)";
		off += snprintf(sizes + off, sizeof sizes - off, " %s=%u%s", names[m], size, ends);
	}
	slot **bad = NULL;
	unsigned badsize = 0;
	int refused = !cb->get_module_function_table(7, &bad, &badsize) && !cb->get_module_function_table(0, &bad, &badsize);
	logf_("init etid0=%s callbacks=%zu version=%u/%zu modules:%s unknown=%s", get(0) == NULL ? "null" : "set",
	      cb->struct_size, ver->version, ver->struct_size, sizes, refused ? "refused" : "given");

	slot **t;
	unsigned n;
	if (want(modules, "core") && cb->get_module_function_table(1, &t, &n)) {
		fill(t, n, 1, (slot)mark_ex);
		fill(t, n, 4, (slot)range_start_ex);
		fill(t, n, 7, (slot)range_end);
		fill(t, n, 8, (slot)range_push_ex);
		fill(t, n, 11, (slot)range_pop);
		fill(t, n, 12, (slot)name_category);
	}
	if (want(modules, "core2") && cb->get_module_function_table(5, &t, &n)) {
		fill(t, n, 1, (slot)domain_mark_ex);
		fill(t, n, 2, (slot)domain_range_start_ex);
		fill(t, n, 3, (slot)domain_range_end);
		fill(t, n, 4, (slot)domain_range_push_ex);
		fill(t, n, 5, (slot)domain_range_pop);
		fill(t, n, 8, (slot)domain_name_category);
		fill(t, n, 10, (slot)domain_register_string);
		fill(t, n, 12, (slot)domain_create);
	}
	const char *result = getenv("FAKENVTX_INIT_RESULT");
	if (result != NULL && strcmp(result, "0") == 0) {
		logf_("init refused");
		return 0;
	}
	return 1;
}
