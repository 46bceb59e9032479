/*
 * steadybench_iters.h - the program side of steadybench's ITERS protocol, in one header.
 *
 * The protocol (source 004, Criterion's method for executables): the program takes an
 * iteration count, runs its workload that many times in a tight loop, and prints
 *
 *     BATCHTIME: <seconds>     total time of the loop (required, exactly once)
 *     SELFTIMED: <seconds>     BATCHTIME / iters (optional)
 *
 * on standard output. Any other output is ignored. steadybench sweeps the count and fits
 * BATCHTIME = slope * iters + intercept (slope: one iteration; intercept: shared overhead).
 *
 * Usage:
 *
 *     #include "steadybench_iters.h"
 *     int main(int argc, char **argv) {
 *         long long iters = sb_iters_from_args(&argc, &argv);   // takes argv[1]
 *         ... set up, outside the timed region ...
 *         double t0 = sb_now();
 *         for (long long i = 0; i < iters; i++) { workload(); }
 *         double t1 = sb_now();
 *         sb_iters_report(t1 - t0, iters);
 *         return 0;
 *     }
 *
 * The clock is clock_gettime(CLOCK_MONOTONIC) (POSIX), in seconds as a double.
 * Use the compiler's optimisation settings of the real program, and keep the workload's
 * result observable (sb_do_not_optimize) so the compiler cannot delete the loop.
 */
#ifndef STEADYBENCH_ITERS_H
#define STEADYBENCH_ITERS_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double sb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Read the iteration count from argv[1] and remove it, so argv[1..] are the program's own
 * arguments afterwards. Exits with status 2 and a message when it is missing or invalid. */
static inline long long sb_iters_from_args(int *argc, char ***argv) {
    char *end = NULL;
    long long iters;
    if (*argc < 2) {
        fprintf(stderr, "usage: %s ITERS [ARGS...]\n", (*argv)[0]);
        exit(2);
    }
    errno = 0;
    iters = strtoll((*argv)[1], &end, 10);
    if (errno != 0 || end == (*argv)[1] || *end != '\0' || iters < 1) {
        fprintf(stderr, "%s: ITERS must be a positive integer, got '%s'\n", (*argv)[0],
                (*argv)[1]);
        exit(2);
    }
    (*argv)[1] = (*argv)[0];
    (*argv)++;
    (*argc)--;
    return iters;
}

/* Print the protocol lines for a loop of `iters` iterations that took `batchtime` seconds. */
static inline void sb_iters_report(double batchtime, long long iters) {
    printf("BATCHTIME: %.9e\n", batchtime);
    printf("SELFTIMED: %.9e\n", batchtime / (double)iters);
    fflush(stdout);
}

/* Keep a value alive so the compiler cannot optimise the computation of it away. */
static inline void sb_do_not_optimize(void *p) {
#if defined(__GNUC__) || defined(__clang__)
    __asm__ volatile("" : : "g"(p) : "memory");
#else
    static volatile void *sink;
    sink = p;
#endif
}

#endif /* STEADYBENCH_ITERS_H */
