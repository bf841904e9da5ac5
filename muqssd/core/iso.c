#include "iso.h"

uint64_t iso_period(uint64_t tick_ns, unsigned int nr_cpus)
{
	uint64_t p;

	if (!tick_ns)
		tick_ns = 1;
	if (!nr_cpus)
		nr_cpus = 1;
	p = ISO_WINDOW_NS / tick_ns * nr_cpus;
	return p ? p : 1;
}

void iso_init(struct iso *iso, uint64_t period)
{
	iso->period = period ? period : 1;
	iso->ticks = 0;
	iso->refractory = false;
}

bool iso_account(struct iso *iso, bool running_iso, unsigned int iso_cpu)
{
	uint64_t p = iso->period;
	bool was = iso->refractory;

	iso->ticks = iso->ticks * (p - 1) / p;
	if (running_iso) {
		iso->ticks += 100;
		if (iso->ticks > p * iso_cpu)
			iso->refractory = true;
		/* Cannot exceed 100% in theory; clamp rounding drift. */
		if (iso->ticks > p * 100)
			iso->ticks = p * 100;
	} else if (iso->refractory && iso->ticks < p * (iso_cpu * 115 / 128)) {
		iso->refractory = false;
	}
	return was != iso->refractory;
}

unsigned int iso_percent(const struct iso *iso)
{
	return (unsigned int)(iso->ticks / iso->period);
}
