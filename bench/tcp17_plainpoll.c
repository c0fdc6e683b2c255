/*
 * tcp17_plainpoll: the anchor for issue 17's busy-poll row, measured by
 * hand (not part of `make bench`): an 8-byte ping-pong over loopback TCP
 * (TCP_NODELAY) where both sides spin on non-blocking recv. Prints the
 * one-way latency in us (round trip / 2). Two processes (fork: no libdat).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof s, &s);
}

static void rd(int fd, char *b, int n)
{
	int got = 0;
	while (got < n) {
		ssize_t k = recv(fd, b + got, n - got, MSG_DONTWAIT);
		if (k > 0)
			got += k;
		else if (k == 0 || (errno != EAGAIN && errno != EINTR))
			exit(2);
	}
}

static void wr(int fd, char *b, int n)
{
	if (send(fd, b, n, MSG_NOSIGNAL) != n)
		exit(3);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 100000;
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof a;
	if (bind(l, (void *)&a, sizeof a) || listen(l, 1) || getsockname(l, (void *)&a, &al))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		pin(1);
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(s, (void *)&a, sizeof a))
			return 1;
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		char b[8];
		for (;;) {
			int got = 0;
			while (got < 8) {
				ssize_t k = recv(s, b + got, 8 - got, MSG_DONTWAIT);
				if (k > 0)
					got += k;
				else if (k == 0)
					return 0;
				else if (errno != EAGAIN && errno != EINTR)
					return 2;
			}
			wr(s, b, 8);
		}
	}
	pin(0);
	int s = accept(l, NULL, NULL);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	char b[8] = {0};
	for (int i = 0; i < 2000; i++) {
		wr(s, b, 8);
		rd(s, b, 8);
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < iters; i++) {
		wr(s, b, 8);
		rd(s, b, 8);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / iters / 2;
	printf("plain-tcp/busypoll lat8 %.2f\n", us);
	close(s);
	waitpid(pid, NULL, 0);
	return 0;
}
