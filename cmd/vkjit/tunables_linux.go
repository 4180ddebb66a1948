package main

// mallocTunables (below, in C) are glibc allocator settings that the
// commands which create pipelines run under. Lavapipe keeps each
// pipeline's NIR for the code it generates at the first dispatch, so a
// program's pipelines fill tens of megabytes of fresh malloc'd pages
// (the corpus's DLRM training step, 105 kernels: ~17,000 page faults, a
// third of its process's CPU time in the kernel, most of it in a VM's
// fault handling). glibc.malloc.hugetlb=1 asks for transparent huge
// pages on what malloc takes from the system, and top_pad=32 MiB makes
// it take that much at once, whole huge pages: 5,800 faults. Whole
// processes with warm caches, paired (16 runs, the variable set by
// hand): the DLRM step 0.388 -> 0.306 s median (ratio 0.78, peak RSS
// 152 -> 199 MB), the tiny graph 0.104 -> 0.092 s; hugetlb alone 0.91
// of the DLRM step's time, top_pad alone 0.98 (noise); top_pad 16 MiB
// 0.96 of 64's time, 32 MiB the same.
//
// glibc reads tunables only when a process starts, so the process
// starts itself again under them: from a constructor, which runs before
// Go's runtime does (a Go binary's 7 ms to main on this VM would be
// paid twice; the tiny graph's gain was 3 ms from Go's main). It
// changes nothing where a tunable of these is already set (the user's
// choice wins, and the started-again process stops there), where the
// process runs with other ids than its user's (glibc drops tunables
// then: no loop), for other commands, or where the exec fails.

/*
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char mallocTunables[] = "glibc.malloc.hugetlb=1:glibc.malloc.top_pad=33554432";

__attribute__((constructor)) static void vkjitReexecTuned(int argc, char **argv, char **envp) {
	if (argc < 2 || envp == NULL || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "bench") != 0 && strcmp(argv[1], "test") != 0))
		return;
	if (getuid() != geteuid() || getgid() != getegid())
		return;
	const char *cur = getenv("GLIBC_TUNABLES");
	if (cur != NULL && (strstr(cur, "glibc.malloc.hugetlb=") != NULL || strstr(cur, "glibc.malloc.top_pad=") != NULL))
		return;
	size_t n = 0;
	while (envp[n] != NULL)
		n++;
	char **env = malloc((n + 2) * sizeof *env);
	size_t len = sizeof "GLIBC_TUNABLES=" + sizeof mallocTunables + (cur != NULL ? strlen(cur) + 1 : 0);
	char *v = malloc(len);
	if (env == NULL || v == NULL) {
		free(env);
		free(v);
		return;
	}
	strcpy(v, "GLIBC_TUNABLES=");
	if (cur != NULL && cur[0] != '\0') {
		strcat(v, cur);
		strcat(v, ":");
	}
	strcat(v, mallocTunables);
	size_t m = 0;
	env[m++] = v;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], "GLIBC_TUNABLES=", 15) != 0)
			env[m++] = envp[i];
	env[m] = NULL;
	execve("/proc/self/exe", argv, env); // returns only on failure
	free(env);
	free(v);
}
*/
import "C"
