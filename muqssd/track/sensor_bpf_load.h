/* Loading the bpf sensor's programs in a short-lived child process.
 *
 * libbpf parses the kernel's BTF (megabytes of it) to relocate and attach
 * the programs, and that parse would stay the daemon's peak RSS for its
 * whole life. The child does it, attaches every program, and hands back
 * over a socket (SCM_RIGHTS) only the fds the daemon runs on: the maps it
 * reads and one link per program. The links keep the programs attached,
 * and they are fds: the programs go away with the daemon however it ends.
 *
 * The fork needs a single-threaded caller: the child runs libbpf, which
 * allocates. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* sensor_bpf.bpf.c has 7 programs: room to grow. */
#define SENSOR_BPF_MAX_LINKS 16
/* The maps sent first, in this order, then the links. */
enum {
	SENSOR_BPF_FD_EVENTS,
	SENSOR_BPF_FD_SCOPE,
	SENSOR_BPF_FD_WAKE_CLASS,
	SENSOR_BPF_FD_BSS,
	SENSOR_BPF_FD_MAPS,
};
#define SENSOR_BPF_MAX_FDS (SENSOR_BPF_FD_MAPS + SENSOR_BPF_MAX_LINKS)

struct sensor_bpf_fds {
	/* Indexed by SENSOR_BPF_FD_*; -1 when not held. */
	int map[SENSOR_BPF_FD_MAPS];
	int link[SENSOR_BPF_MAX_LINKS];
	unsigned nlinks;
	/* The .bss map's value, and where the `lost` counter sits in it. */
	uint64_t bss_size, lost_offset;
};

/* The child's answer, with the fds beside it: err 0, or -errno and why. */
struct sensor_bpf_load_reply {
	int32_t err;
	uint32_t nlinks;
	uint64_t bss_size, lost_offset;
	char why[256];
};

/* The daemon's half (sensor_bpf_load.c): forks the child and waits for
 * its answer, at most SENSOR_BPF_LOAD_TIMEOUT_MS. On failure, why (for
 * the user's notice) is written to why. */
#define SENSOR_BPF_LOAD_TIMEOUT_MS 10000
int sensor_bpf_load(bool scope_all, uint64_t wake_after_ns, struct sensor_bpf_fds *ret,
		    char *why, size_t why_size);
void sensor_bpf_fds_close(struct sensor_bpf_fds *fds);

/* The child's half (sensor_bpf_load_child.c): loads, attaches, answers
 * on sock, exits; daemon is its parent's pid. */
_Noreturn void sensor_bpf_load_child(int sock, pid_t daemon, bool scope_all,
				      uint64_t wake_after_ns);
