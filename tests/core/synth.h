/* Helpers for tests on synthetic hwloc topologies and small schedulers. */
#ifndef MUQSS_TESTS_SYNTH_H
#define MUQSS_TESTS_SYNTH_H

#include <stdio.h>
#include <stdlib.h>

#include <hwloc.h>

#include "core/sched.h"

static inline hwloc_topology_t synth_topology(const char *desc)
{
	hwloc_topology_t topo;

	if (hwloc_topology_init(&topo) < 0 ||
	    hwloc_topology_set_synthetic(topo, desc) < 0 ||
	    hwloc_topology_load(topo) < 0) {
		fprintf(stderr, "cannot build synthetic topology \"%s\"\n", desc);
		exit(1);
	}
	return topo;
}

/* A scheduler on @desc with defaults changed by @interactive. */
static inline struct sched *synth_sched(const char *desc, bool interactive)
{
	hwloc_topology_t topo = synth_topology(desc);
	struct sched_config cfg;
	struct sched *s;

	sched_config_defaults(&cfg);
	cfg.interactive = interactive;
	if (sched_new(&s, topo, &cfg) < 0) {
		fprintf(stderr, "sched_new failed on \"%s\"\n", desc);
		exit(1);
	}
	hwloc_topology_destroy(topo);
	return s;
}

#endif
