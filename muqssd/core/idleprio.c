#include "idleprio.h"

bool idleprio_should_promote(const struct idleprio_facts *f)
{
	return f->uninterruptible || f->exiting || f->signal_pending ||
	       f->frozen || f->blocking_others;
}
