/* Counts the GL state queries (glGet*v, glIsEnabled*) made between two
 * swaps, for the GL library's tests (tests/gl_games.rs): preloaded after
 * libsteadyhud_gl.so, it wraps glXGetProcAddress(ARB) and eglGetProcAddress
 * as a tool would, so the query functions the HUD looks up are counting
 * wrappers, and glXSwapBuffers/eglSwapBuffers (which steadyhud calls after
 * drawing its HUD) close each swap's count. At exit it writes one line per
 * swap, the number of queries before it, to the file named by
 * COUNT_GETS_OUT. Each query with a threaded GL (Mesa's glthread, NVIDIA's
 * threaded optimisation) waits for the game's queued commands. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SWAPS 100000
static unsigned counts[MAX_SWAPS];
static unsigned long swaps;
static unsigned long pending;

static void count(void) { __atomic_add_fetch(&pending, 1, __ATOMIC_RELAXED); }

static void swapped(void) {
    unsigned long n = __atomic_exchange_n(&pending, 0, __ATOMIC_RELAXED);
    if (swaps < MAX_SWAPS)
        counts[swaps] = (unsigned)n;
    swaps++;
}

/* The next definition of `name`; a game that opened libGL or libEGL itself
 * (RTLD_LOCAL, as SDL and the GL test program do) keeps it out of
 * RTLD_NEXT's reach, so then the library it opened. */
static void *next_of(const char *name, const char *lib) {
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        /* glibc's own dlsym: steadyhud's would hand out its hook. */
        void *(*libc_dlsym)(void *, const char *) = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!libc_dlsym)
            libc_dlsym = dlvsym(RTLD_NEXT, "dlsym", sizeof(void *) == 8 ? "GLIBC_2.2.5" : "GLIBC_2.0");
        void *h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
        p = h && libc_dlsym ? libc_dlsym(h, name) : NULL;
    }
    return p;
}

typedef void (*get_fn)(unsigned, void *);
typedef void (*get_i_fn)(unsigned, unsigned, void *);
typedef unsigned char (*is_fn)(unsigned);
typedef unsigned char (*is_i_fn)(unsigned, unsigned);

/* One wrapper per query function, each with the real one beside it. */
#define GET(name) \
    static get_fn real_##name; \
    static void wrap_##name(unsigned p, void *out) { count(); real_##name(p, out); }
#define GET_I(name) \
    static get_i_fn real_##name; \
    static void wrap_##name(unsigned p, unsigned i, void *out) { count(); real_##name(p, i, out); }
GET(glGetIntegerv)
GET(glGetFloatv)
GET(glGetBooleanv)
GET(glGetDoublev)
GET(glGetInteger64v)
GET_I(glGetIntegeri_v)
GET_I(glGetFloati_v)
GET_I(glGetBooleani_v)
static is_fn real_glIsEnabled;
static unsigned char wrap_glIsEnabled(unsigned c) { count(); return real_glIsEnabled(c); }
static is_i_fn real_glIsEnabledi;
static unsigned char wrap_glIsEnabledi(unsigned c, unsigned i) { count(); return real_glIsEnabledi(c, i); }

/* The wrapper for `name` given the real `p`, or `p` itself. */
static void *wrap(const char *name, void *p) {
    if (!p)
        return p;
#define W(n) if (!strcmp(name, #n)) { real_##n = (void *)p; return (void *)wrap_##n; }
    W(glGetIntegerv) W(glGetFloatv) W(glGetBooleanv) W(glGetDoublev) W(glGetInteger64v)
    W(glGetIntegeri_v) W(glGetFloati_v) W(glGetBooleani_v) W(glIsEnabled) W(glIsEnabledi)
#undef W
    return p;
}

typedef void *(*proc_fn)(const char *);
#define PROC(name, lib) \
    void *name(const char *n) { \
        static proc_fn next; \
        if (!next) next = (proc_fn)next_of(#name, lib); \
        return next ? wrap(n, next(n)) : NULL; \
    }
PROC(glXGetProcAddressARB, "libGL.so.1")
PROC(glXGetProcAddress, "libGL.so.1")
PROC(eglGetProcAddress, "libEGL.so.1")

void glXSwapBuffers(void *dpy, unsigned long drawable) {
    static void (*next)(void *, unsigned long);
    if (!next)
        next = (void (*)(void *, unsigned long))next_of("glXSwapBuffers", "libGL.so.1");
    swapped();
    next(dpy, drawable);
}

unsigned eglSwapBuffers(void *dpy, void *surface) {
    static unsigned (*next)(void *, void *);
    if (!next)
        next = (unsigned (*)(void *, void *))next_of("eglSwapBuffers", "libEGL.so.1");
    swapped();
    return next(dpy, surface);
}

__attribute__((destructor)) static void write_counts(void) {
    const char *out = getenv("COUNT_GETS_OUT");
    FILE *f = out && swaps ? fopen(out, "w") : NULL;
    if (!f)
        return;
    for (unsigned long i = 0; i < swaps && i < MAX_SWAPS; i++)
        fprintf(f, "%u\n", counts[i]);
    fclose(f);
}
