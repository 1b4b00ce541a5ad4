/*
 * The fake driver's CUDA checkpoint (cuCheckpointProcess*, CUDA 12.8): the
 * state of each process is a file FAKE_CUDA_CHECKPOINT_DIR/PID holding
 * "running", "locked" or "checkpointed", so that the controller (the
 * queue's daemon, another process) and the process see one state. A
 * process is a CUDA process while its file exists and it lives: a test job
 * makes itself one with 'echo running > $FAKE_CUDA_CHECKPOINT_DIR/$$'.
 * Checkpointed, its GPU memory is released the fake NVML's way: its
 * FAKE_NVML_LIVE_DIR/PID file is renamed ckpt-PID (which the fake NVML
 * does not read) and renamed back on restore. Without
 * FAKE_CUDA_CHECKPOINT_DIR every call answers CUDA_ERROR_NOT_SUPPORTED.
 */
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cuda_abi.h"
#include "fake.h"

static const char *const state_word[] = { "running", "locked", "checkpointed", "failed" };

#define CK_RET(r)                                     \
	do {                                          \
		CUresult ck_ret_ = (r);               \
		fcu_log(__func__, -1, ck_ret_, NULL); \
		return ck_ret_;                       \
	} while (0)

static const char *
ck_dir(void)
{
	const char *d = getenv("FAKE_CUDA_CHECKPOINT_DIR");

	return d && *d ? d : NULL;
}

/* The state of pid: 0, or a CUresult when it is no CUDA process of ours. */
static CUresult
read_state(int pid, unsigned *state)
{
	char path[4200], word[32] = "";
	const char *dir = ck_dir();
	FILE *f;

	if (!dir)
		return CUDA_ERROR_NOT_SUPPORTED;
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	f = fopen(path, "re");
	if (!f)
		return CUDA_ERROR_INVALID_VALUE;
	if (fscanf(f, "%31s", word) != 1)
		word[0] = '\0';
	fclose(f);
	for (unsigned i = 0; i < sizeof(state_word) / sizeof(state_word[0]); i++) {
		if (!strcmp(word, state_word[i])) {
			*state = i;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_INVALID_VALUE;
}

static CUresult
write_state(int pid, unsigned state)
{
	char path[4200], tmp[4300];
	const char *dir = ck_dir();
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", dir, pid);
	snprintf(tmp, sizeof(tmp), "%s/.%d.tmp", dir, pid);
	f = fopen(tmp, "we");
	if (!f)
		return CUDA_ERROR_UNKNOWN;
	fprintf(f, "%s\n", state_word[state]);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		return CUDA_ERROR_UNKNOWN;
	return CUDA_SUCCESS;
}

/* The fake NVML counts a live process's memory while LIVE_DIR/PID exists. */
static void
live_file(int pid, bool release)
{
	const char *live = getenv("FAKE_NVML_LIVE_DIR");
	char a[4200], b[4200];

	if (!live || !*live)
		return;
	snprintf(a, sizeof(a), "%s/%d", live, pid);
	snprintf(b, sizeof(b), "%s/ckpt-%d", live, pid);
	if (release)
		rename(a, b);
	else
		rename(b, a);
}

/* Move pid from state from to state to. */
static CUresult
step(int pid, unsigned from, unsigned to)
{
	unsigned st = 0;
	CUresult r = read_state(pid, &st);

	if (r != CUDA_SUCCESS)
		return r;
	if (st != from)
		return CUDA_ERROR_ILLEGAL_STATE;
	return write_state(pid, to);
}

CUresult
cuCheckpointProcessGetState(int pid, CUprocessState *state)
{
	unsigned st = 0;
	CUresult r;

	if (!state)
		CK_RET(CUDA_ERROR_INVALID_VALUE);
	r = read_state(pid, &st);
	if (r == CUDA_SUCCESS)
		*state = st;
	CK_RET(r);
}

CUresult
cuCheckpointProcessGetRestoreThreadId(int pid, int *tid)
{
	unsigned st = 0;
	CUresult r;

	if (!tid)
		CK_RET(CUDA_ERROR_INVALID_VALUE);
	r = read_state(pid, &st);
	if (r == CUDA_SUCCESS)
		*tid = pid;
	CK_RET(r);
}

CUresult
cuCheckpointProcessLock(int pid, CUcheckpointLockArgs *args)
{
	(void)args;
	CK_RET(step(pid, CU_PROCESS_STATE_RUNNING, CU_PROCESS_STATE_LOCKED));
}

CUresult
cuCheckpointProcessCheckpoint(int pid, CUcheckpointCheckpointArgs *args)
{
	CUresult r;

	(void)args;
	r = step(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_CHECKPOINTED);
	if (r == CUDA_SUCCESS)
		live_file(pid, true);
	CK_RET(r);
}

CUresult
cuCheckpointProcessRestore(int pid, CUcheckpointRestoreArgs *args)
{
	CUresult r;

	(void)args;
	r = step(pid, CU_PROCESS_STATE_CHECKPOINTED, CU_PROCESS_STATE_LOCKED);
	if (r == CUDA_SUCCESS)
		live_file(pid, false);
	CK_RET(r);
}

CUresult
cuCheckpointProcessUnlock(int pid, CUcheckpointUnlockArgs *args)
{
	(void)args;
	CK_RET(step(pid, CU_PROCESS_STATE_LOCKED, CU_PROCESS_STATE_RUNNING));
}
