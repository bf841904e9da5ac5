/* Hog classification: which tasks used their slice without sleeping,
 * and what the kernel is told about them (nice, EEVDF slice). */
#include "loop-internal.h"

#include "core/cfs_weight.h"
#include "log.h"

int loop_kernel_nice(int nice)
{
	return cfs_weight_nice(nice);
}

static void become_hog(struct loop *l, struct managed_task *m, bool hog, uint64_t now)
{
	int want;

	m->hog = hog;
	log_debug("hog %d: %s", (int)m->target.tid, hog ? "yes" : "no");
	if (hog) {
		m->hog_since_ns = now;
		sched_dequeue(l->core, &m->st);
		managed_unboost(l, m);
		managed_unpin(l, m, now);
	}
	want = hog && m->st.nice != 0 ? loop_kernel_nice(m->st.nice) : m->st.nice;
	if (want == (m->kernel_nice == NICE_UNSET ? m->st.nice : m->kernel_nice))
		return;
	if (managed_set_nice(l, m, want) == 0)
		m->kernel_nice = want == m->st.nice ? NICE_UNSET : want;
}

void hog_group(struct loop *l, struct managed_task *m, bool on, uint64_t now)
{
	if (on == m->group_hog)
		return;
	m->group_hog = on;
	if (on != m->hog)
		become_hog(l, m, on, now);
	/* Out of the group, it earns hog again on its own, by a slice. */
	if (!on)
		m->slept = true;
}

void hog_renice(struct loop *l, struct managed_task *m, uint64_t now)
{
	if (m->hog)
		become_hog(l, m, true, now);
}

/* Runnable, never seen blocking since its birth (HOG_BORN_NVCSW), and no
 * slice of it has run out since we met it: it may be CPU-bound from
 * birth, and is a hog once it has run HOG_BORN_CPU_NS. */
static bool born_unsliced(const struct managed_task *m)
{
	return !m->sliced && !m->slept && m->tt->state == 'R' && m->tt->nvcsw <= HOG_BORN_NVCSW;
}

bool hog_born_candidate(const struct managed_task *m)
{
	return born_unsliced(m) && !m->hog &&
	       (m->st.class == SCHED_CLASS_NORMAL || m->st.class == SCHED_CLASS_BATCH);
}

bool hog_settled(const struct managed_task *m, uint64_t now)
{
	return m->hog && (now - m->hog_since_ns >= HOG_SETTLED_NS || m->tt->nvcsw <= HOG_BORN_NVCSW);
}

/* ISO and IDLEPRIO keep their class's rules; only normal work can be a
 * hog, and ISO work over its cap. Asked of the cap, not of the key: a
 * hog's key is not rekeyed when the cap clears, and a hog charged on
 * every tick would stay one. */
static bool may_be_hog(const struct loop *l, const struct managed_task *m)
{
	return m->st.class != SCHED_CLASS_IDLEPRIO && m->st.class != SCHED_CLASS_RT &&
	       !iso_within_cap(l, m);
}

void hog_classify(struct loop *l, struct managed_task *m, bool expired, bool runnable,
		  uint64_t now)
{
	/* CPU-bound from birth, it is a hog before its first slice runs out,
	 * or a task started beside a few of them meets them in the fair
	 * class meanwhile. */
	if (!expired && born_unsliced(m) && m->tt->cpu_ns >= HOG_BORN_CPU_NS)
		expired = true;
	if (expired) {
		bool hog;

		m->sliced = true;
		hog = !m->slept && runnable && may_be_hog(l, m);
		m->slept = false;
		if (hog != m->hog)
			become_hog(l, m, hog, now);
	} else if (m->hog && (!runnable || iso_within_cap(l, m))) {
		/* It slept, or it is ISO again now the cap has cleared. */
		become_hog(l, m, false, now);
	}
	if (hog_born_candidate(m) && now - m->met_ns >= HOG_BORN_WATCH_NS &&
	    now - m->met_ns < HOG_SETTLED_NS)
		l->born_pending = true;
}

/* EEVDF's slice request is the kernel's own rr_interval: ours for
 * settled hogs only. EEVDF gives a longer request a later deadline, so
 * a sleeper keeps the kernel's shorter default, or each of its wake-ups
 * would wait longer. */
void hog_ask_slice(struct loop *l, struct managed_task *m, bool settled)
{
	if (settled == m->slice_set || !l->lv.ops->slice_supported(l->lv.ctx))
		return;
	l->counters.calls_slice++;
	(void)l->lv.ops->set_slice(l->lv.ctx, target_of(m), settled ? rr_slice_ns(l) : 0);
	m->slice_set = settled;
}
