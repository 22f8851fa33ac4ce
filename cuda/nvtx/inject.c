//go:build linux && cgo

// The application side of NVTX v3: the function-pointer tables a tool
// fills through the export table, the loading of the tool named by
// NVTX_INJECTION64_PATH, and the calls through the filled pointers. Every
// layout here is NVTX's ABI, for LP64.

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

// The NVTX version these tables and attributes are, told to the tool.
#define GONVTX_NVTX_VERSION 3

typedef void (*slot)(void);

// NVTX's callback modules. A module's size counts its ids from 0, which
// no function has.
enum {
	MOD_CORE = 1,
	MOD_CUDA = 2,
	MOD_OPENCL = 3,
	MOD_CUDART = 4,
	MOD_CORE2 = 5,
	MOD_SYNC = 6,
	MOD_COUNT = 7,
};

enum {
	CORE_SIZE = 16,
	CUDA_SIZE = 9,
	OPENCL_SIZE = 15,
	CUDART_SIZE = 7,
	CORE2_SIZE = 16,
	SYNC_SIZE = 7,
};

// The ids of the slots called here.
enum {
	CORE_MARK_EX = 1,
	CORE_RANGE_START_EX = 4,
	CORE_RANGE_END = 7,
	CORE_RANGE_PUSH_EX = 8,
	CORE_RANGE_POP = 11,
	CORE_NAME_CATEGORY_A = 12,
};

enum {
	CORE2_DOMAIN_MARK_EX = 1,
	CORE2_DOMAIN_RANGE_START_EX = 2,
	CORE2_DOMAIN_RANGE_END = 3,
	CORE2_DOMAIN_RANGE_PUSH_EX = 4,
	CORE2_DOMAIN_RANGE_POP = 5,
	CORE2_DOMAIN_NAME_CATEGORY_A = 8,
	CORE2_DOMAIN_REGISTER_STRING_A = 10,
	CORE2_DOMAIN_CREATE_A = 12,
};

// Export table ids a tool asks for.
enum {
	ETID_CALLBACKS = 1,
	ETID_VERSIONINFO = 3,
};

// NVTX's message types, color type and the push/pop result of a call no
// tool takes.
enum {
	MESSAGE_ASCII = 1,
	MESSAGE_REGISTERED = 3,
	COLOR_ARGB = 1,
	NO_PUSH_POP_TRACKING = -2,
};

// nvtxEventAttributes_t, version 3 of the API, 48 bytes.
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
		void *registered;
	} message;
} event_attrs;

_Static_assert(sizeof(event_attrs) == 48, "event attributes are 48 bytes");
_Static_assert(offsetof(event_attrs, payload) == 24, "payload at 24");
_Static_assert(offsetof(event_attrs, message) == 40, "message at 40");

typedef void (*mark_fn)(const event_attrs *);
typedef uint64_t (*range_start_fn)(const event_attrs *);
typedef void (*range_end_fn)(uint64_t);
typedef int (*push_fn)(const event_attrs *);
typedef int (*pop_fn)(void);
typedef void (*name_category_fn)(uint32_t, const char *);
typedef void (*domain_mark_fn)(void *, const event_attrs *);
typedef uint64_t (*domain_range_start_fn)(void *, const event_attrs *);
typedef void (*domain_range_end_fn)(void *, uint64_t);
typedef int (*domain_push_fn)(void *, const event_attrs *);
typedef int (*domain_pop_fn)(void *);
typedef void (*domain_name_category_fn)(void *, uint32_t, const char *);
typedef void *(*domain_register_string_fn)(void *, const char *);
typedef void *(*domain_create_fn)(const char *);

// The slots a tool fills, and the tables it is given: entry i points at
// slot i; entry 0 and the one past the last are NULL, so a tool that reads
// beyond the size it was told finds NULL rather than another module's slot.
static slot core[CORE_SIZE], cuda[CUDA_SIZE], opencl[OPENCL_SIZE];
static slot cudart[CUDART_SIZE], core2[CORE2_SIZE], sync_[SYNC_SIZE];
static slot *core_tab[CORE_SIZE + 1], *cuda_tab[CUDA_SIZE + 1];
static slot *opencl_tab[OPENCL_SIZE + 1], *cudart_tab[CUDART_SIZE + 1];
static slot *core2_tab[CORE2_SIZE + 1], *sync_tab[SYNC_SIZE + 1];

static const struct {
	slot *slots;
	slot **tab;
	unsigned size;
} modules[MOD_COUNT] = {
	[MOD_CORE] = {core, core_tab, CORE_SIZE},
	[MOD_CUDA] = {cuda, cuda_tab, CUDA_SIZE},
	[MOD_OPENCL] = {opencl, opencl_tab, OPENCL_SIZE},
	[MOD_CUDART] = {cudart, cudart_tab, CUDART_SIZE},
	[MOD_CORE2] = {core2, core2_tab, CORE2_SIZE},
	[MOD_SYNC] = {sync_, sync_tab, SYNC_SIZE},
};

