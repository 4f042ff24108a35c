/* An empty shared library, installed as a fake `libGL.so.1` on
 * LD_LIBRARY_PATH by tests/gl_games.rs (issue 40): a process whose
 * libGL has no Xlib behind it. */
int steadyhud_test_empty_library;
