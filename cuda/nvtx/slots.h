//go:build linux && cgo

// What inject.c (the tables a tool fills, the loading of the tool) and
// events.c (the calls through the filled slots) share: NVTX v3's module
// and callback ids, and the slots of the two modules called here.
#ifndef GONVTX_SLOTS_H
#define GONVTX_SLOTS_H

// The NVTX version of these tables and of the event attributes, told to
// the tool.
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

// The slots of the CORE and CORE2 modules (inject.c), indexed by id.
extern slot gonvtx_core[CORE_SIZE];
extern slot gonvtx_core2[CORE2_SIZE];

#endif
