/*
 * example_busy.c - an ITERS protocol program with a known cost, for steadybench's tests.
 *
 *     example_busy ITERS [WORK_US [OVERHEAD_US [cpu]]]
 *
 * Each iteration busy-waits WORK_US microseconds (default 50); before the loop, inside the
 * timed region, it busy-waits OVERHEAD_US microseconds (default 0) once. So
 * BATCHTIME = WORK_US * ITERS + OVERHEAD_US (in microseconds) plus a little clock overhead,
 * and `steadybench iters` should find slope = WORK_US and intercept = OVERHEAD_US.
 *
 * By default it spins on, and reports, the monotonic wall clock (sb_now). With the word `cpu`
 * as fourth argument it uses the process's CPU-time clock for both, so that time the process
 * spends preempted on a busy machine counts neither in the spinning nor in BATCHTIME: the
 * known cost then holds exactly however loaded the machine is (the tests use this).
 *
 * Build: cc -O2 -I contrib/c -o example_busy contrib/c/example_busy.c
 */
#include "steadybench_iters.h"

#include <string.h>

static clockid_t clock_id = CLOCK_MONOTONIC;

static double now(void) {
    struct timespec ts;
    clock_gettime(clock_id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void spin_until(double deadline) {
    while (now() < deadline) {
    }
}

int main(int argc, char **argv) {
    long long iters = sb_iters_from_args(&argc, &argv);
    double work = argc > 1 ? atof(argv[1]) * 1e-6 : 50e-6;
    double overhead = argc > 2 ? atof(argv[2]) * 1e-6 : 0.0;
    double t0, t1, next;
    long long i;

    if (argc > 3 && strcmp(argv[3], "cpu") == 0) {
        clock_id = CLOCK_PROCESS_CPUTIME_ID;
    }
    t0 = now();
    spin_until(t0 + overhead);
    next = now();
    for (i = 0; i < iters; i++) {
        /* Deadlines chain from the previous one, so the clock reads between iterations do
         * not add up: the loop takes ITERS * WORK, plus the last read. */
        next += work;
        spin_until(next);
    }
    t1 = now();
    sb_iters_report(t1 - t0, iters);
    return 0;
}
