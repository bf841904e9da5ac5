/*
 * CPU locality, read once from an hwloc topology (real or synthetic) into
 * plain arrays, so the scheduling hot path never calls hwloc. CPUs are
 * numbered by hwloc's logical PU index, 0 .. nr_cpus - 1.
 */
#ifndef MUQSS_CORE_TOPOLOGY_H
#define MUQSS_CORE_TOPOLOGY_H

#include <hwloc.h>

enum locality {
	LOCALITY_SAME = 0,	/* the same CPU */
	LOCALITY_SMT = 1,	/* SMT sibling: same core */
	LOCALITY_LLC = 2,	/* another core sharing the last-level cache */
	LOCALITY_PACKAGE = 3,	/* same package, no shared cache */
	LOCALITY_NODE = 4,	/* another package on the same NUMA node */
	LOCALITY_DISTANT = 5,	/* another NUMA node */
};

struct topology;

/* Builds from a loaded topology; 0 or -errno (-ENOMEM, -EINVAL, -E2BIG). */
int topology_build(struct topology **out, hwloc_topology_t topo);

/* Frees what topology_build() made; NULL is fine. */
void topology_free(struct topology *t);

/* Number of CPUs (PUs). */
int topology_nr_cpus(const struct topology *t);

/* Locality level of @b seen from @a. */
enum locality topology_locality(const struct topology *t, int a, int b);

/* All CPUs, nearest first, starting with @cpu itself; nr_cpus entries, owned by @t. */
const int *topology_order(const struct topology *t, int cpu);

/* The CPUs of @cpu's core, @cpu included; *nr set to their count. Owned by @t. */
const int *topology_core_cpus(const struct topology *t, int cpu, int *nr);

/* The CPUs sharing @cpu's last-level cache (itself if none). Owned by @t. */
const int *topology_llc_cpus(const struct topology *t, int cpu, int *nr);

/* Operating-system CPU number of logical CPU @cpu. */
unsigned int topology_os_index(const struct topology *t, int cpu);

#endif
