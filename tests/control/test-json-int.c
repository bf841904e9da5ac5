/* json_get_int: numbers far outside long's range are refused, not cast.
 * Built with -fsanitize=float-cast-overflow (no recovery), so a cast made
 * before the range check aborts the test. */
#include <stdio.h>
#include <stdlib.h>

#include "control-internal.h"

#define check(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,      \
				__LINE__, #cond);                                   \
			exit(EXIT_FAILURE);                                         \
		}                                                                   \
	} while (0)

static bool get(const char *json, long *v)
{
	cJSON *o = cJSON_Parse(json);
	bool ok;

	check(o);
	ok = json_get_int(o, "pid", 0, 4194304, v);
	cJSON_Delete(o);
	return ok;
}

int main(void)
{
	long v = -7;

	check(get("{\"pid\":1e300}", &v) == false && v == -7);
	check(get("{\"pid\":-1e300}", &v) == false && v == -7);
	check(get("{\"pid\":9.3e18}", &v) == false && v == -7);
	check(get("{\"pid\":4194305}", &v) == false && v == -7);
	check(get("{\"pid\":1.5}", &v) == false && v == -7);
	check(get("{\"pid\":\"12\"}", &v) == false && v == -7);
	check(get("{}", &v) == true && v == -7);
	check(get("{\"pid\":4194304}", &v) == true && v == 4194304);
	check(get("{\"pid\":0}", &v) == true && v == 0);
	return EXIT_SUCCESS;
}
