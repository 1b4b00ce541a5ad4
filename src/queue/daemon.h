/*
 * The queue daemon (gpuscope queued): one thread with a poll() loop over
 * the listening socket, the clients, the supervisors' report pipes, the
 * sampling worker's eventfd (gpus.h) and a self-pipe for signals. It owns
 * the store (the truth, written before acting), asks the scheduler what to
 * start, stop or refuse after every change and every sample, and drives
 * each job's life through the executor (docs/queue.md, job.h).
 *
 * SIGTERM, SIGINT: stop and return, leaving jobs running (a restart adopts
 * them). SIGHUP: re-read the configuration.
 */
#ifndef GPUSCOPE_QUEUE_DAEMON_H
#define GPUSCOPE_QUEUE_DAEMON_H

#include <stdbool.h>

struct err;
struct gs_config;

struct qdaemon_opts {
	const char *config;         /* the configuration file */
	bool config_given;          /* named (--config, $GPUSCOPE_QUEUE_CONF): it must exist */
	const char *socket;         /* --socket: overrides the file's */
	const char *state_dir;      /* --state-dir: overrides the file's */
	const struct gs_config *gs; /* which driver to load, the clock */
};

/*
 * Run until SIGTERM or SIGINT. Returns 0 then; a negative status when it
 * could not start (another daemon on the socket, a bad state directory...),
 * with why in err.
 */
int qdaemon_run(const struct qdaemon_opts *o, struct err *err);

#endif
