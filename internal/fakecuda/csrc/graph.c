// Stream capture and graphs. Work enqueued on a capturing stream becomes a
// node of a graph (memsets, copies, host functions) that depends on the
// stream's last nodes; events recorded in the capture carry dependencies to
// the streams that wait on them, which join the capture. An executable
// graph replays its nodes on a stream in creation order, one order its
// dependencies allow. Kernel nodes are launches of Go kernels (module.c),
// sharing the launch's copied parameters. Graphs built node by node
// (cuGraphCreate, cuGraphAdd*Node) have kernel, 1D copy, 1D memset, host,
// event and empty nodes, and the kernel and copy nodes of an executable
// graph take new parameters. Not modeled: kernel nodes of functions
// without code, memory-allocation, child-graph and conditional nodes.
#include "fake.h"

#include <stdlib.h>
#include <string.h>

enum { MODE_GLOBAL = 0, MODE_THREAD_LOCAL = 1, MODE_RELAXED = 2 };
enum { STATUS_NONE = 0, STATUS_ACTIVE = 1, STATUS_INVALIDATED = 2 };

struct gnode {
	uint64_t h;
	size_t index; // in its graph's nodes
	enum op_kind kind;
	char *dst;
	const char *src;
	size_t bytes;
	unsigned elem;
	uint32_t value;
	CUhostFn fn;
	void *arg;
	struct klaunch *k; // kernel (referenced)
	uint64_t ev;       // event record and wait nodes: the event's handle
	struct graph *g;   // the graph it belongs to
	struct gnode **deps;
	size_t ndeps;
};

struct graph {
	uint64_t h; // 0 while its capture lasts
	struct gnode **nodes; // in creation order: dependencies come first
	size_t n, cap;
};

struct gexec {
	uint64_t h;
	uint64_t src; // the graph it was instantiated from
	struct ctx *ctx;
	struct gnode *nodes; // copies; deps point into this array
	size_t n;
};

struct capture {
	struct capture *next; // in g_captures
	uint64_t id;
	struct graph *g;
	struct stream *origin;
	struct stream **streams; // taking part, origin first
	size_t n, cap;
	int mode;
	pthread_t thread; // that began it
	int invalidated;
};

static struct capture *g_captures; // active captures

// empty_fn is the host function of empty nodes.
static void empty_fn(void *arg) { (void)arg; }
static uint64_t g_capture_ids;

static struct gnode **copy_deps(struct gnode **src, size_t n) {
	struct gnode **d = xrealloc(NULL, n * sizeof *d);
	memcpy(d, src, n * sizeof *d);
	return d;
}

// add_deps adds to *deps the nodes of src it lacks.
static void add_deps(struct gnode ***deps, size_t *n, struct gnode **src, size_t m) {
	for (size_t i = 0; i < m; i++) {
		size_t j = 0;
		while (j < *n && (*deps)[j] != src[i])
			j++;
		if (j == *n) {
			*deps = xrealloc(*deps, (*n + 1) * sizeof **deps);
			(*deps)[(*n)++] = src[i];
		}
	}
}

static void graph_free(struct graph *g) {
	for (size_t i = 0; i < g->n; i++) {
		handle_free(g->nodes[i]->h);
		klaunch_unref(g->nodes[i]->k);
		free(g->nodes[i]->deps);
		free(g->nodes[i]);
	}
	if (g->h != 0)
		handle_free(g->h);
	free(g->nodes);
	free(g);
}

// ---- capture ----

