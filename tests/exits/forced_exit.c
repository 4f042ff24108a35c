/* Ends a game's thread inside a hooked call, as Wine ends a process's
 * threads (a signal whose handler calls pthread_exit) or as a game cancels
 * one of its own (pthread_cancel), then exits normally: for
 * tests/forced_exit.rs. Without the layer the process exits 0; with it, it
 * must too, with every present logged.
 *
 *   forced_exit CALL HOW
 *
 * CALL: the call the worker thread is inside when it is ended
 *   present           vkQueuePresentKHR
 *   submit            vkQueueSubmit
 *   acquire           vkAcquireNextImageKHR
 *   create_swapchain  vkCreateSwapchainKHR (each frame recreates it)
 *   egl_swap          eglSwapBuffers (GLES 2 on a pbuffer of Mesa's
 *                     surfaceless platform: Xlib's display lock, held by a
 *                     thread ended inside Xlib, would hang libGLX's exit
 *                     handler with or without the layer)
 *   (with the layer's fps_limit set, a present or swap spends most of its
 *   time in the layer's own frame-cap wait)
 * HOW:
 *   signal  SIGUSR2, whose handler calls pthread_exit when the thread is
 *           inside CALL (else it returns and the signal is sent again)
 *   cancel  pthread_cancel, with cancellation enabled only inside CALL:
 *           deferred (it acts at the call's first cancellation point), or
 *           for submit asynchronous (lavapipe's vkQueueSubmit has no
 *           cancellation point). A pbuffer's swap has none either, and an
 *           asynchronous cancel inside glvnd leaves its lock taken (its
 *           exit handler then spins, with or without the layer): the test
 *           ends egl_swap only under the layer's frame cap, where the
 *           thread waits in the layer.
 *
 * The worker renders a cleared frame and presents (or swaps) in a loop; the
 * main thread ends it after 40 presents, joins it, prints
 *   forced_exit: ended inside CALL: yes|no
 *   forced_exit: presents begun B returned R
 * and returns 0 from main, leaving every object alive (the driver's state
 * is whatever the ended thread left, as at a Wine process exit). Exit 2:
 * bad arguments; 3: no window, device or context.
 */
#define _GNU_SOURCE
#define VK_USE_PLATFORM_XLIB_KHR
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES2/gl2.h>
#include <X11/Xlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#define WIDTH 320
#define HEIGHT 240
#define FRAMES_BEFORE_END 40

enum call { PRESENT, SUBMIT, ACQUIRE, CREATE_SWAPCHAIN, EGL_SWAP };
static const char *const CALLS[] = {"present", "submit", "acquire", "create_swapchain", "egl_swap"};
static enum call call;
static int by_signal;

static atomic_int inside, ended_inside, started;
static atomic_long begun, returned;

static Display *dpy;
static Window win;

static void die(const char *what, long code)
{
    printf("forced_exit: %s failed (%ld)\n", what, code);
    fflush(stdout);
    exit(3);
}

