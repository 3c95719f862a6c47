/*
 * Call paths for the tests' own small programs (included from the C they
 * write, with -I"$WORKLOAD_SRC"): steps[k](path, depth, size) reaches
 * step_leaf() through depth calls of the four step functions, the two low
 * bits of path choosing each next one, so 4^depth paths give as many stacks
 * of depth + 2 frames (+ the caller's); step_leaf allocates size bytes and
 * returns the block. noipa: gcc neither inlines nor folds them, and no call
 * is a tail call.
 */
#ifndef MEMPROF_TESTS_WORKLOADS_STEPS_H
#define MEMPROF_TESTS_WORKLOADS_STEPS_H

#include <stdlib.h>

typedef void *step_fn(unsigned path, int depth, size_t size);
static step_fn step0, step1, step2, step3;
static step_fn *const steps[4] = { step0, step1, step2, step3 };

__attribute__((noipa)) static void *step_leaf(unsigned path, size_t size)
{
	(void)path;
	return malloc(size);
}

#define STEP(name)                                                                         \
	__attribute__((noipa)) static void *name(unsigned path, int depth, size_t size)    \
	{                                                                                  \
		void *p = depth ? steps[path & 3](path >> 2, depth - 1, size) : step_leaf(path, size); \
		__asm__ volatile("" ::: "memory");                                         \
		return p;                                                                  \
	}
STEP(step0)
STEP(step1)
STEP(step2)
STEP(step3)
#undef STEP

#endif
