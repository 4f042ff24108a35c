/* A second tool's GL hook, for the GL library's tests
 * (tests/gl_games.rs): it wraps glXSwapBuffers and eglSwapBuffers the way
 * overlay tools do (the next definition through dlsym(RTLD_NEXT, ...)),
 * counts every call, and writes the counts to the file named by
 * COUNT_SWAPS_OUT at exit. Preloaded before or after libsteadyhud_gl.so,
 * it counts the game's swaps independently of steadyhud.
 * COUNT_SWAPS_DROP=1 drops every swap after counting it (scripts/gl-cost.sh:
 * what a hook before it costs on its own, without the real swap's work). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long glx_swaps, egl_swaps;
static int drop = -1;

static int dropping(void) {
    if (drop < 0) {
        const char *d = getenv("COUNT_SWAPS_DROP");
        drop = d && d[0] == '1';
    }
    return drop;
}

void glXSwapBuffers(void *dpy, unsigned long drawable) {
    static void (*next)(void *, unsigned long);
    if (!next)
        next = (void (*)(void *, unsigned long))dlsym(RTLD_NEXT, "glXSwapBuffers");
    __atomic_add_fetch(&glx_swaps, 1, __ATOMIC_RELAXED);
    if (!dropping())
        next(dpy, drawable);
}

unsigned eglSwapBuffers(void *dpy, void *surface) {
    static unsigned (*next)(void *, void *);
    if (!next)
        next = (unsigned (*)(void *, void *))dlsym(RTLD_NEXT, "eglSwapBuffers");
    __atomic_add_fetch(&egl_swaps, 1, __ATOMIC_RELAXED);
    return dropping() ? 1 : next(dpy, surface);
}

__attribute__((destructor)) static void write_counts(void) {
    /* Only a process that swapped writes: a launcher that carries the
     * same LD_PRELOAD (steadyhud run) exits after the game. */
    const char *out = getenv("COUNT_SWAPS_OUT");
    FILE *f = out && (glx_swaps || egl_swaps) ? fopen(out, "w") : NULL;
    if (!f)
        return;
    fprintf(f, "glx %lu\negl %lu\n", glx_swaps, egl_swaps);
    fclose(f);
}
