/* json_get_int: numbers far outside long's range are refused, not cast.
 * Built with -fsanitize=float-cast-overflow (no recovery), so a cast made
 * before the range check aborts the test. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "control-internal.h"

static bool get(const char *json, long *v)
{
	cJSON *o = cJSON_Parse(json);
	bool ok;

	REQUIRE(o);
	ok = json_get_int(o, "pid", 0, 4194304, v);
	cJSON_Delete(o);
	return ok;
}

int main(void)
{
	long v = -7;

	CHECK(get("{\"pid\":1e300}", &v) == false && v == -7);
	CHECK(get("{\"pid\":-1e300}", &v) == false && v == -7);
	CHECK(get("{\"pid\":9.3e18}", &v) == false && v == -7);
	CHECK(get("{\"pid\":4194305}", &v) == false && v == -7);
	CHECK(get("{\"pid\":1.5}", &v) == false && v == -7);
	CHECK(get("{\"pid\":\"12\"}", &v) == false && v == -7);
	CHECK(get("{}", &v) == true && v == -7);
	CHECK(get("{\"pid\":4194304}", &v) == true && v == 4194304);
	CHECK(get("{\"pid\":0}", &v) == true && v == 0);
	return CHECK_EXIT();
}
