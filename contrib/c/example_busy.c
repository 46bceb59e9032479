/*
 * example_busy.c - an ITERS protocol program with a known cost, for steadybench's tests.
 *
 *     example_busy ITERS [WORK_US [OVERHEAD_US]]
 *
 * Each iteration busy-waits WORK_US microseconds (default 50) on the monotonic clock; before
 * the loop, inside the timed region, it busy-waits OVERHEAD_US microseconds (default 0) once.
 * So BATCHTIME = WORK_US * ITERS + OVERHEAD_US (microseconds) plus a little clock overhead,
 * and `steadybench iters` should find slope = WORK_US and intercept = OVERHEAD_US.
 *
 * Build: cc -O2 -I contrib/c -o example_busy contrib/c/example_busy.c
 */
#include "steadybench_iters.h"

static void spin_until(double deadline) {
    while (sb_now() < deadline) {
    }
}

int main(int argc, char **argv) {
    long long iters = sb_iters_from_args(&argc, &argv);
    double work = argc > 1 ? atof(argv[1]) * 1e-6 : 50e-6;
    double overhead = argc > 2 ? atof(argv[2]) * 1e-6 : 0.0;
    double t0, t1, next;
    long long i;

    t0 = sb_now();
    spin_until(t0 + overhead);
    next = sb_now();
    for (i = 0; i < iters; i++) {
        /* Deadlines chain from the previous one, so the time of each clock read between
         * iterations does not add up: the loop takes ITERS * WORK exactly, plus the last read. */
        next += work;
        spin_until(next);
    }
    t1 = sb_now();
    sb_iters_report(t1 - t0, iters);
    return 0;
}
