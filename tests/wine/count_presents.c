/* A second Vulkan layer for the Proton tests (tests/wine_proton.rs): it
 * counts every vkQueuePresentKHR that passes it, independently of
 * steadyhud, into a file mapped shared (COUNT_PRESENTS_OUT), so the count
 * survives any end of the process. Two 64-bit counters: presents begun and
 * presents returned. Enabled as the explicit layer
 * VK_LAYER_STEADYHUD_TEST_count_presents.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#define EXPORT __attribute__((visibility("default")))

static PFN_vkGetInstanceProcAddr next_gipa;
static PFN_vkGetDeviceProcAddr next_gdpa;
static PFN_vkQueuePresentKHR next_present;
static volatile long long *counts;

static void map_counts(void)
{
    const char *path = getenv("COUNT_PRESENTS_OUT");
    int fd;
    if (!path || counts) return;
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 16)) return;
    counts = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (counts == MAP_FAILED) counts = NULL;
    close(fd);
}

static VKAPI_ATTR VkResult VKAPI_CALL present(VkQueue q, const VkPresentInfoKHR *info)
{
    VkResult r;
    if (counts) __atomic_add_fetch(&counts[0], 1, __ATOMIC_SEQ_CST);
    r = next_present(q, info);
    if (counts) __atomic_add_fetch(&counts[1], 1, __ATOMIC_SEQ_CST);
    return r;
}

static VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo *ci,
                                                      const VkAllocationCallbacks *a, VkInstance *out)
{
    VkLayerInstanceCreateInfo *link = (VkLayerInstanceCreateInfo *)ci->pNext;
    PFN_vkCreateInstance create;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerInstanceCreateInfo *)link->pNext;
    if (!link) return VK_ERROR_INITIALIZATION_FAILED;
    next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    create = (PFN_vkCreateInstance)next_gipa(VK_NULL_HANDLE, "vkCreateInstance");
    map_counts();
    return create(ci, a, out);
}

static VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice pd, const VkDeviceCreateInfo *ci,
                                                    const VkAllocationCallbacks *a, VkDevice *out)
{
    VkLayerDeviceCreateInfo *link = (VkLayerDeviceCreateInfo *)ci->pNext;
    PFN_vkCreateDevice create;
    VkResult r;
    while (link && !(link->sType == VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO &&
                     link->function == VK_LAYER_LINK_INFO))
        link = (VkLayerDeviceCreateInfo *)link->pNext;
    if (!link) return VK_ERROR_INITIALIZATION_FAILED;
    PFN_vkGetInstanceProcAddr gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
    next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
    link->u.pLayerInfo = link->u.pLayerInfo->pNext;
    create = (PFN_vkCreateDevice)gipa(VK_NULL_HANDLE, "vkCreateDevice");
    r = create(pd, ci, a, out);
    if (r == VK_SUCCESS) next_present = (PFN_vkQueuePresentKHR)next_gdpa(*out, "vkQueuePresentKHR");
    return r;
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL count_gdpa(VkDevice d, const char *name)
{
    if (!strcmp(name, "vkQueuePresentKHR")) return (PFN_vkVoidFunction)present;
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)count_gdpa;
    return next_gdpa(d, name);
}

EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL count_gipa(VkInstance i, const char *name)
{
    if (!strcmp(name, "vkCreateInstance")) return (PFN_vkVoidFunction)create_instance;
    if (!strcmp(name, "vkCreateDevice")) return (PFN_vkVoidFunction)create_device;
    if (!strcmp(name, "vkGetInstanceProcAddr")) return (PFN_vkVoidFunction)count_gipa;
    if (!strcmp(name, "vkGetDeviceProcAddr")) return (PFN_vkVoidFunction)count_gdpa;
    if (!strcmp(name, "vkQueuePresentKHR")) return (PFN_vkVoidFunction)present;
    return next_gipa ? next_gipa(i, name) : NULL;
}

EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface *v)
{
    if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
    v->pfnGetInstanceProcAddr = count_gipa;
    v->pfnGetDeviceProcAddr = count_gdpa;
    v->pfnGetPhysicalDeviceProcAddr = NULL;
    return VK_SUCCESS;
}
