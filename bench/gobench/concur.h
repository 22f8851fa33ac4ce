// The run that concur.c's workers share with concur.go.
#include <stdatomic.h>
#include <stdint.h>

enum {
	GBC_OWN_STREAM,
	GBC_SHARED_STREAM,
	GBC_EVENT_WAIT,
	GBC_COPY,
	GBC_CREATE_DESTROY,
	GBC_COMPLETION,
	GBC_COMPLETION_ALONE,
};

enum {
	GBC_COPY_BYTES = 64 << 10,
	GBC_WINDOW = 32,       // completions a worker may have outstanding
	GBC_SAMPLE_EVERY = 8,  // one operation in so many is timed (a power of 2)
	GBC_DRAIN_EVERY = 256, // launches between a worker's synchronizes (a power of 2)
};

struct gbc_run {
	int scenario, threads;
	int64_t duration_ns;
	uintptr_t ctx, kernel, shared, dev;
	void **params;
	void *host;
	int64_t *lat;
	int caplat;

	atomic_int ready, go, stop;
	int64_t ops, elapsed_ns;
	int nlat;
};

int gbc_init(const char *file, int version);
int gbc_run(struct gbc_run *r);
