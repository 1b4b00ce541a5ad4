/*
 * Configuration defaults.
 */
#include "core/config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/strbuf.h"
#include "core/xalloc.h"

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
	cfg->replay_speed = 1.0;
	cfg->want_procs = true;
}

static char *
joined(const char *root, const char *sub)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = strlen(root);

	while (len > 1 && root[len - 1] == '/')
		len--;
	strbuf_add(&sb, root, len);
	strbuf_addf(&sb, "%s%s", len == 1 && root[0] == '/' ? "" : "/", sub);
	return strbuf_detach(&sb, NULL);
}

void
gs_config_set_root(struct gs_config *cfg, const char *root)
{
	gs_config_release(cfg);
	cfg->owned[0] = xstrdup(root);
	cfg->owned[1] = joined(root, "sys");
	cfg->owned[2] = joined(root, "proc");
	cfg->owned[3] = joined(root, "etc/passwd");
	cfg->root = cfg->owned[0];
	cfg->sysfs_root = cfg->owned[1];
	cfg->proc_root = cfg->owned[2];
	/* a tree without its own users keeps the system's */
	cfg->passwd_file = access(cfg->owned[3], R_OK) == 0 ? cfg->owned[3] : NULL;
}

void
gs_config_release(struct gs_config *cfg)
{
	for (size_t i = 0; i < sizeof(cfg->owned) / sizeof(cfg->owned[0]); i++)
		FREE_AND_NULL(cfg->owned[i]);
}
