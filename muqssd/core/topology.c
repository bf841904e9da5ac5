#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpumask.h"
#include "topology.h"

struct group {
	int *cpus;	/* CPUs grouped so each group is contiguous */
	int *start;	/* per CPU: where its group begins in cpus */
	int *count;	/* per CPU: size of its group */
};

struct topology {
	int nr_cpus;
	uint8_t *locality;	/* nr_cpus * nr_cpus */
	int *order;		/* nr_cpus * nr_cpus */
	unsigned int *os_index;
	struct group core;
	struct group llc;
};

/* Per-PU identities; -1 means "none", which never matches. */
struct pu_ids {
	int64_t core;
	int64_t llc;
	int64_t package;
	int node;
};

static void topology_read_ids(hwloc_obj_t pu, struct pu_ids *ids)
{
	hwloc_obj_t llc = NULL;

	ids->core = ids->llc = ids->package = -1;
	for (hwloc_obj_t o = pu->parent; o; o = o->parent) {
		if (o->type == HWLOC_OBJ_CORE && ids->core < 0)
			ids->core = (int64_t)o->gp_index;
		else if (hwloc_obj_type_is_cache(o->type) &&
			 hwloc_obj_type_is_dcache(o->type) && ids->package < 0)
			llc = o;	/* keep climbing: the last cache below the package wins */
		else if (o->type == HWLOC_OBJ_PACKAGE)
			ids->package = (int64_t)o->gp_index;
	}
	if (llc)
		ids->llc = (int64_t)llc->gp_index;
	ids->node = pu->nodeset ? hwloc_bitmap_first(pu->nodeset) : -1;
}

static enum locality topology_classify(const struct pu_ids *a, const struct pu_ids *b)
{
	if (a->core >= 0 && a->core == b->core)
		return LOCALITY_SMT;
	if (a->llc >= 0 && a->llc == b->llc)
		return LOCALITY_LLC;
	if (a->package >= 0 && a->package == b->package)
		return LOCALITY_PACKAGE;
	if (a->node == b->node)
		return LOCALITY_NODE;
	return LOCALITY_DISTANT;
}

static int group_build(struct group *g, int n, const uint8_t *loc, enum locality max)
{
	int used = 0;

	g->cpus = calloc(n, sizeof(*g->cpus));
	g->start = calloc(n, sizeof(*g->start));
	g->count = calloc(n, sizeof(*g->count));
	if (!g->cpus || !g->start || !g->count)
		return -ENOMEM;

	for (int i = 0; i < n; i++) {
		int leader = i;

		for (int j = 0; j < i; j++) {
			if (loc[(size_t)i * n + j] <= max) {
				leader = j;
				break;
			}
		}
		if (leader != i) {
			g->start[i] = g->start[leader];
			g->count[i] = g->count[leader];
			continue;
		}
		g->start[i] = used;
		for (int j = i; j < n; j++)
			if (loc[(size_t)i * n + j] <= max)
				g->cpus[used++] = j;
		g->count[i] = used - g->start[i];
	}
	return 0;
}

static void group_free(struct group *g)
{
	free(g->cpus);
	free(g->start);
	free(g->count);
}

/* Nearest first; within a level, rotate from cpu + 1 so load spreads. */
static void topology_build_order(struct topology *t, int cpu)
{
	int n = t->nr_cpus;
	int *order = &t->order[(size_t)cpu * n];
	int k = 0;

	for (int level = LOCALITY_SAME; level <= LOCALITY_DISTANT; level++) {
		for (int step = 0; step < n; step++) {
			int j = (cpu + step) % n;

			if (t->locality[(size_t)cpu * n + j] == level)
				order[k++] = j;
		}
	}
}

int topology_build(struct topology **out, hwloc_topology_t topo)
{
	struct pu_ids *ids = NULL;
	struct topology *t;
	int n, r = -ENOMEM;

	n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	if (n <= 0)
		return -EINVAL;
	if (n > CPUMASK_MAX_CPUS)
		return -E2BIG;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->nr_cpus = n;
	t->locality = calloc((size_t)n * n, sizeof(*t->locality));
	t->order = calloc((size_t)n * n, sizeof(*t->order));
	t->os_index = calloc(n, sizeof(*t->os_index));
	ids = calloc(n, sizeof(*ids));
	if (!t->locality || !t->order || !t->os_index || !ids)
		goto fail;

	for (int i = 0; i < n; i++) {
		hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, i);

		if (!pu) {
			r = -EINVAL;
			goto fail;
		}
		t->os_index[i] = pu->os_index;
		topology_read_ids(pu, &ids[i]);
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			t->locality[(size_t)i * n + j] = i == j ? LOCALITY_SAME :
				topology_classify(&ids[i], &ids[j]);
	for (int i = 0; i < n; i++)
		topology_build_order(t, i);

	r = group_build(&t->core, n, t->locality, LOCALITY_SMT);
	if (r == 0)
		r = group_build(&t->llc, n, t->locality, LOCALITY_LLC);
	if (r < 0)
		goto fail;

	free(ids);
	*out = t;
	return 0;
fail:
	free(ids);
	topology_free(t);
	return r;
}

void topology_free(struct topology *t)
{
	if (!t)
		return;
	free(t->locality);
	free(t->order);
	free(t->os_index);
	group_free(&t->core);
	group_free(&t->llc);
	free(t);
}

int topology_nr_cpus(const struct topology *t)
{
	return t->nr_cpus;
}

enum locality topology_locality(const struct topology *t, int a, int b)
{
	return (enum locality)t->locality[(size_t)a * t->nr_cpus + b];
}

const int *topology_order(const struct topology *t, int cpu)
{
	return &t->order[(size_t)cpu * t->nr_cpus];
}

const int *topology_core_cpus(const struct topology *t, int cpu, int *nr)
{
	*nr = t->core.count[cpu];
	return &t->core.cpus[t->core.start[cpu]];
}

const int *topology_llc_cpus(const struct topology *t, int cpu, int *nr)
{
	*nr = t->llc.count[cpu];
	return &t->llc.cpus[t->llc.start[cpu]];
}

unsigned int topology_os_index(const struct topology *t, int cpu)
{
	return t->os_index[cpu];
}
