/*
 * Configuration defaults.
 */
#include "config.h"

#include <string.h>

void
gs_config_init(struct gs_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->root = "/";
	cfg->sysfs_root = "/sys";
	cfg->proc_root = "/proc";
	cfg->timeout = 5.0;
	cfg->window = 0.1;
	cfg->reindex = 5.0;
	cfg->want_procs = true;
}
