/* The event loop, signals, the service manager, reload and status. */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>

#include "config_file.h"
#include "control.h"
#include "log.h"
#include "loop.h"
#include "time_util.h"

static int on_sigterm(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	log_info("received %s, restoring tasks and exiting", strsignal((int)si->ssi_signo));
	(void)sd_notify(0, "STOPPING=1");
	return sd_event_exit(d->event, 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)daemon_reload(userdata);
	return 0;
}

int daemon_reload(struct daemon *d)
{
	struct rules *rules = NULL;
	struct config next;
	int r;

	(void)sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
			 (unsigned long long)now_usec(CLOCK_MONOTONIC));
	if (d->control)
		(void)control_server_read_proc_mount(d->control);
	config_init_defaults(&next);
	r = config_load(&next, d->config_path, d->config_missing_ok);
	/* Both read before either is applied: a reload that fails anywhere
	 * changes nothing. */
	if (r >= 0)
		r = daemon_rules_read(d, &rules);
	if (r < 0) {
		log_error_errno(r, "reload: keeping the old configuration and rules: %m");
		config_free(&next);
		goto done;
	}
	/* What the command line chose is not the file's to change. */
	d->config.tunables = next.tunables;
	/* Swapped, so the old lists go with next. */
	struct config_exempt old = d->config.exempt;
	d->config.exempt = next.exempt;
	next.exempt = old;
	d->config.reconcile_interval_ms = next.reconcile_interval_ms;
	d->config.poll_interval_ms = next.poll_interval_ms;
	d->config.idleprio_stop_max_ms = next.idleprio_stop_max_ms;
	/* --log-level outranks the file, at a reload too. */
	d->config.log_level = d->cli_log_level >= 0 ? d->cli_log_level : next.log_level;
	log_set_level(d->config.log_level);
	config_free(&next);
	daemon_tunables_changed(d);
	daemon_rules_set(d, rules);
	d->counters.reloads++;
	log_info("configuration reloaded");
done:
	(void)sd_notify(0, "READY=1");
	daemon_notify_status(d);
	return r < 0 ? r : 0;
}

uint64_t daemon_cpu_usec(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return rusage_cpu_usec(&ru);
}

static const char *scope_name(enum scope_kind k)
{
	switch (k) {
	case SCOPE_PID: return "pid";
	case SCOPE_CGROUP: return "cgroup";
	default: return "all";
	}
}

int daemon_status_json(struct daemon *d, cJSON *obj)
{
	const struct loop_counters *lc = d->loop ? loop_counters(d->loop) : NULL;
	cJSON *tun, *scope, *counters;
	char err[64];

	tun = cJSON_AddObjectToObject(obj, "tunables");
	scope = cJSON_AddObjectToObject(obj, "scope");
	counters = cJSON_AddObjectToObject(obj, "counters");
	if (!tun || !scope || !counters)
		return -ENOMEM;
	cJSON_AddStringToObject(obj, "version", MUQSS_VERSION);
	cJSON_AddNumberToObject(obj, "uptime_s",
				(double)(now_usec(CLOCK_MONOTONIC) - d->started_usec) / 1e6);
	cJSON_AddNumberToObject(obj, "cpu_s", (double)daemon_cpu_usec() / 1e6);
	if (tunables_get(&d->config.tunables, NULL, tun, err, sizeof(err)) < 0)
		return -ENOMEM;
	cJSON_AddStringToObject(scope, "kind", scope_name(d->config.scope));
	if (d->config.scope == SCOPE_PID)
		cJSON_AddNumberToObject(scope, "pid", d->config.scope_pid);
	else if (d->config.scope == SCOPE_CGROUP)
		cJSON_AddStringToObject(scope, "cgroup", d->config.scope_cgroup);
	cJSON_AddNumberToObject(counters, "lost_event_recoveries",
				(double)d->counters.lost_event_recoveries);
	cJSON_AddNumberToObject(counters, "boosts", (double)(lc ? lc->boosts : 0));
	cJSON_AddNumberToObject(counters, "stops", (double)(lc ? lc->stops : 0));
	cJSON_AddNumberToObject(counters, "reloads", (double)d->counters.reloads);
	if (daemon_tracking_status_json(d, obj) < 0)
		return -ENOMEM;
	return daemon_tick_status_json(d, obj);
}

void daemon_notify_status(struct daemon *d)
{
	const struct loop_counters *lc = d->loop ? loop_counters(d->loop) : NULL;

	(void)sd_notifyf(0, "STATUS=scope %s, %llu boosts, %llu stops, %llu lost-event recoveries",
			 scope_name(d->config.scope), (unsigned long long)(lc ? lc->boosts : 0),
			 (unsigned long long)(lc ? lc->stops : 0),
			 (unsigned long long)d->counters.lost_event_recoveries);
}

int daemon_new(struct daemon **ret, struct config *config, const char *config_path,
	       bool config_missing_ok)
{
	struct daemon *d;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return log_error_errno(ENOMEM, "out of memory");
	d->config = *config;
	memset(config, 0, sizeof(*config));
	d->config_path = config_path;
	d->config_missing_ok = config_missing_ok;
	d->cli_log_level = -1;

	r = sd_event_default(&d->event);
	if (r < 0) {
		log_error_errno(r, "cannot create the event loop: %m");
		goto fail;
	}
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* A client that vanishes mid-reply must not kill us. */
	signal(SIGPIPE, SIG_IGN);
	if ((r = sd_event_add_signal(d->event, NULL, SIGTERM, on_sigterm, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGINT, on_sigterm, d)) < 0 ||
	    (r = sd_event_add_signal(d->event, NULL, SIGHUP, on_sighup, d)) < 0) {
		log_error_errno(r, "cannot watch signals: %m");
		goto fail;
	}
	/* sd-event sends WATCHDOG=1 itself when WATCHDOG_USEC is set. */
	r = sd_event_set_watchdog(d->event, true);
	if (r < 0) {
		log_error_errno(r, "cannot enable the watchdog: %m");
		goto fail;
	}
	d->started_usec = now_usec(CLOCK_MONOTONIC);
	*ret = d;
	return 0;
fail:
	daemon_free(d);
	return r;
}

struct daemon *daemon_free(struct daemon *d)
{
	if (!d)
		return NULL;
	daemon_rtkit_stop(d);
	daemon_control_stop(d);
	daemon_loop_stop(d);
	daemon_track_stop(d);
	sd_event_unref(d->event);
	config_free(&d->config);
	free(d);
	return NULL;
}

int daemon_run(struct daemon *d)
{
	int r;

	/* Order matters: the scan must be complete before READY=1, and
	 * the scheduler needs the tasks the scan found. */
	r = daemon_track_start(d);
	if (r < 0)
		return r;
	r = daemon_loop_start(d);
	if (r < 0)
		return r;
	r = daemon_control_start(d);
	if (r < 0)
		return r;
	(void)daemon_rtkit_start(d);

	log_info("muqssd %s running, scope %s", MUQSS_VERSION, scope_name(d->config.scope));
	(void)sd_notify(0, "READY=1");
	daemon_notify_status(d);
	r = sd_event_loop(d->event);
	(void)sd_notify(0, "STOPPING=1");
	/* Stop in reverse so every task is restored before we exit. */
	daemon_rtkit_stop(d);
	daemon_control_stop(d);
	daemon_loop_stop(d);
	daemon_track_stop(d);
	if (r < 0)
		return log_error_errno(r, "event loop failed: %m");
	log_info("stopped");
	return 0;
}
