/*
 * NVML's return codes: their names, as scenarios spell them, and the text
 * of nvmlErrorString, as NVIDIA's library words it.
 */
#include "fake.h"

#include <string.h>

#include "nvml_api.h"

static const struct nvml_error {
	nvmlReturn_t code;
	const char *name;
	const char *text;
} nvml_errors[] = {
	{ NVML_SUCCESS, NULL, "Success" },
	{ NVML_ERROR_UNINITIALIZED, "UNINITIALIZED", "Uninitialized" },
	{ NVML_ERROR_INVALID_ARGUMENT, "INVALID_ARGUMENT", "Invalid Argument" },
	{ NVML_ERROR_NOT_SUPPORTED, "NOT_SUPPORTED", "Not Supported" },
	{ NVML_ERROR_NO_PERMISSION, "NO_PERMISSION", "Insufficient Permissions" },
	{ NVML_ERROR_ALREADY_INITIALIZED, "ALREADY_INITIALIZED", "Already Initialized" },
	{ NVML_ERROR_NOT_FOUND, "NOT_FOUND", "Not Found" },
	{ NVML_ERROR_INSUFFICIENT_SIZE, "INSUFFICIENT_SIZE", "Insufficient Size" },
	{ NVML_ERROR_INSUFFICIENT_POWER, "INSUFFICIENT_POWER", "Insufficient External Power" },
	{ NVML_ERROR_DRIVER_NOT_LOADED, "DRIVER_NOT_LOADED", "Driver Not Loaded" },
	{ NVML_ERROR_TIMEOUT, "TIMEOUT", "Timeout" },
	{ NVML_ERROR_IRQ_ISSUE, "IRQ_ISSUE", "Interrupt Request Issue" },
	{ NVML_ERROR_LIBRARY_NOT_FOUND, "LIBRARY_NOT_FOUND", "NVML Shared Library Not Found" },
	{ NVML_ERROR_FUNCTION_NOT_FOUND, "FUNCTION_NOT_FOUND", "Function Not Found" },
	{ NVML_ERROR_CORRUPTED_INFOROM, "CORRUPTED_INFOROM", "Corrupted infoROM" },
	{ NVML_ERROR_GPU_IS_LOST, "GPU_IS_LOST", "GPU is lost" },
	{ NVML_ERROR_RESET_REQUIRED, "RESET_REQUIRED", "GPU requires reset" },
	{ NVML_ERROR_OPERATING_SYSTEM, "OPERATING_SYSTEM",
	  "GPU access blocked by the operating system" },
	{ NVML_ERROR_LIB_RM_VERSION_MISMATCH, "LIB_RM_VERSION_MISMATCH",
	  "Driver/library version mismatch" },
	{ NVML_ERROR_IN_USE, "IN_USE", "In use by another client" },
	{ NVML_ERROR_MEMORY, "MEMORY", "Insufficient Memory" },
	{ NVML_ERROR_NO_DATA, "NO_DATA", "No data" },
	{ NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, "VGPU_ECC_NOT_SUPPORTED",
	  "The requested vgpu operation is not available on target device, because ECC is "
	  "enabled" },
	{ NVML_ERROR_INSUFFICIENT_RESOURCES, "INSUFFICIENT_RESOURCES", "Insufficient Resources" },
	{ NVML_ERROR_FREQ_NOT_SUPPORTED, "FREQ_NOT_SUPPORTED", "Frequency not supported" },
	{ NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "ARGUMENT_VERSION_MISMATCH",
	  "Argument version mismatch" },
	{ NVML_ERROR_DEPRECATED, "DEPRECATED", "Requested functionality has been deprecated" },
	{ NVML_ERROR_NOT_READY, "NOT_READY", "Not Ready" },
	{ NVML_ERROR_GPU_NOT_FOUND, "GPU_NOT_FOUND", "GPU not found" },
	{ NVML_ERROR_INVALID_STATE, "INVALID_STATE", "Invalid state" },
	{ NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, "RESET_TYPE_NOT_SUPPORTED",
	  "Reset type not supported" },
	{ NVML_ERROR_UNKNOWN, "UNKNOWN", "Unknown Error" },
};

#define NR_ERRORS (sizeof(nvml_errors) / sizeof(nvml_errors[0]))

bool
nvml_error_by_name(const char *name, nvmlReturn_t *code)
{
	for (size_t i = 0; i < NR_ERRORS; i++) {
		if (nvml_errors[i].name && !strcmp(nvml_errors[i].name, name)) {
			*code = nvml_errors[i].code;
			return true;
		}
	}
	return false;
}

/* Needs no nvmlInit and is not logged: it answers no call, it names one. */
FAKE_API const char *
nvmlErrorString(nvmlReturn_t result)
{
	for (size_t i = 0; i < NR_ERRORS; i++)
		if (nvml_errors[i].code == result)
			return nvml_errors[i].text;
	return "Unknown Error";
}