static int get_module_function_table(int module, slot ***out_table, unsigned *out_size) {
	if (module <= 0 || module >= MOD_COUNT)
		return 0;
	if (out_table != NULL)
		*out_table = modules[module].tab;
	if (out_size != NULL)
		*out_size = modules[module].size;
	return 1;
}

static void set_injection_version(uint32_t version) {
	(void)version;
}

static const struct {
	size_t struct_size;
	int (*get_module_function_table)(int, slot ***, unsigned *);
} callbacks_table = {sizeof callbacks_table, get_module_function_table};

static const struct {
	size_t struct_size;
	uint32_t version;
	uint32_t reserved0;
	void (*set_injection_version)(uint32_t);
} version_table = {sizeof version_table, GONVTX_NVTX_VERSION, 0, set_injection_version};

static const void *get_export_table(uint32_t id) {
	switch (id) {
	case ETID_CALLBACKS:
		return &callbacks_table;
	case ETID_VERSIONINFO:
		return &version_table;
	}
	return NULL;
}

static void clear_slots(void) {
	for (int m = 1; m < MOD_COUNT; m++)
		memset(modules[m].slots, 0, modules[m].size * sizeof(slot));
}

static void copy_error(char *err, size_t errlen, const char *msg) {
	if (errlen == 0)
		return;
	if (msg == NULL)
		msg = "";
	strncpy(err, msg, errlen - 1);
	err[errlen - 1] = 0;
}

typedef int (*init_fn)(const void *(*)(uint32_t));

// gonvtx_load runs once per process, before any other call here (package
// nvtx's sync.Once); the slots are read only after Go publishes its
// result, which orders the tool's writes before them.
int gonvtx_load(const char *path, char *err, size_t errlen) {
	for (int m = 1; m < MOD_COUNT; m++) {
		modules[m].tab[0] = NULL;
		for (unsigned i = 1; i < modules[m].size; i++)
			modules[m].tab[i] = &modules[m].slots[i];
		modules[m].tab[modules[m].size] = NULL;
	}
	void *lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (lib == NULL) {
		copy_error(err, errlen, dlerror());
		return GONVTX_NO_LIBRARY;
	}
	dlerror();
	init_fn init = (init_fn)dlsym(lib, "InitializeInjectionNvtx2");
	if (init == NULL) {
		copy_error(err, errlen, dlerror());
		dlclose(lib);
		return GONVTX_NO_ENTRY;
	}
	if (init(get_export_table) == 0) {
		// A tool that refuses may have filled slots already: none of
		// them may be called.
		clear_slots();
		copy_error(err, errlen, "InitializeInjectionNvtx2 returned 0");
		dlclose(lib);
		return GONVTX_INIT_FAILED;
	}
	return GONVTX_ATTACHED;
}

// A message as C wants it: short ones on the stack, long ones on the heap.
typedef struct {
	char small[256];
	char *heap;
} cstring;

static const char *cstring_make(cstring *c, const char *s, size_t n) {
	char *d = c->small;
	c->heap = NULL;
	if (n >= sizeof c->small) {
		d = c->heap = malloc(n + 1);
		if (d == NULL)
			return NULL;
	}
	if (n > 0)
		memcpy(d, s, n);
	d[n] = 0;
	return d;
}

static void fill(event_attrs *a, const char *msg, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload) {
	memset(a, 0, sizeof *a);
	a->version = GONVTX_NVTX_VERSION;
	a->size = (uint16_t)sizeof *a;
	a->category = category;
	if (color != 0) {
		a->color_type = COLOR_ARGB;
		a->color = color;
	}
	a->payload_type = ptype;
	switch (ptype) {
	case 1:
		a->payload.u64 = payload;
		break;
	case 2:
		a->payload.i64 = (int64_t)payload;
		break;
	case 3:
		memcpy(&a->payload.f64, &payload, sizeof a->payload.f64);
		break;
	case 4:
		a->payload.u32 = (uint32_t)payload;
		break;
	case 5:
		a->payload.i32 = (int32_t)(uint32_t)payload;
		break;
	case 6: {
		uint32_t bits = (uint32_t)payload;
		memcpy(&a->payload.f32, &bits, sizeof a->payload.f32);
		break;
	}
	default:
		a->payload_type = 0;
	}
	if (reg != NULL) {
		a->message_type = MESSAGE_REGISTERED;
		a->message.registered = reg;
	} else {
		a->message_type = MESSAGE_ASCII;
		a->message.ascii = msg;
	}
}

