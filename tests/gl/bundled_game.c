/* A GLX game for tests/gl_games.rs (issue 40) that links the system's
 * libGL (its context is made there) and swaps through a bundled libGL it
 * dlopens RTLD_LOCAL by path (argv[1]) and looks glXSwapBuffers up in
 * with dlsym: the swap must reach the bundled copy. Swaps argv[2] times
 * at about 60 per second. */
#include <GL/glx.h>
#include <X11/Xlib.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bundled_game LIB SWAPS\n");
        return 2;
    }
    Display *dpy = XOpenDisplay(NULL);
    if (!dpy) {
        fprintf(stderr, "no X display\n");
        return 1;
    }
    int attrs[] = {GLX_RGBA, GLX_DOUBLEBUFFER, GLX_RED_SIZE, 8, None};
    XVisualInfo *vi = glXChooseVisual(dpy, DefaultScreen(dpy), attrs);
    if (!vi) {
        fprintf(stderr, "no visual\n");
        return 1;
    }
    Window root = RootWindow(dpy, vi->screen);
    XSetWindowAttributes swa = {0};
    swa.colormap = XCreateColormap(dpy, root, vi->visual, AllocNone);
    Window win = XCreateWindow(dpy, root, 0, 0, 320, 240, 0, vi->depth, InputOutput,
                               vi->visual, CWColormap, &swa);
    XMapWindow(dpy, win);
    XSync(dpy, False);
    GLXContext ctx = glXCreateContext(dpy, vi, NULL, True);
    glXMakeCurrent(dpy, win, ctx);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    void (*swap)(Display *, GLXDrawable) =
        (void (*)(Display *, GLXDrawable))dlsym(lib, "glXSwapBuffers");
    if (!swap) {
        fprintf(stderr, "no glXSwapBuffers in %s\n", argv[1]);
        return 1;
    }
    int n = atoi(argv[2]);
    for (int i = 0; i < n; i++) {
        glClearColor(0.2f, 0.3f, 0.6f, 1.0f);
        glClear(GL_COLOR_BUFFER_BIT);
        swap(dpy, win);
        usleep(16000);
    }
    printf("bundled_game: swapped %d times\n", n);
    glXMakeCurrent(dpy, None, NULL);
    glXDestroyContext(dpy, ctx);
    XDestroyWindow(dpy, win);
    XCloseDisplay(dpy);
    return 0;
}
