/* Integers from a client's JSON. */
#include "control-internal.h"

/* The range is checked on the double, before any cast: converting a double
 * outside long's range (1e300) is undefined behaviour, not a large long. */
bool json_get_int(const cJSON *obj, const char *key, double lo, double hi, long *ret)
{
	const cJSON *v = cJSON_GetObjectItem(obj, key);
	double d;

	if (!v)
		return true;
	if (!cJSON_IsNumber(v))
		return false;
	d = v->valuedouble;
	if (!(d >= lo && d <= hi) || d != (double)(long)d)
		return false;
	*ret = (long)d;
	return true;
}
