//go:build linux && cgo

// The application side of the NVTX v3 tool protocol, written from its
// documented ABI: the layouts a tool reads (event attributes, the export
// tables) and the entry points package nvtx calls. No NVIDIA header is
// used.
#ifndef GONVTX_INJECT_H
#define GONVTX_INJECT_H

#include <stddef.h>
#include <stdint.h>

// Results of gonvtx_load.
enum {
	GONVTX_ATTACHED = 0,
	GONVTX_NO_LIBRARY = 1,  // dlopen failed
	GONVTX_NO_ENTRY = 2,    // the library exports no InitializeInjectionNvtx2
	GONVTX_INIT_FAILED = 3, // InitializeInjectionNvtx2 returned 0
};

// The calls take an event's attributes as scalars, so that no Go memory
// holding Go pointers crosses into C: the message is Go string data (msg,
// len), copied and terminated here, unless reg, a registered string's
// handle, is set; color 0 means none; ptype is NVTX's payload type (0:
// none) and payload the value's bits. named is 0 for NVTX's default
// domain (domain NULL) and 1 for a domain of the program's, whose handle
// may be NULL too where the tool gave none.

int gonvtx_load(const char *path, char *err, size_t errlen);

void gonvtx_mark(void *domain, int named, const char *msg, size_t len, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
uint64_t gonvtx_range_start(void *domain, int named, const char *msg, size_t len, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
void gonvtx_range_end(void *domain, int named, uint64_t id);
int gonvtx_push(void *domain, int named, const char *msg, size_t len, void *reg, uint32_t category, uint32_t color, int32_t ptype, uint64_t payload);
int gonvtx_pop(void *domain, int named);

void gonvtx_name_category(void *domain, int named, uint32_t category, const char *name, size_t len);
void *gonvtx_domain_create(const char *name, size_t len);
void *gonvtx_register_string(void *domain, const char *s, size_t len);

#endif
