/*
 * Small readers the DRM driver modules share: files of a card's device
 * directory, and hwmon channels found by their labels.
 */
#include "backend/drm.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "core/err.h"
#include "core/fileio.h"
#include "core/gpu.h"
#include "core/strbuf.h"
#include "core/xalloc.h"

/* The first line of a card file, cut at a NUL (some sysfs pages come padded). */
int
drm_read_line(const struct gs_config *cfg, const struct drm_card *card, const char *rel, char *buf,
              size_t size)
{
	char path[512];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", card->dev, rel);
	rc = file_read_line(cfg->sysfs_root, path, buf, size, NULL);
	if (rc < 0)
		return rc;
	buf[strnlen(buf, size)] = '\0';
	return 0;
}

int
drm_read_s64(const struct gs_config *cfg, const struct drm_card *card, const char *rel, int64_t *v)
{
	char line[64];
	int rc = drm_read_line(cfg, card, rel, line, sizeof(line));

	return rc < 0 ? rc : parse_s64_line(line, v);
}

int
drm_read_u64(const struct gs_config *cfg, const struct drm_card *card, const char *rel, uint64_t *v)
{
	char line[64];
	int rc = drm_read_line(cfg, card, rel, line, sizeof(line));

	return rc < 0 ? rc : parse_u64_line(line, v);
}

bool
drm_hwmon(const struct gs_config *cfg, const struct drm_card *card, char *rel, size_t size)
{
	char dir[4096], sub[256], best[40] = "";
	struct dirent *de;
	DIR *d;

	snprintf(sub, sizeof(sub), "%s/hwmon", card->dev);
	path_join(dir, sizeof(dir), cfg->sysfs_root, sub);
	d = opendir(dir);
	if (!d)
		return false;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "hwmon", 5) || strlen(de->d_name) >= sizeof(best))
			continue;
		/* the lowest number, should a device ever have two */
		if (!best[0] || strlen(de->d_name) < strlen(best) ||
		    (strlen(de->d_name) == strlen(best) && strcmp(de->d_name, best) < 0))
			str_copy(best, sizeof(best), de->d_name);
	}
	closedir(d);
	if (!best[0])
		return false;
	snprintf(rel, size, "hwmon/%s", best);
	return true;
}

int
drm_hwmon_channel(const struct gs_config *cfg, const struct drm_card *card, const char *hwmon,
                  const char *type, const char *label)
{
	for (int n = 0; n <= 16; n++) {
		char rel[128], buf[64];

		snprintf(rel, sizeof(rel), "%s/%s%d_label", hwmon, type, n);
		if (drm_read_line(cfg, card, rel, buf, sizeof(buf)) == 0 && !strcmp(buf, label))
			return n;
	}
	return -1;
}

bool
drm_suspended(const struct gs_config *cfg, const struct drm_card *card)
{
	char st[32];

	/* no runtime PM (the file is absent) means always on */
	return drm_read_line(cfg, card, "power/runtime_status", st, sizeof(st)) == 0 &&
	       (!strcmp(st, "suspended") || !strcmp(st, "suspending"));
}

void
drm_mark_suspended(struct gpu_device *dev)
{
	gpu_device_clear_readings(dev);
	dev->state = DEV_SUSPENDED;
	str_copy(dev->state_msg, sizeof(dev->state_msg),
	         "in runtime suspend (power saving): not woken up to be read");
}

int
drm_pcie_gen_of(double gts)
{
	/* the transfer rate of each generation; 1 is 2.5 GT/s */
	static const double rate[] = { 2.5, 5, 8, 16, 32, 64, 128 };

	for (size_t i = 0; i < ARRAY_SIZE(rate); i++)
		if (gts > rate[i] - 0.05 && gts < rate[i] + 0.05)
			return (int)i + 1;
	return -1;
}

int
drm_pcie_gen(const char *speed)
{
	char *end;
	double gts = strtod(speed, &end);

	if (end == speed)
		return -1;
	while (*end == ' ')
		end++;
	if (strncmp(end, "GT/s", 4))
		return -1;
	return drm_pcie_gen_of(gts);
}

static int
pcie_gen_file(const struct gs_config *cfg, const struct drm_card *card, const char *rel)
{
	char buf[64];

	if (drm_read_line(cfg, card, rel, buf, sizeof(buf)) < 0)
		return -1;
	return drm_pcie_gen(buf);
}

/* A width; 0 is what an integrated GPU without a real link says: unknown. */
static void
pcie_width_file(const struct gs_config *cfg, const struct drm_card *card, const char *rel,
                struct gpu_device *dev, enum gpu_field f)
{
	uint64_t v;

	if (drm_read_u64(cfg, card, rel, &v) == 0 && v > 0 && v <= 32)
		dev_set(dev, f, (double)v);
}

void
drm_read_pcie(const struct gs_config *cfg, const struct drm_card *card, struct gpu_device *dev)
{
	int gen;

	if (!card->pci)
		return;
	gen = pcie_gen_file(cfg, card, "current_link_speed");
	if (gen > 0)
		dev_set(dev, GF_PCIE_GEN, gen);
	pcie_width_file(cfg, card, "current_link_width", dev, GF_PCIE_WIDTH);
	/*
	 * max_link_speed is the device's own capability (LnkCap): the device
	 * maximum, and the best this system reaches as far as the device's
	 * sysfs tells.
	 */
	gen = pcie_gen_file(cfg, card, "max_link_speed");
	if (gen > 0) {
		dev_set(dev, GF_PCIE_GEN_MAX, gen);
		dev_set(dev, GF_PCIE_GEN_DEV_MAX, gen);
	}
	pcie_width_file(cfg, card, "max_link_width", dev, GF_PCIE_WIDTH_MAX);
}
