/* SDL's way with Xlib for tests/gl_games.rs (issue 40): libX11 dlopen'ed
 * RTLD_LOCAL (the program links neither Xlib nor GL), a window made and
 * then destroyed through the XDestroyWindow that dlsym hands out (the GL
 * library's, preloaded). Exit 0 when the window is really gone, 1 when it
 * still exists. */
#include <dlfcn.h>
#include <stdio.h>

typedef void *(*OpenDisplay)(const char *);
typedef unsigned long (*DefaultRoot)(void *);
typedef unsigned long (*CreateSimpleWindow)(void *, unsigned long, int, int, unsigned, unsigned,
                                            unsigned, unsigned long, unsigned long);
typedef int (*WindowFn)(void *, unsigned long);
typedef int (*Sync)(void *, int);
typedef void *(*SetErrorHandler)(int (*)(void *, void *));
typedef int (*GetGeometry)(void *, unsigned long, unsigned long *, int *, int *, unsigned *,
                           unsigned *, unsigned *, unsigned *);

static int errors;
static int on_error(void *dpy, void *ev) {
    (void)dpy;
    (void)ev;
    errors++;
    return 0;
}

int main(void) {
    void *x = dlopen("libX11.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!x) {
        fprintf(stderr, "dlopen libX11: %s\n", dlerror());
        return 2;
    }
    OpenDisplay open = (OpenDisplay)dlsym(x, "XOpenDisplay");
    DefaultRoot root = (DefaultRoot)dlsym(x, "XDefaultRootWindow");
    CreateSimpleWindow create = (CreateSimpleWindow)dlsym(x, "XCreateSimpleWindow");
    WindowFn map = (WindowFn)dlsym(x, "XMapWindow");
    WindowFn destroy = (WindowFn)dlsym(x, "XDestroyWindow");
    Sync sync = (Sync)dlsym(x, "XSync");
    SetErrorHandler handler = (SetErrorHandler)dlsym(x, "XSetErrorHandler");
    GetGeometry geometry = (GetGeometry)dlsym(x, "XGetGeometry");
    void *dpy = open(NULL);
    if (!dpy) {
        fprintf(stderr, "no X display\n");
        return 2;
    }
    handler(on_error);
    unsigned long w = create(dpy, root(dpy), 0, 0, 64, 64, 0, 0, 0);
    map(dpy, w);
    sync(dpy, 0);
    destroy(dpy, w);
    sync(dpy, 0);
    unsigned long r;
    int gx, gy;
    unsigned gw, gh, b, d;
    int ok = geometry(dpy, w, &r, &gx, &gy, &gw, &gh, &b, &d);
    sync(dpy, 0);
    if (ok && errors == 0) {
        printf("x11_local: the window still exists\n");
        return 1;
    }
    printf("x11_local: the window is gone\n");
    return 0;
}
