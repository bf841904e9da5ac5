/* Shared by the files of libmuqss-client only. */
#pragma once

#include <stdbool.h>
#include <cjson/cJSON.h>

#include "muqss-client.h"
#include "wire.h"

#define CLIENT_TIMEOUT_MS 30000

struct pending {
	struct pending *next;
	uint16_t type;
	muqss_reply_func_t callback;
	void *userdata;
	cJSON *items; /* list replies collect here until END */
};

struct muqss_client {
	int fd;
	struct wire_reader in;
	struct pending *head, *tail;
	char *server_version;
	char error[512];
};

/* Queues body (NULL: {}) as a request of type; its reply goes to callback. */
int client_request(struct muqss_client *c, uint16_t type, const cJSON *body,
		   muqss_reply_func_t callback, void *userdata);
/* Sends type with body and waits for its reply: 0 with the body text in
 * *ret (may be NULL when ret is NULL) or -errno. */
int client_call(struct muqss_client *c, uint16_t type, const cJSON *body, char **ret);
const char *client_policy_name(enum muqss_policy policy);