#define VK(x)                                                                                      \
    do {                                                                                           \
        VkResult r_ = (x);                                                                         \
        if (r_ < 0) die(#x, r_);                                                                   \
    } while (0)

/* The thread is ended here (signal) when it is inside CALL. */
static void on_signal(int sig)
{
    (void)sig;
    if (atomic_load(&inside)) {
        atomic_store(&ended_inside, 1);
        pthread_exit(NULL);
    }
}

/* Runs while a cancelled thread unwinds. */
static void on_cancel(void *unused)
{
    (void)unused;
    atomic_store(&ended_inside, atomic_load(&inside));
}

/* Around CALL: cancellation is enabled only inside it. */
static void enter(enum call c)
{
    if (c != call) return;
    atomic_store(&inside, 1);
    if (!by_signal) pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
}

static void leave(enum call c)
{
    if (c != call) return;
    if (!by_signal) pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    atomic_store(&inside, 0);
}

/* Vulkan: one device, one queue, a swapchain, a clear per frame. */
static VkDevice dev;
static VkQueue queue;
static VkPhysicalDevice phys;
static VkSurfaceKHR surface;
static VkSwapchainKHR swapchain;
static VkImage images[8];
static uint32_t image_count;
static VkCommandPool pool;
static VkCommandBuffer cmd;
static VkSemaphore acquired, rendered;
static VkFence done;

static void make_swapchain(void)
{
    VkSwapchainKHR old = swapchain;
    VkSwapchainCreateInfoKHR sci = {
        .sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR,
        .surface = surface,
        .minImageCount = 3,
        .imageFormat = VK_FORMAT_B8G8R8A8_UNORM,
        .imageColorSpace = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR,
        .imageExtent = {WIDTH, HEIGHT},
        .imageArrayLayers = 1,
        .imageUsage = VK_IMAGE_USAGE_TRANSFER_DST_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
        .imageSharingMode = VK_SHARING_MODE_EXCLUSIVE,
        .preTransform = VK_SURFACE_TRANSFORM_IDENTITY_BIT_KHR,
        .compositeAlpha = VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR,
        .presentMode = VK_PRESENT_MODE_IMMEDIATE_KHR,
        .clipped = VK_TRUE,
        .oldSwapchain = old,
    };
    enter(CREATE_SWAPCHAIN);
    VK(vkCreateSwapchainKHR(dev, &sci, NULL, &swapchain));
    leave(CREATE_SWAPCHAIN);
    if (old) vkDestroySwapchainKHR(dev, old, NULL);
    image_count = 8;
    VK(vkGetSwapchainImagesKHR(dev, swapchain, &image_count, images));
}

static void vulkan_setup(void)
{
    const char *inst_ext[] = {"VK_KHR_surface", "VK_KHR_xlib_surface"};
    const char *dev_ext[] = {"VK_KHR_swapchain"};
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
                             .pApplicationName = "forced_exit",
                             .apiVersion = VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                                .pApplicationInfo = &app,
                                .enabledExtensionCount = 2,
                                .ppEnabledExtensionNames = inst_ext};
    VkInstance inst;
    uint32_t n = 1;
    float prio = 1.0f;
    VK(vkCreateInstance(&ici, NULL, &inst));
    VK(vkEnumeratePhysicalDevices(inst, &n, &phys));
    if (n < 1) die("vkEnumeratePhysicalDevices: no device", 0);
    VkXlibSurfaceCreateInfoKHR xci = {.sType = VK_STRUCTURE_TYPE_XLIB_SURFACE_CREATE_INFO_KHR,
                                      .dpy = dpy,
                                      .window = win};
    VK(vkCreateXlibSurfaceKHR(inst, &xci, NULL, &surface));
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                   .queueFamilyIndex = 0,
                                   .queueCount = 1,
                                   .pQueuePriorities = &prio};
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                              .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci,
                              .enabledExtensionCount = 1,
                              .ppEnabledExtensionNames = dev_ext};
    VK(vkCreateDevice(phys, &dci, NULL, &dev));
    vkGetDeviceQueue(dev, 0, 0, &queue);
    make_swapchain();
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VK(vkCreateCommandPool(dev, &pci, NULL, &pool));
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VK(vkAllocateCommandBuffers(dev, &cai, &cmd));
    VkSemaphoreCreateInfo sem = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VK(vkCreateSemaphore(dev, &sem, NULL, &acquired));
    VK(vkCreateSemaphore(dev, &sem, NULL, &rendered));
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO,
                             .flags = VK_FENCE_CREATE_SIGNALED_BIT};
    VK(vkCreateFence(dev, &fci, NULL, &done));
}

static void vulkan_frame(long k)
{
    uint32_t index;
    VkImageSubresourceRange all = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkClearColorValue color = {.float32 = {(float)(k % 60) / 60.0f, 0.3f, 0.6f, 1.0f}};
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkResult r;
    if (call == CREATE_SWAPCHAIN) make_swapchain();
    VK(vkWaitForFences(dev, 1, &done, VK_TRUE, UINT64_MAX));
    VK(vkResetFences(dev, 1, &done));
    enter(ACQUIRE);
    r = vkAcquireNextImageKHR(dev, swapchain, UINT64_MAX, acquired, VK_NULL_HANDLE, &index);
    leave(ACQUIRE);
    if (r < 0) die("vkAcquireNextImageKHR", r);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK(vkResetCommandBuffer(cmd, 0));
    VK(vkBeginCommandBuffer(cmd, &bi));
    VkImageMemoryBarrier to_dst = {.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER,
                                   .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                   .oldLayout = VK_IMAGE_LAYOUT_UNDEFINED,
                                   .newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                                   .srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED,
                                   .image = images[index],
                                   .subresourceRange = all};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0,
                         NULL, 0, NULL, 1, &to_dst);
    vkCmdClearColorImage(cmd, images[index], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, &color, 1, &all);
    VkImageMemoryBarrier to_present = to_dst;
    to_present.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_present.dstAccessMask = 0;
    to_present.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    to_present.newLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT,
                         0, 0, NULL, 0, NULL, 1, &to_present);
    VK(vkEndCommandBuffer(cmd));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .waitSemaphoreCount = 1,
                       .pWaitSemaphores = &acquired,
                       .pWaitDstStageMask = &stage,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &cmd,
                       .signalSemaphoreCount = 1,
                       .pSignalSemaphores = &rendered};
    enter(SUBMIT);
    r = vkQueueSubmit(queue, 1, &si, done);
    leave(SUBMIT);
    if (r < 0) die("vkQueueSubmit", r);
    VkPresentInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR,
                           .waitSemaphoreCount = 1,
                           .pWaitSemaphores = &rendered,
                           .swapchainCount = 1,
                           .pSwapchains = &swapchain,
                           .pImageIndices = &index};
    atomic_fetch_add(&begun, 1);
    enter(PRESENT);
    r = vkQueuePresentKHR(queue, &pi);
    leave(PRESENT);
    if (r < 0) die("vkQueuePresentKHR", r);
    atomic_fetch_add(&returned, 1);
}

