/* Who is calling, read once at accept; what they may do to a task is
 * decided by auth/task_auth.c, which rtkit's requests go through too. */
#include "control-internal.h"
#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>

#include "hidepid.h"
#include "log.h"
#include "proc.h"
#include "task_auth.h"

bool peer_in_group(int fd, gid_t gid)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == gid)
			return true;
	return false;
}

void auth_read_peer(struct control_client *c, gid_t admin_gid, gid_t socket_gid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	/* Unknown credentials get nobody's rights. */
	c->uid = (uid_t)-1;
	c->gid = (gid_t)-1;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->uid = cred.uid;
		c->gid = cred.gid;
		c->pid = cred.pid;
	} else {
		log_warning_errno(errno, "cannot read a control client's credentials: %m, ignoring");
	}
	c->admin = c->uid == 0 ||
		   (admin_gid != (gid_t)-1 && (c->gid == admin_gid || peer_in_group(c->fd, admin_gid)));
	c->privileged = c->admin || (socket_gid != (gid_t)-1 && (c->gid == socket_gid ||
								  peer_in_group(c->fd, socket_gid)));
}

bool auth_hidepid_hides(const struct control_client *c)
{
	const struct hidepid *h = &c->server->hidepid;

	return !c->admin && hidepid_hides(h, c->gid == h->gid || peer_in_group(c->fd, h->gid));
}

bool auth_may_see(const struct control_client *c, bool hidden, pid_t tid)
{
	const struct control_server *s = c->server;
	uid_t uid, euid;

	if (!hidden)
		return true;
	if ((!s->ops.task_owner || s->ops.task_owner(s->userdata, tid, &uid, &euid) < 0) &&
	    proc_uids(tid, 0, &uid, &euid) < 0)
		return false;
	return hidepid_owner_sees(c->uid, uid, euid);
}

int auth_set_class(struct control_client *c, pid_t pid, pid_t tid, enum sched_class class,
		   bool nice_set, int nice, char *err, size_t errlen)
{
	struct control_server *s = c->server;
	const struct auth_caller who = { c->uid, c->admin, AUTH_NO_NICE_GRANT };
	const struct auth_request q = { pid, tid, class, nice_set, nice };
	struct auth_view view = { 0 };
	pid_t target = tid > 0 ? tid : pid;

	/* What /proc hides from the caller is answered as if missing: its
	 * owner is not the caller's to learn, nor that it exists. */
	if (!auth_may_see(c, auth_hidepid_hides(c), target)) {
		snprintf(err, errlen, "no such process: %d", (int)target);
		return -ESRCH;
	}
	if (s->ops.auth_view)
		s->ops.auth_view(s->userdata, &view);

	return auth_task(&who, &view, &q, err, errlen);
}
