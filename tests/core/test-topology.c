#include "check.h"
#include "synth.h"
#include "core/topology.h"

static struct topology *build(const char *desc)
{
	hwloc_topology_t topo = synth_topology(desc);
	struct topology *t = NULL;

	CHECK_EQ(topology_build(&t, topo), 0);
	hwloc_topology_destroy(topo);
	if (!t)
		exit(1);
	return t;
}

/* The order lists every CPU once, itself first, by non-decreasing locality. */
static void check_orders(const struct topology *t)
{
	int n = topology_nr_cpus(t);
	char *seen = calloc(n, 1);

	for (int cpu = 0; cpu < n; cpu++) {
		const int *order = topology_order(t, cpu);

		for (int i = 0; i < n; i++)
			seen[i] = 0;
		CHECK_EQ(order[0], cpu);
		for (int i = 0; i < n; i++) {
			seen[order[i]]++;
			if (i)
				CHECK(topology_locality(t, cpu, order[i - 1]) <=
				      topology_locality(t, cpu, order[i]));
		}
		for (int i = 0; i < n; i++)
			CHECK_EQ(seen[i], 1);
		for (int j = 0; j < n; j++)
			CHECK_EQ(topology_locality(t, cpu, j), topology_locality(t, j, cpu));
	}
	free(seen);
}

static void test_two_packages(void)
{
	struct topology *t = build("pack:2 l3:1 core:4 pu:2");
	const int *cpus;
	int nr;

	CHECK_EQ(topology_nr_cpus(t), 16);
	CHECK_EQ(topology_locality(t, 0, 0), LOCALITY_SAME);
	CHECK_EQ(topology_locality(t, 0, 1), LOCALITY_SMT);
	CHECK_EQ(topology_locality(t, 0, 2), LOCALITY_LLC);
	CHECK_EQ(topology_locality(t, 0, 7), LOCALITY_LLC);
	/* One NUMA node for the machine: another package is "same node". */
	CHECK_EQ(topology_locality(t, 0, 8), LOCALITY_NODE);
	CHECK_EQ(topology_locality(t, 9, 8), LOCALITY_SMT);
	CHECK_EQ(topology_order(t, 0)[1], 1);
	CHECK_EQ(topology_order(t, 3)[1], 2);
	cpus = topology_core_cpus(t, 5, &nr);
	CHECK_EQ(nr, 2);
	CHECK_EQ(cpus[0], 4);
	CHECK_EQ(cpus[1], 5);
	cpus = topology_llc_cpus(t, 9, &nr);
	CHECK_EQ(nr, 8);
	CHECK_EQ(cpus[0], 8);
	CHECK_EQ(topology_os_index(t, 13), 13);
	check_orders(t);
	topology_free(t);
}

static void test_numa(void)
{
	struct topology *t = build("numa:2 pack:1 l3:1 core:4 pu:2");

	CHECK_EQ(topology_nr_cpus(t), 16);
	CHECK_EQ(topology_locality(t, 0, 1), LOCALITY_SMT);
	CHECK_EQ(topology_locality(t, 0, 6), LOCALITY_LLC);
	CHECK_EQ(topology_locality(t, 0, 8), LOCALITY_DISTANT);
	CHECK_EQ(topology_locality(t, 15, 7), LOCALITY_DISTANT);
	check_orders(t);
	topology_free(t);
}

static void test_every_level(void)
{
	struct topology *t = build("numa:2 pack:2 l3:2 core:2 pu:2");

	CHECK_EQ(topology_nr_cpus(t), 32);
	CHECK_EQ(topology_locality(t, 0, 1), LOCALITY_SMT);
	CHECK_EQ(topology_locality(t, 0, 2), LOCALITY_LLC);
	CHECK_EQ(topology_locality(t, 0, 4), LOCALITY_PACKAGE);
	CHECK_EQ(topology_locality(t, 0, 8), LOCALITY_NODE);
	CHECK_EQ(topology_locality(t, 0, 16), LOCALITY_DISTANT);
	/* Nearest first: sibling, cache, package, node, then the far node. */
	CHECK_EQ(topology_order(t, 0)[1], 1);
	CHECK_EQ(topology_locality(t, 0, topology_order(t, 0)[4]), LOCALITY_PACKAGE);
	CHECK_EQ(topology_locality(t, 0, topology_order(t, 0)[8]), LOCALITY_NODE);
	CHECK_EQ(topology_locality(t, 0, topology_order(t, 0)[16]), LOCALITY_DISTANT);
	check_orders(t);
	topology_free(t);
}

static void test_no_smt_no_cache(void)
{
	struct topology *t = build("pack:1 core:2 pu:1");
	int nr;

	CHECK_EQ(topology_nr_cpus(t), 2);
	CHECK_EQ(topology_locality(t, 0, 1), LOCALITY_PACKAGE);
	topology_core_cpus(t, 0, &nr);
	CHECK_EQ(nr, 1);
	topology_llc_cpus(t, 0, &nr);
	CHECK_EQ(nr, 1);
	topology_free(t);
}

static void test_512(void)
{
	struct topology *t = build("pack:8 l3:1 core:32 pu:2");
	int nr;

	CHECK_EQ(topology_nr_cpus(t), 512);
	CHECK_EQ(topology_locality(t, 0, 1), LOCALITY_SMT);
	CHECK_EQ(topology_locality(t, 0, 63), LOCALITY_LLC);
	CHECK_EQ(topology_locality(t, 0, 64), LOCALITY_NODE);
	CHECK_EQ(topology_locality(t, 511, 448), LOCALITY_LLC);
	topology_llc_cpus(t, 200, &nr);
	CHECK_EQ(nr, 64);
	check_orders(t);
	topology_free(t);
}

int main(void)
{
	test_two_packages();
	test_numa();
	test_every_level();
	test_no_smt_no_cache();
	test_512();
	return CHECK_EXIT();
}
