/* NULL-terminated string lists, as the exemption fields hold them. */
#pragma once

void config_strv_free(char **v);
/* Appends a copy of s; -ENOMEM leaves *v as it was. */
int config_strv_append(char ***v, const char *s);
/* Deep copy; an empty or NULL source gives NULL. */
int config_strv_copy(char ***ret, char *const *src);
