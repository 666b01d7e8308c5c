/* An independent pointer chase, to check stream-top's latency figures against.
 *
 *   cc -O2 -o chase bench/chase.c
 *   ./chase BYTES [CPU] [huge|small] [RUN_NS]   # prints: ns_per_load lines hops_per_run
 *
 * Its own construction, its own generator: a Fisher-Yates shuffle (xorshift64*) of the line
 * order, each line linked to the next in that order and the last to the first, so one cycle
 * through every 64-byte line, one pointer per line at the line's start. The buffer is 2 MiB
 * aligned and advised onto huge pages (MADV_HUGEPAGE) or away from them (small). Pinned to
 * CPU (default 0). One untimed warm-up (the whole cycle, 2^16 to 2^22 hops), which also sets
 * the hops per run to about RUN_NS (default 1 ms); then 11 timed runs (clock_gettime(CLOCK_MONOTONIC) around
 * each), and the median ns per load. The loop is 16 `p = *p` per turn in C; -O2 keeps every
 * load (each address is the one before's value, and the end is printed).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64
#define RUNS 11

static uint64_t state = 0x2545f4914f6cdd1dULL;

static uint64_t xorshift64s(void) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dULL;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void **chase(void **p, uint64_t turns) {
    for (uint64_t i = 0; i < turns; i++) {
#define H p = (void **)*p;
        H H H H H H H H H H H H H H H H
#undef H
    }
    return p;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: chase BYTES [CPU] [huge|small] [RUN_NS]\n");
        return 2;
    }
    size_t bytes = strtoull(argv[1], NULL, 10);
    int cpu = argc > 2 ? atoi(argv[2]) : 0;
    int huge = !(argc > 3 && strcmp(argv[3], "small") == 0);
    double run_ns = argc > 4 ? atof(argv[4]) : 1e6;

    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) {
        perror("sched_setaffinity");
        return 1;
    }

    size_t lines = bytes / LINE ? bytes / LINE : 1;
    size_t align = 2u << 20;
    size_t len = (lines * LINE + align - 1) / align * align;
    char *buf = aligned_alloc(align, len);
    uint32_t *order = malloc(lines * sizeof *order);
    if (!buf || !order) {
        perror("alloc");
        return 1;
    }
    madvise(buf, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    for (size_t i = 0; i < lines; i++) order[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = (size_t)(((unsigned __int128)xorshift64s() * (i + 1)) >> 64);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t k = 0; k < lines; k++)
        *(void **)(buf + (size_t)order[k] * LINE) = buf + (size_t)order[(k + 1) % lines] * LINE;
    free(order);

    uint64_t warm = lines < (1u << 16) ? (1u << 16) : lines > (1u << 22) ? (1u << 22) : lines;
    warm = (warm + 15) / 16;
    void **p = (void **)buf;
    double t0 = now_ns();
    p = chase(p, warm);
    double per = (now_ns() - t0) / (warm * 16.0);
    uint64_t turns = (uint64_t)(run_ns / per / 16);
    if (turns == 0) turns = 1;

    double ns[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double s = now_ns();
        p = chase(p, turns);
        ns[r] = (now_ns() - s) / (turns * 16.0);
    }
    qsort(ns, RUNS, sizeof ns[0], cmp);
    /* The end address keeps the chase live; it goes to stderr only if impossible. */
    if ((char *)p < buf || (char *)p >= buf + lines * LINE) fprintf(stderr, "left the buffer\n");
    printf("%.3f %zu %llu\n", ns[RUNS / 2], lines, (unsigned long long)turns * 16);
    return 0;
}