/* EGL: a GLES 2 context on a pbuffer, made current on the worker, a clear
 * per frame. */
static EGLDisplay egl;
static EGLSurface pbuffer;
static EGLContext gles;

static void egl_setup(void)
{
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    EGLint cfg_attrs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
                          EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
    EGLint pb_attrs[] = {EGL_WIDTH, WIDTH, EGL_HEIGHT, HEIGHT, EGL_NONE};
    EGLint ctx_attrs[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
    EGLConfig cfg;
    EGLint n = 0;
    if (!get_display) die("eglGetProcAddress(eglGetPlatformDisplayEXT)", 0);
    egl = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (egl == EGL_NO_DISPLAY || !eglInitialize(egl, NULL, NULL)) die("eglInitialize", eglGetError());
    if (!eglBindAPI(EGL_OPENGL_ES_API)) die("eglBindAPI", eglGetError());
    if (!eglChooseConfig(egl, cfg_attrs, &cfg, 1, &n) || n < 1) die("eglChooseConfig", eglGetError());
    pbuffer = eglCreatePbufferSurface(egl, cfg, pb_attrs);
    if (pbuffer == EGL_NO_SURFACE) die("eglCreatePbufferSurface", eglGetError());
    gles = eglCreateContext(egl, cfg, EGL_NO_CONTEXT, ctx_attrs);
    if (gles == EGL_NO_CONTEXT) die("eglCreateContext", eglGetError());
}

static void egl_frame(long k)
{
    glClearColor((float)(k % 60) / 60.0f, 0.3f, 0.6f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    atomic_fetch_add(&begun, 1);
    enter(EGL_SWAP);
    eglSwapBuffers(egl, pbuffer);
    leave(EGL_SWAP);
    atomic_fetch_add(&returned, 1);
}

static void *worker(void *unused)
{
    long k;
    (void)unused;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    if (call == SUBMIT) pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
    if (call == EGL_SWAP && !eglMakeCurrent(egl, pbuffer, pbuffer, gles)) die("eglMakeCurrent", eglGetError());
    atomic_store(&started, 1);
    pthread_cleanup_push(on_cancel, NULL);
    for (k = 0;; k++) {
        if (call == EGL_SWAP) egl_frame(k);
        else vulkan_frame(k);
    }
    pthread_cleanup_pop(0);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    struct sigaction sa;
    int i;
    if (argc != 3) {
        fprintf(stderr, "usage: forced_exit present|submit|acquire|create_swapchain|egl_swap signal|cancel\n");
        return 2;
    }
    for (i = 0; i < 5 && strcmp(argv[1], CALLS[i]); i++) {
    }
    if (i == 5 || (strcmp(argv[2], "signal") && strcmp(argv[2], "cancel"))) {
        fprintf(stderr, "forced_exit: bad arguments\n");
        return 2;
    }
    call = (enum call)i;
    by_signal = !strcmp(argv[2], "signal");
    if (call == EGL_SWAP) {
        egl_setup();
    } else {
        dpy = XOpenDisplay(NULL);
        if (!dpy) die("XOpenDisplay", 0);
        win = XCreateSimpleWindow(dpy, DefaultRootWindow(dpy), 0, 0, WIDTH, HEIGHT, 0, 0, 0);
        XMapWindow(dpy, win);
        XSync(dpy, False);
        vulkan_setup();
    }

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGUSR2, &sa, NULL);
    if (pthread_create(&t, NULL, worker, NULL)) die("pthread_create", 0);
    while (atomic_load(&returned) < FRAMES_BEFORE_END) usleep(1000);
    if (by_signal) {
        /* Sent while the thread is inside CALL; again until it ends there. */
        while (pthread_tryjoin_np(t, NULL)) {
            if (atomic_load(&inside)) {
                pthread_kill(t, SIGUSR2);
                usleep(5000);
            }
        }
    } else {
        pthread_cancel(t);
        pthread_join(t, NULL);
    }
    printf("forced_exit: ended inside %s: %s\n", CALLS[call], atomic_load(&ended_inside) ? "yes" : "no");
    printf("forced_exit: presents begun %ld returned %ld\n", atomic_load(&begun), atomic_load(&returned));
    fflush(stdout);
    return 0;
}
