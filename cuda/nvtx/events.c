//go:build linux && cgo

// The application side of NVTX v3, its calling half: an event's
// attributes in NVTX's layout, and the calls through the slots the tool
// filled (inject.c).

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "slots.h"

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
	*use_core = !named && gonvtx_core[core_id] != NULL;
	return *use_core ? gonvtx_core[core_id] : gonvtx_core2[core2_id];
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
	slot f = gonvtx_core2[CORE2_DOMAIN_CREATE_A];
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
	slot f = gonvtx_core2[CORE2_DOMAIN_REGISTER_STRING_A];
	cstring c;
	const char *n;
	void *h;
	if (f == NULL || (n = cstring_make(&c, s, len)) == NULL)
		return NULL;
	h = ((domain_register_string_fn)f)(domain, n);
	free(c.heap);
	return h;
}
