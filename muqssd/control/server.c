/* The listening socket: from the service manager or bound here, with the
 * care ntpd takes (the mode set through the umask before bind), and accept. */
#include "control-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "log.h"

static int mkdir_parents(const char *path)
{
	char *dir = strdup(path), *p;
	int r = 0;

	if (!dir)
		return -ENOMEM;
	p = strrchr(dir, '/');
	if (!p || p == dir)
		goto out;
	*p = '\0';
	for (p = dir + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			break;
		}
		*p = c;
		if (c == '\0')
			break;
	}
out:
	free(dir);
	return r;
}

/* Never follow a symlink or replace a file we did not make; a socket
 * nobody answers on is what a dead instance left, and goes. */
static int clear_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : log_error_errno(errno, "cannot stat %s: %m", path);
	if (S_ISLNK(st.st_mode))
		return log_error_errno(ELOOP, "%s is a symbolic link, refusing to use it", path);
	if (!S_ISSOCK(st.st_mode))
		return log_error_errno(EEXIST, "%s exists and is not a socket, refusing to replace it",
				       path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return log_error_errno(errno, "cannot create a socket: %m");
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (r == 0)
		return log_error_errno(EADDRINUSE, "%s is in use: is another muqssd running?", path);
	if (unlink(path) < 0 && errno != ENOENT)
		return log_error_errno(errno, "cannot remove stale socket %s: %m", path);
	log_info("removed stale socket %s", path);
	return 0;
}

static int socket_bind(struct control_server *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = s->opts.socket_path;
	mode_t old_mask;
	gid_t gid = (gid_t)-1;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return log_error_errno(ENAMETOOLONG, "socket path too long: %s", path);
	strcpy(sa.sun_path, path);
	if (s->opts.socket_group) {
		struct group *g = getgrnam(s->opts.socket_group);
		if (!g)
			return log_error_errno(ENOENT, "socket group %s: no such group",
					       s->opts.socket_group);
		gid = g->gr_gid;
	}
	r = mkdir_parents(path);
	if (r < 0)
		return log_error_errno(r, "cannot create the directory of %s: %m", path);
	r = clear_stale(path, &sa);
	if (r < 0)
		return r;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return log_error_errno(errno, "cannot create the control socket: %m");
	/* Born with its final mode, so nothing is ever changed by path but the
	 * group, and lchown() changes a symlink swapped in since bind(), never
	 * the file it points to. Until then root's group owns it. */
	old_mask = umask(~s->opts.socket_mode & 0777);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (r < 0) {
		r = log_error_errno(errno, "cannot bind %s: %m", path);
		goto fail;
	}
	s->bound = true;
	if (gid != (gid_t)-1 && lchown(path, (uid_t)-1, gid) < 0) {
		r = log_error_errno(errno, "cannot give %s to group %s: %m", path,
				    s->opts.socket_group);
		goto fail;
	}
	if (listen(fd, SOMAXCONN) < 0) {
		r = log_error_errno(errno, "cannot listen on %s: %m", path);
		goto fail;
	}
	s->listen_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

/* Socket activation: the first listening Unix stream socket passed. */
static int socket_from_manager(struct control_server *s)
{
	int n = sd_listen_fds(0);

	for (int i = 0; i < n; i++) {
		int fd = SD_LISTEN_FDS_START + i;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) > 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
				return log_error_errno(errno, "cannot make socket %d non-blocking: %m",
						       fd);
			s->listen_fd = fd;
			log_info("using the control socket passed by the service manager");
			return 1;
		}
	}
	return 0;
}

static int on_listen(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct control_server *s = userdata;

	/* Bounded, so a connect storm cannot hold the loop. */
	for (int i = 0; i < 64; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				return 0;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				log_warning_errno(errno, "cannot accept a control client: %m, ignoring");
				return 0;
			}
			return log_error_errno(errno, "accept on the control socket failed: %m");
		}
		(void)control_server_add_fd(s, cfd);
	}
	return 0;
}

