/* The blocking helpers and the async set-class request. */
#include "client-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc.h"

/* The body of a set-class request. The start time lets the daemon catch a
 * pid that was reused between our look and its action. */
static int set_class_body(pid_t pid, pid_t tid, enum muqss_policy policy, int nice_set,
			  int nice, cJSON **ret)
{
	const char *name = client_policy_name(policy);
	uint64_t start;
	cJSON *o;

	if (!name || (pid <= 0 && tid <= 0) || (nice_set && (nice < -20 || nice > 19)))
		return -EINVAL;
	o = cJSON_CreateObject();
	if (!o)
		return -ENOMEM;
	if ((pid > 0 && !cJSON_AddNumberToObject(o, "pid", pid)) ||
	    (tid > 0 && !cJSON_AddNumberToObject(o, "tid", tid)) ||
	    !cJSON_AddStringToObject(o, "class", name) ||
	    (nice_set && !cJSON_AddNumberToObject(o, "nice", nice)))
		goto nomem;
	if (pid > 0 && proc_start_time(pid, tid, &start) == 0 &&
	    !cJSON_AddNumberToObject(o, "start_time", (double)start))
		goto nomem;
	*ret = o;
	return 0;
nomem:
	cJSON_Delete(o);
	return -ENOMEM;
}

static int set_class(struct muqss_client *c, pid_t pid, pid_t tid, enum muqss_policy policy,
		     int nice_set, int nice)
{
	cJSON *body;
	int r;

	c->error[0] = '\0';
	r = set_class_body(pid, tid, policy, nice_set, nice, &body);
	if (r < 0)
		return r;
	r = client_call(c, MUQSS_MSG_SET_CLASS, body, NULL);
	cJSON_Delete(body);
	return r;
}

int muqss_set_class(struct muqss_client *c, pid_t pid, enum muqss_policy policy)
{
	return set_class(c, pid, 0, policy, 0, 0);
}

int muqss_set_class_tid(struct muqss_client *c, pid_t tid, enum muqss_policy policy)
{
	return set_class(c, 0, tid, policy, 0, 0);
}

int muqss_set_class_nice(struct muqss_client *c, pid_t pid, enum muqss_policy policy, int nice)
{
	return set_class(c, pid, 0, policy, 1, nice);
}

int muqss_set_class_async(struct muqss_client *c, pid_t pid, pid_t tid,
			  enum muqss_policy policy, muqss_reply_func_t callback, void *userdata)
{
	cJSON *body;
	int r;

	r = set_class_body(pid, tid, policy, 0, 0, &body);
	if (r < 0)
		return r;
	r = client_request(c, MUQSS_MSG_SET_CLASS, body, callback, userdata);
	cJSON_Delete(body);
	return r;
}

int muqss_get_tunable(struct muqss_client *c, const char *name, char **ret)
{
	cJSON *body, *reply, *v;
	char *text = NULL, *out = NULL;
	int r;

	if (!name)
		return -EINVAL;
	body = cJSON_CreateObject();
	if (!body || !cJSON_AddStringToObject(body, "name", name)) {
		cJSON_Delete(body);
		return -ENOMEM;
	}
	r = client_call(c, MUQSS_MSG_GET, body, &text);
	cJSON_Delete(body);
	if (r < 0)
		return r;
	reply = cJSON_Parse(text);
	free(text);
	v = cJSON_GetObjectItem(reply, name);
	if (cJSON_IsString(v))
		r = (out = strdup(v->valuestring)) ? 0 : -ENOMEM;
	else if (cJSON_IsNumber(v))
		r = asprintf(&out, "%.0f", v->valuedouble) < 0 ? (out = NULL, -ENOMEM) : 0;
	else
		r = -EBADMSG;
	cJSON_Delete(reply);
	if (r == 0)
		*ret = out;
	return r;
}

int muqss_set_tunable(struct muqss_client *c, const char *name, const char *value)
{
	cJSON *body;
	int r;

	if (!name || !value)
		return -EINVAL;
	body = cJSON_CreateObject();
	if (!body || !cJSON_AddStringToObject(body, "name", name) ||
	    !cJSON_AddStringToObject(body, "value", value)) {
		cJSON_Delete(body);
		return -ENOMEM;
	}
	r = client_call(c, MUQSS_MSG_SET, body, NULL);
	cJSON_Delete(body);
	return r;
}

int muqss_reload(struct muqss_client *c)
{
	return client_call(c, MUQSS_MSG_RELOAD, NULL, NULL);
}

int muqss_status_json(struct muqss_client *c, char **ret)
{
	return client_call(c, MUQSS_MSG_STATUS, NULL, ret);
}

int muqss_queues_json(struct muqss_client *c, int cpu, char **ret)
{
	cJSON *body = cJSON_CreateObject();
	int r;

	if (!body || (cpu >= 0 && !cJSON_AddNumberToObject(body, "cpu", cpu))) {
		cJSON_Delete(body);
		return -ENOMEM;
	}
	r = client_call(c, MUQSS_MSG_QUEUES, body, ret);
	cJSON_Delete(body);
	return r;
}

int muqss_tasks_json(struct muqss_client *c, char **ret)
{
	return client_call(c, MUQSS_MSG_TASKS, NULL, ret);
}
