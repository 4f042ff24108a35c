/* A stand-in for libnvidia-ml.so.1 with the functions steadyhud calls
 * (prototypes and constants as NVIDIA's NVML API reference documents them,
 * written here from that reference). One GPU, at PCI bus id
 * 00000000:01:00.0, with fixed readings the test checks; it counts
 * nvmlInit_v2 / nvmlShutdown calls in exported globals. Built by
 * tests/sensors_nvml.rs with `gcc -shared -fPIC`. */
#include <string.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu; unsigned int memory; } nvmlUtilization_t;
typedef struct { unsigned long long total; unsigned long long free; unsigned long long used; } nvmlMemory_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND 6

int fake_nvml_inits = 0;
int fake_nvml_shutdowns = 0;
static int live = 0;
static int the_device;

nvmlReturn_t nvmlInit_v2(void) { fake_nvml_inits++; live++; return NVML_SUCCESS; }
nvmlReturn_t nvmlShutdown(void) {
    if (live == 0) return NVML_ERROR_UNINITIALIZED;
    fake_nvml_shutdowns++; live--; return NVML_SUCCESS;
}

static int ok(nvmlDevice_t d) { return live > 0 && d == (nvmlDevice_t)&the_device; }

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvmlDevice_t *d) {
    if (live == 0) return NVML_ERROR_UNINITIALIZED;
    if (!id || !d) return NVML_ERROR_INVALID_ARGUMENT;
    if (strcmp(id, "00000000:01:00.0") != 0) return NVML_ERROR_NOT_FOUND;
    *d = (nvmlDevice_t)&the_device;
    return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
    if (!ok(d)) return NVML_ERROR_INVALID_ARGUMENT;
    u->gpu = 97; u->memory = 40; return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
    if (!ok(d)) return NVML_ERROR_INVALID_ARGUMENT;
    m->total = 8ULL << 30; m->used = 6ULL << 30; m->free = m->total - m->used; return NVML_SUCCESS;
}
/* nvmlClockType_t: NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 */
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz) {
    if (!ok(d)) return NVML_ERROR_INVALID_ARGUMENT;
    *mhz = type == 0 ? 2415 : 10501; return NVML_SUCCESS;
}
/* nvmlTemperatureSensors_t: NVML_TEMPERATURE_GPU = 0 */
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c) {
    if (!ok(d) || sensor != 0) return NVML_ERROR_INVALID_ARGUMENT;
    *c = 78; return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) {
    if (!ok(d)) return NVML_ERROR_INVALID_ARGUMENT;
    *mw = 212500; return NVML_SUCCESS;
}
/* SwPowerCap (0x4) | HwThermalSlowdown (0x40) | GpuIdle (0x1, not a throttle) */
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r) {
    if (!ok(d)) return NVML_ERROR_INVALID_ARGUMENT;
    *r = 0x4ULL | 0x40ULL | 0x1ULL; return NVML_SUCCESS;
}
