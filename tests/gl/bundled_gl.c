/* A game's bundled libGL for tests/gl_games.rs (issue 40): it only
 * counts glXSwapBuffers calls into the file BUNDLED_SWAPS_OUT (a 64-bit
 * count, rewritten at each call). The game links the system's libGL too
 * and makes its context there; this copy is dlopen'ed RTLD_LOCAL and its
 * swap taken with dlsym, as a game with a bundled libGL does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t swaps;

void glXSwapBuffers(void *dpy, unsigned long drawable) {
    (void)dpy;
    (void)drawable;
    swaps++;
    const char *out = getenv("BUNDLED_SWAPS_OUT");
    FILE *f = out ? fopen(out, "wb") : NULL;
    if (f) {
        fwrite(&swaps, sizeof swaps, 1, f);
        fclose(f);
    }
}
