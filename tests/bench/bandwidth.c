// bandwidth.c: how fast T threads read memory, the ceiling of a decode that reads every weight byte
// once per token. Each thread sums the 64-bit words of its own part of a 1 GiB buffer (written
// first, so its pages are real), the best of five passes; prints {"threads": T, "gb_per_s": …}.
//
//   gcc -O2 -march=native -pthread -o /tmp/toy-bw tests/bench/bandwidth.c && /tmp/toy-bw 2
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SIZE (1ull << 30)

struct part {
	const uint64_t *p;
	size_t n;
	uint64_t sum;
};

static void *reader(void *arg) {
	struct part *w = arg;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	for (size_t i = 0; i + 4 <= w->n; i += 4) s0 += w->p[i], s1 += w->p[i + 1], s2 += w->p[i + 2], s3 += w->p[i + 3];
	w->sum = s0 + s1 + s2 + s3;
	return NULL;
}

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
	int T = argc > 1 ? atoi(argv[1]) : 1;
	if (T < 1 || T > 256) return 2;
	uint64_t *buf = malloc(SIZE);
	if (!buf) return 1;
	size_t words = SIZE / 8, each = words / T;
	for (size_t i = 0; i < words; i++) buf[i] = i;
	double best = 0;
	uint64_t check = 0;
	for (int rep = 0; rep < 5; rep++) {
		pthread_t th[256];
		struct part w[256];
		double t0 = now();
		for (int t = 0; t < T; t++) {
			w[t] = (struct part){buf + t * each, each, 0};
			pthread_create(&th[t], NULL, reader, &w[t]);
		}
		for (int t = 0; t < T; t++) pthread_join(th[t], NULL), check += w[t].sum;
		double gbs = (double)(each * T * 8) / (now() - t0) / 1e9;
		if (gbs > best) best = gbs;
	}
	printf("{\"threads\": %d, \"gb_per_s\": %.2f, \"check\": %llu}\n", T, best, (unsigned long long)(check & 0xff));
	return 0;
}
