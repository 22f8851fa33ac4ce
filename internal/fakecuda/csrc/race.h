// The race detector (race.c) and the seeded scheduler (sched.c): the hooks
// the rest of the fake calls. Every hook returns at once when its feature
// is off (FAKECUDA_RACE, FAKECUDA_SEED unset), so the fake without them
// behaves as before; the one at every driver call (enter) is not even
// called then.
#ifndef FAKECUDA_RACE_H
#define FAKECUDA_RACE_H

#include "fake.h"

// ---- race.c ----

extern int g_race; // FAKECUDA_RACE: the detector is on

// t_api is the F_* index of the entry point the calling thread is in
// (set by enter), which names an operation in a report.
extern __thread int t_api;

struct rop;
struct race_graph;

// race_enqueue gives op its vector clock as it is queued on s: after the
// host's, the legacy stream's implicit ordering and s's earlier work; an
// event wait joins the event's clock, a record gives the event s's. sync:
// the caller waits for op, so the host's clock takes op's. Under the lock,
// before the op is pushed (it may complete at once).
void race_enqueue(struct stream *s, struct op *op, int sync);
// race_run checks and records the memory op touches (memsets, copies) as
// it starts, on its worker, unlocked; kernels report theirs while they run
// (fakecuda_note_access). A host function's start keeps its clock for
// fakecuda_race_observe_hostfn; it orders nothing of the host's.
void race_run(struct op *op);
// race_done drops op's detector state as it completes. Under the lock.
void race_done(struct op *op);
// The host observed completion: of everything queued on s, of e's last
// record, of every stream of c. Under the lock.
void race_host_sync_stream(struct stream *s);
void race_host_sync_event(struct event *e);
void race_host_sync_ctx(struct ctx *c);
void race_stream_destroyed(struct stream *s);
void race_event_free(struct event *e);
void race_alloc_add(struct alloc *a);
void race_alloc_remove(struct alloc *a);
// A graph launch on s: its nodes ordered by their edges only, the launch
// after s's earlier work, and s's later work after every node. dep adds an
// edge into the next node. Under the lock; begin returns NULL when off.
struct race_graph *race_graph_begin(struct stream *s, size_t n);
void race_graph_dep(struct race_graph *g, size_t from);
void race_graph_node(struct race_graph *g, struct op *op, size_t i);
void race_graph_end(struct race_graph *g);

// ---- sched.c ----

extern int g_seeded; // FAKECUDA_SEED was given

// sched_add and sched_remove track the streams that have a
// worker, the candidates of each step. Under the lock.
void sched_add(struct stream *s);
void sched_remove(struct stream *s);
// sched_acquire reports whether s's worker may start its ready head op
// now; when not, it has waited a while (under the lock) and the worker
// looks again. Always 1 when not seeded.
int sched_acquire(struct stream *s);
// sched_release gives the turn back once the op is done (or, for a host
// function, before it runs: host functions run outside the turn).
void sched_release(struct stream *s);
// sched_kick lets the scheduler pick, after anything that can make an op
// ready. Under the lock.
void sched_kick(void);
// host_wait is pthread_cond_wait on g_done for a host thread waiting for
// the device: while one does, the seeded scheduler runs operations.
void host_wait(void);
// sched_host_enter notes a driver call by the host; sched_host_yield a
// query that found work pending.
void sched_host_enter(void);
void sched_host_yield(void);
// op_ready reports whether an op may start (stream.c).
int op_ready(const struct op *op);

#endif