static struct capture *find_capture(uint64_t id) {
	for (struct capture *c = g_captures; c != NULL; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void join(struct capture *c, struct stream *s) {
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4;
		c->streams = xrealloc(c->streams, c->cap * sizeof *c->streams);
	}
	c->streams[c->n++] = s;
	s->cap = c;
	s->cap_gen = 0;
	s->joined_gen = UINT64_MAX;
}

static void leave(struct stream *s) {
	s->cap = NULL;
	free(s->deps);
	s->deps = NULL;
	s->ndeps = 0;
}

// end takes every stream out of c and c out of the active captures; the
// caller frees c and its graph.
static void end(struct capture *c) {
	for (size_t i = 0; i < c->n; i++)
		leave(c->streams[i]);
	for (struct capture **p = &g_captures; *p != NULL; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
}

static void capture_free(struct capture *c) {
	if (c->g != NULL)
		graph_free(c->g);
	free(c->streams);
	free(c);
}

void capture_invalidate(struct stream *s) { s->cap->invalidated = 1; }

CUresult capture_guard(void) {
	pthread_t self = pthread_self();
	for (struct capture *c = g_captures; c != NULL; c = c->next) {
		if (c->mode == MODE_GLOBAL || (c->mode == MODE_THREAD_LOCAL && pthread_equal(c->thread, self))) {
			c->invalidated = 1;
			return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
	}
	return CUDA_SUCCESS;
}

CUresult capture_add(struct stream *s, struct op *op, int sync) {
	struct capture *c = s->cap;
	CUresult r = CUDA_SUCCESS;
	if (c->invalidated)
		r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	else if (sync || (op->kind != OP_MEMSET && op->kind != OP_COPY && op->kind != OP_HOSTFN && op->kind != OP_KERNEL)) {
		c->invalidated = 1;
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	} else {
		struct gnode *n = calloc(1, sizeof *n);
		if (n == NULL)
			abort();
		n->kind = op->kind;
		n->dst = op->dst;
		n->src = op->src;
		n->bytes = op->bytes;
		n->elem = op->elem;
		n->value = op->value;
		n->fn = op->fn;
		n->arg = op->arg;
		n->k = op->k; // the node takes the op's reference
		op->k = NULL;
		n->g = c->g;
		n->deps = s->deps;
		n->ndeps = s->ndeps;
		struct graph *g = c->g;
		if (g->n == g->cap) {
			g->cap = g->cap ? 2 * g->cap : 16;
			g->nodes = xrealloc(g->nodes, g->cap * sizeof *g->nodes);
		}
		n->index = g->n;
		g->nodes[g->n++] = n;
		n->h = handle_new(K_NODE, n);
		s->deps = copy_deps(&n, 1);
		s->ndeps = 1;
		s->cap_gen++;
	}
	klaunch_unref(op->k); // a refused kernel launch's
	op_free(op);
	return r;
}

void capture_record(struct event *e, struct stream *s) {
	capture_forget(e);
	e->cap_id = s->cap->id;
	e->cap_stream = s->id;
	e->cap_gen = s->cap_gen;
	e->deps = copy_deps(s->deps, s->ndeps);
	e->ndeps = s->ndeps;
}

void capture_forget(struct event *e) {
	free(e->deps);
	e->deps = NULL;
	e->ndeps = 0;
	e->cap_id = 0;
}

// joined marks the stream that recorded e as joined, by waiter, if it
// added nothing since: its work is then ordered before the waiter's.
static void joined(struct capture *c, struct event *e, struct stream *waiter) {
	for (size_t i = 0; i < c->n; i++) {
		struct stream *t = c->streams[i];
		if (t != waiter && t->id == e->cap_stream && t->cap_gen == e->cap_gen)
			t->joined_gen = t->cap_gen;
	}
}

CUresult capture_wait(struct stream *s, struct event *e) {
	struct capture *ec = e->cap_id ? find_capture(e->cap_id) : NULL;
	if (e->cap_id != 0 && ec == NULL)
		return CUDA_ERROR_CAPTURED_EVENT; // recorded in a capture that ended
	if (s->cap == NULL) {
		// A stream that waits on captured work joins the capture.
		if (s->h == 0)
			return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		join(ec, s);
		s->deps = copy_deps(e->deps, e->ndeps);
		s->ndeps = e->ndeps;
		joined(ec, e, s);
		return CUDA_SUCCESS;
	}
	struct capture *c = s->cap;
	if (c->invalidated)
		return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
	if (ec == NULL && e->rec == 0)
		return CUDA_SUCCESS; // never recorded: nothing to wait for
	if (ec != c) { // work outside this capture
		c->invalidated = 1;
		return CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
	}
	add_deps(&s->deps, &s->ndeps, e->deps, e->ndeps);
	joined(c, e, s);
	return CUDA_SUCCESS;
}

void capture_leave(struct stream *s) {
	struct capture *c = s->cap;
	if (s == c->origin) { // nobody can end it now
		end(c);
		capture_free(c);
		return;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (c->streams[i] == s) {
			c->streams[i] = c->streams[--c->n];
			break;
		}
	}
	c->invalidated = 1;
	leave(s);
}

// capture_stream: the prologue of the capture calls; lock held on success.
static CUresult capture_stream(CUstream h, struct stream **s) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	r = stream_of(h, s);
	if (r != CUDA_SUCCESS)
		unlock();
	return r;
}

EXPORT CUresult cuStreamBeginCapture_v2(CUstream h, int mode) {
	ENTER(cuStreamBeginCapture);
	if (mode < MODE_GLOBAL || mode > MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s;
	CUresult r = capture_stream(h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	if (s->h == 0)
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; // the NULL stream cannot capture
	else if (s->cap != NULL)
		r = CUDA_ERROR_ILLEGAL_STATE;
	else {
		struct capture *c = calloc(1, sizeof *c);
		if (c == NULL || (c->g = calloc(1, sizeof *c->g)) == NULL)
			abort();
		c->id = ++g_capture_ids;
		c->origin = s;
		c->mode = mode;
		c->thread = pthread_self();
		join(c, s);
		c->next = g_captures;
		g_captures = c;
	}
	unlock();
	return r;
}

EXPORT CUresult cuStreamEndCapture(CUstream h, CUgraph *pg) {
	ENTER(cuStreamEndCapture);
	if (pg == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s;
	CUresult r = capture_stream(h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	struct capture *c = s->cap;
	if (c == NULL)
		r = CUDA_ERROR_ILLEGAL_STATE;
	else if (s != c->origin)
		r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	else if (c->mode != MODE_RELAXED && !pthread_equal(c->thread, pthread_self()))
		r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD; // the capture goes on
	else {
		// Every other stream must have been joined back after its last node.
		int unjoined = 0;
		for (size_t i = 1; i < c->n; i++)
			unjoined |= c->streams[i]->joined_gen != c->streams[i]->cap_gen;
		end(c);
		*pg = NULL;
		if (c->invalidated)
			r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
		else if (unjoined)
			r = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
		else {
			c->g->h = handle_new(K_GRAPH, c->g);
			g_live[L_GRAPHS]++;
			*pg = (CUgraph)(uintptr_t)c->g->h;
			c->g = NULL;
		}
		capture_free(c);
	}
	unlock();
	return r;
}

EXPORT CUresult cuStreamIsCapturing(CUstream h, int *status) {
	ENTER(cuStreamIsCapturing);
	if (status == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct stream *s;
	CUresult r = capture_stream(h, &s);
	if (r != CUDA_SUCCESS)
		return r;
	*status = s->cap == NULL ? STATUS_NONE : s->cap->invalidated ? STATUS_INVALIDATED : STATUS_ACTIVE;
	unlock();
	return CUDA_SUCCESS;
}

// ---- graphs ----

// locked_graph: initialized, graph resolved, lock held on success.
static CUresult locked_graph(CUgraph h, struct graph **g) {
	return locked_handle((uint64_t)(uintptr_t)h, K_GRAPH, CUDA_ERROR_INVALID_VALUE, (void **)g);
}

// The listing calls fill at most *n entries, zero the rest, and lower *n
// to the number there are: the driver's convention.
EXPORT CUresult cuGraphGetNodes(CUgraph h, CUgraphNode *nodes, size_t *n) {
	ENTER(cuGraphGetNodes);
	if (n == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct graph *g;
	CUresult r = locked_graph(h, &g);
	if (r != CUDA_SUCCESS)
		return r;
	if (nodes != NULL)
		for (size_t i = 0; i < *n; i++)
			nodes[i] = i < g->n ? (CUgraphNode)(uintptr_t)g->nodes[i]->h : NULL;
	if (nodes == NULL || *n > g->n)
		*n = g->n;
	unlock();
	return CUDA_SUCCESS;
}

static CUresult edges(CUgraph h, CUgraphNode *from, CUgraphNode *to, void *data, size_t *n) {
	if (n == NULL || (from == NULL) != (to == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	struct graph *g;
	CUresult r = locked_graph(h, &g);
	if (r != CUDA_SUCCESS)
		return r;
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++) {
		for (size_t j = 0; j < g->nodes[i]->ndeps; j++, k++) {
			if (from != NULL && k < *n) {
				from[k] = (CUgraphNode)(uintptr_t)g->nodes[i]->deps[j]->h;
				to[k] = (CUgraphNode)(uintptr_t)g->nodes[i]->h;
			}
		}
	}
	if (from != NULL) {
		for (size_t i = k; i < *n; i++)
			from[i] = to[i] = NULL;
		if (data != NULL) // CUgraphEdgeData: 8 bytes, all default
			memset(data, 0, 8 * (*n));
	}
	if (from == NULL || *n > k)
		*n = k;
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphGetEdges(CUgraph h, CUgraphNode *from, CUgraphNode *to, size_t *n) {
	ENTER(cuGraphGetEdges);
	return edges(h, from, to, NULL, n);
}

EXPORT CUresult cuGraphGetEdges_v2(CUgraph h, CUgraphNode *from, CUgraphNode *to, void *edgeData, size_t *n) {
	ENTER(cuGraphGetEdges);
	return edges(h, from, to, edgeData, n);
}

EXPORT CUresult cuGraphDestroy(CUgraph h) {
	ENTER(cuGraphDestroy);
	struct graph *g;
	CUresult r = locked_graph(h, &g);
	if (r != CUDA_SUCCESS)
		return r;
	g_live[L_GRAPHS]--;
	graph_free(g);
	unlock();
	return CUDA_SUCCESS;
}

// ---- executable graphs ----

static void exec_free(struct gexec *x) {
	handle_free(x->h);
	for (size_t i = 0; i < x->n; i++) {
		free(x->nodes[i].deps);
		klaunch_unref(x->nodes[i].k);
	}
	free(x->nodes);
	free(x);
}

static void reap_exec(void *obj, void *arg) {
	struct gexec *x = obj;
	if (x->ctx == arg) {
		g_live[L_EXECS]--;
		g_live[L_REAPED]++;
		exec_free(x);
	}
}

void exec_reap(struct ctx *c) { handle_each(K_EXEC, reap_exec, c); }

// set_params copies a graph node's parameters (not its dependencies).
static void set_params(struct gnode *dst, const struct gnode *src) {
	dst->kind = src->kind;
	dst->dst = src->dst;
	dst->src = src->src;
	dst->bytes = src->bytes;
	dst->elem = src->elem;
	dst->value = src->value;
	dst->fn = src->fn;
	dst->arg = src->arg;
	dst->ev = src->ev;
	if (src->k != NULL)
		src->k->refs++;
	klaunch_unref(dst->k);
	dst->k = src->k;
}

static CUresult instantiate(CUgraphExec *px, CUgraph h, unsigned long long flags) {
	if (px == NULL || (flags & ~0xFull)) // AUTO_FREE_ON_LAUNCH, UPLOAD, DEVICE_LAUNCH, USE_NODE_PRIORITY
		return CUDA_ERROR_INVALID_VALUE;
	struct graph *g;
	CUresult r = locked_graph(h, &g);
	if (r != CUDA_SUCCESS)
		return r;
	struct ctx *c;
	r = current_ctx(&c);
	if (r == CUDA_SUCCESS) {
		struct gexec *x = calloc(1, sizeof *x);
		if (x == NULL)
			abort();
		x->ctx = c;
		x->src = g->h;
		x->n = g->n;
		x->nodes = xrealloc(NULL, g->n * sizeof *x->nodes);
		for (size_t i = 0; i < g->n; i++) {
			struct gnode *n = &x->nodes[i];
			memset(n, 0, sizeof *n);
			set_params(n, g->nodes[i]);
			n->index = i;
			n->ndeps = g->nodes[i]->ndeps;
			n->deps = xrealloc(NULL, n->ndeps * sizeof *n->deps);
			for (size_t j = 0; j < n->ndeps; j++)
				n->deps[j] = &x->nodes[g->nodes[i]->deps[j]->index];
		}
		x->h = handle_new(K_EXEC, x);
		g_live[L_EXECS]++;
		*px = (CUgraphExec)(uintptr_t)x->h;
	}
	unlock();
	return r;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *px, CUgraph h, unsigned long long flags) {
	ENTER(cuGraphInstantiateWithFlags);
	return instantiate(px, h, flags);
}

// What CUDA 12 calls cuGraphInstantiate is cuGraphInstantiateWithFlags
// under another API name: the same code, counted under that name.
CUresult graph_instantiate_12(CUgraphExec *px, CUgraph h, unsigned long long flags) {
	ENTER(cuGraphInstantiate);
	return instantiate(px, h, flags);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec hx, CUstream hs) {
	ENTER(cuGraphLaunch);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	struct gexec *x = handle_get((uint64_t)(uintptr_t)hx, K_EXEC);
	struct stream *s;
	if (x == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		r = stream_of(hs, &s);
	if (r == CUDA_SUCCESS && s->cap != NULL) { // not modeled: child graph nodes
		capture_invalidate(s);
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	// Memory freed since the capture is an error before anything runs.
	for (size_t i = 0; r == CUDA_SUCCESS && i < x->n; i++) {
		struct gnode *n = &x->nodes[i];
		if ((n->kind == OP_MEMSET || n->kind == OP_COPY) && alloc_find(n->dst, n->bytes) == NULL)
			r = CUDA_ERROR_INVALID_VALUE;
		if (n->kind == OP_COPY && alloc_find(n->src, n->bytes) == NULL)
			r = CUDA_ERROR_INVALID_VALUE;
		if ((n->kind == OP_MARKER || n->kind == OP_WAIT_EVENT) && handle_get(n->ev, K_EVENT) == NULL)
			r = CUDA_ERROR_INVALID_HANDLE; // destroyed since
	}
	struct race_graph *rg = r == CUDA_SUCCESS ? race_graph_begin(s, x->n) : NULL;
	for (size_t i = 0; r == CUDA_SUCCESS && i < x->n; i++) {
		struct gnode *n = &x->nodes[i];
		struct event *ev = n->ev != 0 ? handle_get(n->ev, K_EVENT) : NULL;
		// A wait for an event never recorded waits for nothing: it runs
		// as an empty node.
		int nop = n->kind == OP_WAIT_EVENT && ev->rec == 0;
		struct op *op = op_new(nop ? OP_HOSTFN : n->kind);
		if (nop)
			op->fn = empty_fn;
		else if (n->kind == OP_MARKER) {
			capture_forget(ev);
			op->ev = ev;
			op->target = ++ev->rec;
			ev->refs++;
		} else if (n->kind == OP_WAIT_EVENT) {
			op->ev = ev;
			op->target = ev->rec;
			ev->refs++;
		}
		op->dst = n->dst;
		op->src = n->src;
		op->bytes = n->bytes;
		op->elem = n->elem;
		op->value = n->value;
		if (!nop) {
			op->fn = n->fn;
			op->arg = n->arg;
		}
		op->k = n->k;
		if (op->k != NULL)
			op->k->refs++;
		if (n->kind == OP_MEMSET || n->kind == OP_COPY)
			op->a[0] = alloc_find(n->dst, n->bytes);
		if (n->kind == OP_COPY)
			op->a[1] = alloc_find(n->src, n->bytes);
		for (size_t j = 0; j < n->ndeps; j++)
			race_graph_dep(rg, n->deps[j]->index);
		race_graph_node(rg, op, i);
		r = enqueue(s, op, 0);
	}
	race_graph_end(rg);
	unlock();
	return r;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec hx) {
	ENTER(cuGraphExecDestroy);
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	struct gexec *x = handle_get((uint64_t)(uintptr_t)hx, K_EXEC);
	if (x == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	else {
		g_live[L_EXECS]--;
		exec_free(x);
	}
	unlock();
	return r;
}

enum { UPDATE_SUCCESS = 0, UPDATE_TOPOLOGY_CHANGED = 2, UPDATE_NODE_TYPE_CHANGED = 3 };

// update takes g's node parameters into x when g has x's shape: the same
// nodes, of the same kinds, with the same dependencies.
static CUresult update(CUgraphExec hx, CUgraph hg, int *result, CUgraphNode *errnode) {
	*result = UPDATE_SUCCESS;
	*errnode = NULL;
	struct graph *g;
	CUresult r = locked_graph(hg, &g);
	if (r != CUDA_SUCCESS)
		return r;
	struct gexec *x = handle_get((uint64_t)(uintptr_t)hx, K_EXEC);
	if (x == NULL) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (g->n != x->n)
		*result = UPDATE_TOPOLOGY_CHANGED;
	for (size_t i = 0; *result == UPDATE_SUCCESS && i < g->n; i++) {
		struct gnode *gn = g->nodes[i], *xn = &x->nodes[i];
		if (gn->ndeps != xn->ndeps)
			*result = UPDATE_TOPOLOGY_CHANGED;
		for (size_t j = 0; *result == UPDATE_SUCCESS && j < gn->ndeps; j++)
			if (gn->deps[j]->index != xn->deps[j]->index)
				*result = UPDATE_TOPOLOGY_CHANGED;
		if (*result == UPDATE_SUCCESS && gn->kind != xn->kind)
			*result = UPDATE_NODE_TYPE_CHANGED;
		if (*result != UPDATE_SUCCESS)
			*errnode = (CUgraphNode)(uintptr_t)gn->h;
	}
	if (*result == UPDATE_SUCCESS)
		for (size_t i = 0; i < g->n; i++)
			set_params(&x->nodes[i], g->nodes[i]);
	else
		r = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	unlock();
	return r;
}

EXPORT CUresult cuGraphExecUpdate(CUgraphExec hx, CUgraph hg, CUgraphNode *errnode, int *result) {
	ENTER(cuGraphExecUpdate);
	if (errnode == NULL || result == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	return update(hx, hg, result, errnode);
}

// CUgraphExecUpdateResultInfo of CUDA 12.
struct update_info {
	int result;
	CUgraphNode errorNode, errorFromNode;
};

EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hx, CUgraph hg, struct update_info *info) {
	ENTER(cuGraphExecUpdate);
	if (info == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	info->errorFromNode = NULL;
	return update(hx, hg, &info->result, &info->errorNode);
}

// ---- graphs built node by node ----

// cuda.h's CUDA_KERNEL_NODE_PARAMS (its _v2 adds a CUkernel and a
// context, which the fake does not read: a node's function is func, its
// context the current one).
struct kernel_node_params {
	uint64_t func;
	unsigned grid[3], block[3], shmem;
	void **params, **extra;
};

// cuda.h's CUDA_MEMCPY3D.
struct memcpy3d {
	size_t src_x, src_y, src_z, src_lod;
	int src_type;
	const void *src_host;
	uint64_t src_dev;
	void *src_array, *reserved0;
	size_t src_pitch, src_height;
	size_t dst_x, dst_y, dst_z, dst_lod;
	int dst_type;
	void *dst_host;
	uint64_t dst_dev;
	void *dst_array, *reserved1;
	size_t dst_pitch, dst_height;
	size_t width, height, depth;
};
_Static_assert(sizeof(struct memcpy3d) == 200, "CUDA_MEMCPY3D is 200 bytes");

// cuda.h's CUDA_MEMSET_NODE_PARAMS.
struct memset_node_params {
	uint64_t dst;
	size_t pitch;
	unsigned value, elem;
	size_t width, height;
};

// cuda.h's CUDA_HOST_NODE_PARAMS.
struct host_node_params {
	CUhostFn fn;
	void *arg;
};

enum { MEMTYPE_HOST = 1, MEMTYPE_DEVICE = 2 };

// node_add adds a node like proto to graph hg, after deps. Under the lock.
static CUresult node_add(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps, struct gnode *proto) {
	struct graph *g = handle_get((uint64_t)(uintptr_t)hg, K_GRAPH);
	if (g == NULL || (ndeps > 0 && deps == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	struct gnode **d = ndeps ? xrealloc(NULL, ndeps * sizeof *d) : NULL;
	for (size_t i = 0; i < ndeps; i++) {
		d[i] = handle_get((uint64_t)(uintptr_t)deps[i], K_NODE);
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			dup |= d[j] == d[i];
		if (d[i] == NULL || d[i]->g != g || dup) {
			free(d);
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	struct gnode *n = calloc(1, sizeof *n);
	if (n == NULL)
		abort();
	*n = *proto;
	n->g = g;
	n->deps = d;
	n->ndeps = ndeps;
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 16;
		g->nodes = xrealloc(g->nodes, g->cap * sizeof *g->nodes);
	}
	n->index = g->n;
	g->nodes[g->n++] = n;
	n->h = handle_new(K_NODE, n);
	*out = (CUgraphNode)(uintptr_t)n->h;
	return CUDA_SUCCESS;
}

// node_call runs the prologue of a node call: ready, out given, lock held.
static CUresult node_call(CUgraphNode *out) {
	if (out == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = driver_ready();
	if (r == CUDA_SUCCESS)
		lock();
	return r;
}

EXPORT CUresult cuGraphCreate(CUgraph *pg, unsigned flags) {
	ENTER(cuGraphCreate);
	if (pg == NULL || flags != 0)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	struct graph *g = calloc(1, sizeof *g);
	if (g == NULL)
		abort();
	g->h = handle_new(K_GRAPH, g);
	g_live[L_GRAPHS]++;
	*pg = (CUgraph)(uintptr_t)g->h;
	unlock();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps) {
	ENTER(cuGraphAddEmptyNode);
	CUresult r = node_call(out);
	if (r != CUDA_SUCCESS)
		return r;
	struct gnode proto = {.kind = OP_HOSTFN, .fn = empty_fn};
	r = node_add(out, hg, deps, ndeps, &proto);
	unlock();
	return r;
}

// kernel_node makes the launch of p in the current context.
static CUresult kernel_node(const struct kernel_node_params *p, struct klaunch **k) {
	struct ctx *c;
	CUresult r = current_ctx(&c);
	if (r == CUDA_SUCCESS)
		r = graph_klaunch(p->func, p->grid, p->block, p->shmem, p->params, p->extra, c, k);
	return r;
}

EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps,
	const struct kernel_node_params *p) {
	ENTER(cuGraphAddKernelNode);
	if (p == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = func_ready(p->func);
	if (r != CUDA_SUCCESS)
		return r;
	r = node_call(out);
	if (r != CUDA_SUCCESS)
		return r;
	struct gnode proto = {.kind = OP_KERNEL};
	r = kernel_node(p, &proto.k);
	if (r == CUDA_SUCCESS) {
		r = node_add(out, hg, deps, ndeps, &proto);
		if (r != CUDA_SUCCESS)
			klaunch_unref(proto.k);
	}
	unlock();
	return r;
}

// copy_node reads a 1D copy between host and device memory (the fake's
// device memory is host memory: a side's pointer is its address).
static CUresult copy_node(const struct memcpy3d *p, struct gnode *n) {
	if (p->height > 1 || p->depth > 1 || p->src_array != NULL || p->dst_array != NULL || p->src_x || p->src_y ||
		p->src_z || p->dst_x || p->dst_y || p->dst_z || p->width == 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	const char *src;
	char *dst;
	switch (p->src_type) {
	case MEMTYPE_HOST:
		src = p->src_host;
		break;
	case MEMTYPE_DEVICE:
		src = (const char *)(uintptr_t)p->src_dev;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	switch (p->dst_type) {
	case MEMTYPE_HOST:
		dst = p->dst_host;
		break;
	case MEMTYPE_DEVICE:
		dst = (char *)(uintptr_t)p->dst_dev;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	// Both sides must be memory the driver knows: device memory, or host
	// memory it page-locked (a copy node reads pageable memory at no set
	// time, which the fake does not model).
	if (alloc_find(src, p->width) == NULL || alloc_find(dst, p->width) == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	n->kind = OP_COPY;
	n->src = src;
	n->dst = dst;
	n->bytes = p->width;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps,
	const struct memcpy3d *p, CUcontext ctx) {
	ENTER(cuGraphAddMemcpyNode);
	if (p == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = node_call(out);
	if (r != CUDA_SUCCESS)
		return r;
	struct ctx *c;
	struct gnode proto = {0};
	r = ctx_of(ctx, &c);
	if (r == CUDA_SUCCESS)
		r = copy_node(p, &proto);
	if (r == CUDA_SUCCESS)
		r = node_add(out, hg, deps, ndeps, &proto);
	unlock();
	return r;
}

EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps,
	const struct memset_node_params *p, CUcontext ctx) {
	ENTER(cuGraphAddMemsetNode);
	if (p == NULL || (p->elem != 1 && p->elem != 2 && p->elem != 4) || p->width == 0)
		return CUDA_ERROR_INVALID_VALUE;
	if (p->height > 1)
		return CUDA_ERROR_NOT_SUPPORTED;
	CUresult r = node_call(out);
	if (r != CUDA_SUCCESS)
		return r;
	struct ctx *c;
	struct gnode proto = {.kind = OP_MEMSET, .dst = (char *)(uintptr_t)p->dst, .bytes = p->width * p->elem,
		.elem = p->elem, .value = p->value};
	r = ctx_of(ctx, &c);
	if (r == CUDA_SUCCESS && alloc_find(proto.dst, proto.bytes) == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		r = node_add(out, hg, deps, ndeps, &proto);
	unlock();
	return r;
}

EXPORT CUresult cuGraphAddHostNode(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps,
	const struct host_node_params *p) {
	ENTER(cuGraphAddHostNode);
	if (p == NULL || p->fn == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = node_call(out);
	if (r != CUDA_SUCCESS)
		return r;
	struct gnode proto = {.kind = OP_HOSTFN, .fn = p->fn, .arg = p->arg};
	r = node_add(out, hg, deps, ndeps, &proto);
	unlock();
	return r;
}

static CUresult event_node(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps, CUevent ev, enum op_kind k) {
	CUresult r = node_call(out);
	if (r != CUDA_SUCCESS)
		return r;
	struct gnode proto = {.kind = k, .ev = (uint64_t)(uintptr_t)ev};
	if (handle_get(proto.ev, K_EVENT) == NULL)
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		r = node_add(out, hg, deps, ndeps, &proto);
	unlock();
	return r;
}

EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps, CUevent ev) {
	ENTER(cuGraphAddEventRecordNode);
	return event_node(out, hg, deps, ndeps, ev, OP_MARKER);
}

EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps, size_t ndeps, CUevent ev) {
	ENTER(cuGraphAddEventWaitNode);
	return event_node(out, hg, deps, ndeps, ev, OP_WAIT_EVENT);
}

// exec_node finds the node of x that is hn of the graph x was made from,
// of kind k: lock held on success.
static CUresult exec_node(CUgraphExec hx, CUgraphNode hn, enum op_kind k, struct gexec **x, struct gnode **xn) {
	CUresult r = driver_ready();
	if (r != CUDA_SUCCESS)
		return r;
	lock();
	*x = handle_get((uint64_t)(uintptr_t)hx, K_EXEC);
	struct gnode *n = handle_get((uint64_t)(uintptr_t)hn, K_NODE);
	struct graph *g = *x != NULL ? handle_get((*x)->src, K_GRAPH) : NULL;
	if (*x == NULL || n == NULL || g == NULL || n->g != g || n->index >= (*x)->n || (*x)->nodes[n->index].kind != k) {
		unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	*xn = &(*x)->nodes[n->index];
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hx, CUgraphNode hn, const struct kernel_node_params *p) {
	ENTER(cuGraphExecKernelNodeSetParams);
	if (p == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	CUresult r = func_ready(p->func);
	if (r != CUDA_SUCCESS)
		return r;
	struct gexec *x;
	struct gnode *xn;
	r = exec_node(hx, hn, OP_KERNEL, &x, &xn);
	if (r != CUDA_SUCCESS)
		return r;
	struct klaunch *k;
	r = graph_klaunch(p->func, p->grid, p->block, p->shmem, p->params, p->extra, x->ctx, &k);
	if (r == CUDA_SUCCESS) {
		klaunch_unref(xn->k);
		xn->k = k;
	}
	unlock();
	return r;
}

EXPORT CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hx, CUgraphNode hn, const struct memcpy3d *p, CUcontext ctx) {
	ENTER(cuGraphExecMemcpyNodeSetParams);
	if (p == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct gexec *x;
	struct gnode *xn;
	CUresult r = exec_node(hx, hn, OP_COPY, &x, &xn);
	if (r != CUDA_SUCCESS)
		return r;
	struct ctx *c;
	struct gnode n = {0};
	r = ctx_of(ctx, &c);
	if (r == CUDA_SUCCESS)
		r = copy_node(p, &n);
	if (r == CUDA_SUCCESS) {
		xn->src = n.src;
		xn->dst = n.dst;
		xn->bytes = n.bytes;
	}
	unlock();
	return r;
}