// An event with its message terminated in C memory.
typedef struct {
	cstring text;
	event_attrs attrs;
} event;

static int event_make(event *e, const char *msg, size_t len, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload) {
	const char *m = NULL;
	e->text.heap = NULL;
	if (reg == NULL && (m = cstring_make(&e->text, msg, len)) == NULL)
		return 0;
	fill(&e->attrs, m, reg, category, color, ptype, payload);
	return 1;
}

// pick returns the slot an event goes to: for the default domain the CORE
// function, or the CORE2 one with a NULL domain (NVTX's default domain)
// where the tool filled only that; for a named domain only CORE2's, with
// the domain's handle, NULL where the tool gave none (as a C program's
// domain calls pass what nvtxDomainCreateA returned).
static slot pick(int named, int core_id, int core2_id, int *use_core) {
	*use_core = !named && core[core_id] != NULL;
	return *use_core ? core[core_id] : core2[core2_id];
}

#define EVENT_ARGS msg, len, reg, category, color, ptype, payload

void gonvtx_mark(void *domain, int named, const char *msg, size_t len, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload) {
	int use_core;
	slot f = pick(named, CORE_MARK_EX, CORE2_DOMAIN_MARK_EX, &use_core);
	event e;
	if (f == NULL || !event_make(&e, EVENT_ARGS))
		return;
	if (use_core)
		((mark_fn)f)(&e.attrs);
	else
		((domain_mark_fn)f)(domain, &e.attrs);
	free(e.text.heap);
}

uint64_t gonvtx_range_start(void *domain, int named, const char *msg, size_t len, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload) {
	int use_core;
	slot f = pick(named, CORE_RANGE_START_EX, CORE2_DOMAIN_RANGE_START_EX, &use_core);
	event e;
	uint64_t id;
	if (f == NULL || !event_make(&e, EVENT_ARGS))
		return 0;
	if (use_core)
		id = ((range_start_fn)f)(&e.attrs);
	else
		id = ((domain_range_start_fn)f)(domain, &e.attrs);
	free(e.text.heap);
	return id;
}

void gonvtx_range_end(void *domain, int named, uint64_t id) {
	int use_core;
	slot f = pick(named, CORE_RANGE_END, CORE2_DOMAIN_RANGE_END, &use_core);
	if (f == NULL)
		return;
	if (use_core)
		((range_end_fn)f)(id);
	else
		((domain_range_end_fn)f)(domain, id);
}

int gonvtx_push(void *domain, int named, const char *msg, size_t len, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload) {
	int use_core;
	slot f = pick(named, CORE_RANGE_PUSH_EX, CORE2_DOMAIN_RANGE_PUSH_EX, &use_core);
	event e;
	int level;
	if (f == NULL || !event_make(&e, EVENT_ARGS))
		return NO_PUSH_POP_TRACKING;
	if (use_core)
		level = ((push_fn)f)(&e.attrs);
	else
		level = ((domain_push_fn)f)(domain, &e.attrs);
	free(e.text.heap);
	return level;
}

int gonvtx_pop(void *domain, int named) {
	int use_core;
	slot f = pick(named, CORE_RANGE_POP, CORE2_DOMAIN_RANGE_POP, &use_core);
	if (f == NULL)
		return NO_PUSH_POP_TRACKING;
	if (use_core)
		return ((pop_fn)f)();
	return ((domain_pop_fn)f)(domain);
}

void gonvtx_name_category(void *domain, int named, uint32_t category, const char *name, size_t len) {
	int use_core;
	slot f = pick(named, CORE_NAME_CATEGORY_A, CORE2_DOMAIN_NAME_CATEGORY_A, &use_core);
	cstring c;
	const char *n;
	if (f == NULL || (n = cstring_make(&c, name, len)) == NULL)
		return;
	if (use_core)
		((name_category_fn)f)(category, n);
	else
		((domain_name_category_fn)f)(domain, category, n);
	free(c.heap);
}

void *gonvtx_domain_create(const char *name, size_t len) {
	slot f = core2[CORE2_DOMAIN_CREATE_A];
	cstring c;
	const char *n;
	void *d;
	if (f == NULL || (n = cstring_make(&c, name, len)) == NULL)
		return NULL;
	d = ((domain_create_fn)f)(n);
	free(c.heap);
	return d;
}

void *gonvtx_register_string(void *domain, const char *s, size_t len) {
	slot f = core2[CORE2_DOMAIN_REGISTER_STRING_A];
	cstring c;
	const char *n;
	void *h;
	if (f == NULL || (n = cstring_make(&c, s, len)) == NULL)
		return NULL;
	h = ((domain_register_string_fn)f)(domain, n);
	free(c.heap);
	return h;
}