int control_server_add_fd(struct control_server *s, int fd)
{
	int r = client_new(s, fd);

	if (r < 0)
		close(fd);
	if (r == -EBUSY)
		return r; /* told why; a flood must not flood the journal too */
	if (r < 0)
		return log_warning_errno(r, "cannot serve a control client: %m, ignoring");
	return 0;
}

unsigned control_server_clients(const struct control_server *s)
{
	return s->n_clients;
}

int control_server_read_proc_mount(struct control_server *s)
{
	struct hidepid h;
	int r = hidepid_read(&h);

	if (r < 0)
		return log_error_errno(r, "cannot read how /proc is mounted: %m");
	if (h.mode != s->hidepid.mode || h.gid != s->hidepid.gid) {
		if (h.mode == HIDEPID_MODE_OFF)
			log_info("/proc hides no process: tasks and queues show every task to anyone");
		else
			log_info("/proc is mounted hidepid=%d, gid=%u: tasks and queues show a caller "
				 "only their own tasks, unless root or of the admin group%s", (int)h.mode,
				 (unsigned)h.gid, h.mode == HIDEPID_MODE_PTRACEABLE ? "" : " or gid=");
	}
	s->hidepid = h;
	return 0;
}

int control_server_new(struct control_server **ret, sd_event *event,
		       const struct control_options *opts, const struct control_ops *ops,
		       void *userdata)
{
	struct control_server *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return log_error_errno(ENOMEM, "out of memory");
	s->event = sd_event_ref(event);
	budget_init(s);
	s->opts = *opts;
	s->ops = *ops;
	s->userdata = userdata;
	s->listen_fd = -1;
	s->admin_gid = (gid_t)-1;
	s->socket_gid = (gid_t)-1;
	if (!s->opts.idle_timeout_usec)
		s->opts.idle_timeout_usec = CONTROL_IDLE_TIMEOUT_USEC;
	if (!s->opts.max_clients)
		s->opts.max_clients = CONTROL_MAX_CLIENTS;
	s->path = strdup(opts->socket_path ? opts->socket_path : "");
	if (!s->path) {
		r = log_error_errno(ENOMEM, "out of memory");
		goto fail;
	}
	s->opts.socket_path = s->path;
	/* Only the names live in the options; the caller's strings may go. */
	s->opts.socket_group = NULL;
	s->opts.admin_group = NULL;
	if (opts->admin_group) {
		struct group *g = getgrnam(opts->admin_group);
		if (g)
			s->admin_gid = g->gr_gid;
		else
			log_warning("admin group %s does not exist, only root may administer",
				    opts->admin_group);
	}
	if (opts->socket_group) {
		struct group *g = getgrnam(opts->socket_group);
		if (g)
			s->socket_gid = g->gr_gid;
	}
	r = control_server_read_proc_mount(s);
	if (r < 0)
		goto fail;
	if (opts->no_listen) {
		*ret = s;
		return 0;
	}
	r = socket_from_manager(s);
	if (r == 0) {
		s->opts.socket_group = opts->socket_group;
		r = socket_bind(s);
		s->opts.socket_group = NULL;
	}
	if (r < 0)
		goto fail;
	r = sd_event_add_io(event, &s->listen_source, s->listen_fd, EPOLLIN, on_listen, s);
	if (r < 0) {
		log_error_errno(r, "cannot watch the control socket: %m");
		goto fail;
	}
	*ret = s;
	return 0;
fail:
	control_server_free(s);
	return r;
}

struct control_server *control_server_free(struct control_server *s)
{
	if (!s)
		return NULL;
	while (s->clients)
		client_free(s->clients);
	budget_free(s);
	sd_event_source_disable_unref(s->listen_source);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->bound && unlink(s->path) < 0 && errno != ENOENT)
		log_warning_errno(errno, "cannot remove %s: %m, ignoring", s->path);
	sd_event_unref(s->event);
	free(s->path);
	free(s);
	return NULL;
}
