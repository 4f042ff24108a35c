/* A Windows game in miniature, for the Proton path (tests/wine_proton.rs):
 * the main thread owns the window and pumps its messages, a render thread
 * clears and presents through Direct3D 9, 11 (both DXVK) or 12 (Wine's
 * vkd3d), and once FRAMES presents have returned the process ends the way
 * the chosen exit says, while the render thread goes on presenting, so it
 * may be inside a present (and inside the layer) at that moment.
 *
 *   present.exe API FRAMES EXIT COUNTS [HOLD_MS]
 *
 * API:    d3d9 | d3d11 | d3d12
 * EXIT:   exit       ExitProcess(0) from the main thread
 *         close      WM_CLOSE to the window: the game stops its renderer,
 *                    destroys the window and returns 0 from main
 *         terminate  TerminateProcess(self, 3) from the main thread
 *         hold       keeps presenting (the test ends it: SIGTERM)
 * COUNTS: a file (Windows path) mapped shared: two 64-bit counters, the
 *         presents begun and the presents returned. They are written around
 *         every Present, so they survive any end of the process and tell
 *         the test exactly how many presents there were (within the one in
 *         flight).
 * HOLD_MS: with EXIT hold, how long to keep presenting (default: forever).
 *
 * Prints `presents N` (the presents returned so far) before it exits.
 * Exit codes: as the exit says; 2 for bad arguments; 4 when the graphics
 * API could not be set up (its HRESULT is printed).
 *
 * Built in the sid root by the test: x86_64-w64-mingw32-gcc -O2 present.c
 *   -o present.exe -ld3d9 -ld3d11 -ld3d12 -ldxgi -luuid
 */
#define INITGUID
#define COBJMACROS
#define WIDL_EXPLICIT_AGGREGATE_RETURNS
#include <windows.h>
#include <d3d9.h>
#include <d3d11.h>
#include <d3d12.h>
#include <dxgi1_4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 640
#define HEIGHT 480

static HWND window;
static volatile LONG stop_rendering;
static volatile LONG64 *counts; /* [0] begun, [1] returned */
static HANDLE frames_reached, render_failed;
static long frames_wanted;
static int api; /* 9, 11, 12 */

static void fail(const char *what, HRESULT hr)
{
    printf("present.exe: %s failed: 0x%08lx\n", what, (unsigned long)hr);
    fflush(stdout);
    SetEvent(render_failed);
    ExitThread(4);
}

/* One present, counted on both sides. */
static void counted(void)
{
    InterlockedIncrement64((volatile LONG64 *)&counts[0]);
}
static void returned(void)
{
    LONG64 n = InterlockedIncrement64((volatile LONG64 *)&counts[1]);
    if (n == frames_wanted) SetEvent(frames_reached);
}

static float shade(LONG64 n, int k)
{
    return (float)((n * (k + 3)) % 256) / 255.0f;
}

static void run_d3d9(void)
{
    IDirect3D9 *d3d = Direct3DCreate9(D3D_SDK_VERSION);
    IDirect3DDevice9 *dev;
    D3DPRESENT_PARAMETERS pp;
    HRESULT hr;
    if (!d3d) fail("Direct3DCreate9", E_FAIL);
    memset(&pp, 0, sizeof pp);
    pp.Windowed = TRUE;
    pp.SwapEffect = D3DSWAPEFFECT_DISCARD;
    pp.BackBufferFormat = D3DFMT_X8R8G8B8;
    pp.BackBufferWidth = WIDTH;
    pp.BackBufferHeight = HEIGHT;
    pp.BackBufferCount = 1;
    pp.hDeviceWindow = window;
    pp.PresentationInterval = D3DPRESENT_INTERVAL_IMMEDIATE;
    hr = IDirect3D9_CreateDevice(d3d, D3DADAPTER_DEFAULT, D3DDEVTYPE_HAL, window,
                                 D3DCREATE_HARDWARE_VERTEXPROCESSING | D3DCREATE_MULTITHREADED,
                                 &pp, &dev);
    if (FAILED(hr)) fail("IDirect3D9::CreateDevice", hr);
    while (!stop_rendering) {
        LONG64 n = counts[1];
        IDirect3DDevice9_Clear(dev, 0, NULL, D3DCLEAR_TARGET,
                               D3DCOLOR_XRGB((int)(shade(n, 0) * 255), 96, 160), 1.0f, 0);
        IDirect3DDevice9_BeginScene(dev);
        IDirect3DDevice9_EndScene(dev);
        counted();
        hr = IDirect3DDevice9_Present(dev, NULL, NULL, NULL, NULL);
        if (FAILED(hr)) fail("IDirect3DDevice9::Present", hr);
        returned();
    }
    IDirect3DDevice9_Release(dev);
    IDirect3D9_Release(d3d);
}

static DXGI_SWAP_CHAIN_DESC1 flip_desc(void)
{
    DXGI_SWAP_CHAIN_DESC1 d;
    memset(&d, 0, sizeof d);
    d.Width = WIDTH;
    d.Height = HEIGHT;
    d.Format = DXGI_FORMAT_R8G8B8A8_UNORM;
    d.SampleDesc.Count = 1;
    d.BufferUsage = DXGI_USAGE_RENDER_TARGET_OUTPUT;
    d.BufferCount = 2;
    d.SwapEffect = DXGI_SWAP_EFFECT_FLIP_DISCARD;
    return d;
}

static void run_d3d11(void)
{
    ID3D11Device *dev;
    ID3D11DeviceContext *ctx;
    IDXGIFactory2 *factory;
    IDXGISwapChain1 *swap;
    ID3D11Texture2D *back;
    ID3D11RenderTargetView *rtv;
    DXGI_SWAP_CHAIN_DESC1 desc = flip_desc();
    HRESULT hr;
    hr = D3D11CreateDevice(NULL, D3D_DRIVER_TYPE_HARDWARE, NULL, 0, NULL, 0, D3D11_SDK_VERSION,
                           &dev, NULL, &ctx);
    if (FAILED(hr)) fail("D3D11CreateDevice", hr);
    hr = CreateDXGIFactory1(&IID_IDXGIFactory2, (void **)&factory);
    if (FAILED(hr)) fail("CreateDXGIFactory1", hr);
    hr = IDXGIFactory2_CreateSwapChainForHwnd(factory, (IUnknown *)dev, window, &desc, NULL, NULL,
                                               &swap);
    if (FAILED(hr)) fail("IDXGIFactory2::CreateSwapChainForHwnd", hr);
    hr = IDXGISwapChain1_GetBuffer(swap, 0, &IID_ID3D11Texture2D, (void **)&back);
    if (FAILED(hr)) fail("IDXGISwapChain1::GetBuffer", hr);
    hr = ID3D11Device_CreateRenderTargetView(dev, (ID3D11Resource *)back, NULL, &rtv);
    if (FAILED(hr)) fail("ID3D11Device::CreateRenderTargetView", hr);
    while (!stop_rendering) {
        LONG64 n = counts[1];
        float c[4] = {shade(n, 0), 0.38f, 0.63f, 1.0f};
        /* Flip model: the view of buffer 0 is the current back buffer. */
        ID3D11DeviceContext_OMSetRenderTargets(ctx, 1, &rtv, NULL);
        ID3D11DeviceContext_ClearRenderTargetView(ctx, rtv, c);
        counted();
        hr = IDXGISwapChain1_Present(swap, 0, 0);
        if (FAILED(hr)) fail("IDXGISwapChain1::Present", hr);
        returned();
    }
    ID3D11RenderTargetView_Release(rtv);
    ID3D11Texture2D_Release(back);
    IDXGISwapChain1_Release(swap);
    IDXGIFactory2_Release(factory);
    ID3D11DeviceContext_Release(ctx);
    ID3D11Device_Release(dev);
}

static void run_d3d12(void)
{
    ID3D12Device *dev;
    ID3D12CommandQueue *queue;
    ID3D12CommandAllocator *alloc;
    ID3D12GraphicsCommandList *list;
    ID3D12DescriptorHeap *heap;
    ID3D12Resource *buffers[2];
    ID3D12Fence *fence;
    IDXGIFactory4 *factory;
    IDXGISwapChain1 *swap1;
    IDXGISwapChain3 *swap;
    D3D12_COMMAND_QUEUE_DESC qd;
    D3D12_DESCRIPTOR_HEAP_DESC hd;
    D3D12_CPU_DESCRIPTOR_HANDLE base;
    DXGI_SWAP_CHAIN_DESC1 desc = flip_desc();
    UINT step, i;
    UINT64 fence_value = 0;
    HANDLE fence_event = CreateEventA(NULL, FALSE, FALSE, NULL);
    HRESULT hr;

    hr = D3D12CreateDevice(NULL, D3D_FEATURE_LEVEL_11_0, &IID_ID3D12Device, (void **)&dev);
    if (FAILED(hr)) fail("D3D12CreateDevice", hr);
    memset(&qd, 0, sizeof qd);
    qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
    hr = ID3D12Device_CreateCommandQueue(dev, &qd, &IID_ID3D12CommandQueue, (void **)&queue);
    if (FAILED(hr)) fail("ID3D12Device::CreateCommandQueue", hr);
    hr = CreateDXGIFactory2(0, &IID_IDXGIFactory4, (void **)&factory);
    if (FAILED(hr)) fail("CreateDXGIFactory2", hr);
    hr = IDXGIFactory4_CreateSwapChainForHwnd(factory, (IUnknown *)queue, window, &desc, NULL, NULL,
                                               &swap1);
    if (FAILED(hr)) fail("IDXGIFactory4::CreateSwapChainForHwnd", hr);
    hr = IDXGISwapChain1_QueryInterface(swap1, &IID_IDXGISwapChain3, (void **)&swap);
    if (FAILED(hr)) fail("IDXGISwapChain1::QueryInterface(IDXGISwapChain3)", hr);
    memset(&hd, 0, sizeof hd);
    hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_RTV;
    hd.NumDescriptors = 2;
    hr = ID3D12Device_CreateDescriptorHeap(dev, &hd, &IID_ID3D12DescriptorHeap, (void **)&heap);
    if (FAILED(hr)) fail("ID3D12Device::CreateDescriptorHeap", hr);
    /* Returned through a pointer: the C ABI of an aggregate return. */
    heap->lpVtbl->GetCPUDescriptorHandleForHeapStart(heap, &base);
    step = ID3D12Device_GetDescriptorHandleIncrementSize(dev, D3D12_DESCRIPTOR_HEAP_TYPE_RTV);
    for (i = 0; i < 2; i++) {
        D3D12_CPU_DESCRIPTOR_HANDLE h = {base.ptr + i * step};
        hr = IDXGISwapChain3_GetBuffer(swap, i, &IID_ID3D12Resource, (void **)&buffers[i]);
        if (FAILED(hr)) fail("IDXGISwapChain3::GetBuffer", hr);
        ID3D12Device_CreateRenderTargetView(dev, buffers[i], NULL, h);
    }
    hr = ID3D12Device_CreateCommandAllocator(dev, D3D12_COMMAND_LIST_TYPE_DIRECT,
                                             &IID_ID3D12CommandAllocator, (void **)&alloc);
    if (FAILED(hr)) fail("ID3D12Device::CreateCommandAllocator", hr);
    hr = ID3D12Device_CreateCommandList(dev, 0, D3D12_COMMAND_LIST_TYPE_DIRECT, alloc, NULL,
                                        &IID_ID3D12GraphicsCommandList, (void **)&list);
    if (FAILED(hr)) fail("ID3D12Device::CreateCommandList", hr);
    ID3D12GraphicsCommandList_Close(list);
    hr = ID3D12Device_CreateFence(dev, 0, D3D12_FENCE_FLAG_NONE, &IID_ID3D12Fence, (void **)&fence);
    if (FAILED(hr)) fail("ID3D12Device::CreateFence", hr);

    while (!stop_rendering) {
        LONG64 n = counts[1];
        UINT k = IDXGISwapChain3_GetCurrentBackBufferIndex(swap);
        D3D12_CPU_DESCRIPTOR_HANDLE h = {base.ptr + k * step};
        D3D12_RESOURCE_BARRIER b;
        float c[4] = {shade(n, 0), 0.38f, 0.63f, 1.0f};
        ID3D12CommandAllocator_Reset(alloc);
        ID3D12GraphicsCommandList_Reset(list, alloc, NULL);
        memset(&b, 0, sizeof b);
        b.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
        b.Transition.pResource = buffers[k];
        b.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
        b.Transition.StateBefore = D3D12_RESOURCE_STATE_PRESENT;
        b.Transition.StateAfter = D3D12_RESOURCE_STATE_RENDER_TARGET;
        ID3D12GraphicsCommandList_ResourceBarrier(list, 1, &b);
        ID3D12GraphicsCommandList_ClearRenderTargetView(list, h, c, 0, NULL);
        b.Transition.StateBefore = D3D12_RESOURCE_STATE_RENDER_TARGET;
        b.Transition.StateAfter = D3D12_RESOURCE_STATE_PRESENT;
        ID3D12GraphicsCommandList_ResourceBarrier(list, 1, &b);
        ID3D12GraphicsCommandList_Close(list);
        ID3D12CommandQueue_ExecuteCommandLists(queue, 1, (ID3D12CommandList **)&list);
        counted();
        hr = IDXGISwapChain3_Present(swap, 0, 0);
        if (FAILED(hr)) fail("IDXGISwapChain3::Present", hr);
        returned();
        /* One frame in flight: the allocator is reused next frame. */
        ID3D12CommandQueue_Signal(queue, fence, ++fence_value);
        if (ID3D12Fence_GetCompletedValue(fence) < fence_value) {
            ID3D12Fence_SetEventOnCompletion(fence, fence_value, fence_event);
            WaitForSingleObject(fence_event, INFINITE);
        }
    }
    ID3D12Fence_Release(fence);
    ID3D12GraphicsCommandList_Release(list);
    ID3D12CommandAllocator_Release(alloc);
    for (i = 0; i < 2; i++) ID3D12Resource_Release(buffers[i]);
    ID3D12DescriptorHeap_Release(heap);
    IDXGISwapChain3_Release(swap);
    IDXGISwapChain1_Release(swap1);
    IDXGIFactory4_Release(factory);
    ID3D12CommandQueue_Release(queue);
    ID3D12Device_Release(dev);
}

static DWORD WINAPI render(void *unused)
{
    (void)unused;
    if (api == 9) run_d3d9();
    else if (api == 11) run_d3d11();
    else run_d3d12();
    return 0;
}

static HANDLE render_thread;

static LRESULT CALLBACK wndproc(HWND hwnd, UINT msg, WPARAM wp, LPARAM lp)
{
    switch (msg) {
    case WM_CLOSE:
        /* As a game does: stop the renderer, then the window goes. */
        InterlockedExchange(&stop_rendering, 1);
        WaitForSingleObject(render_thread, INFINITE);
        DestroyWindow(hwnd);
        return 0;
    case WM_DESTROY:
        PostQuitMessage(0);
        return 0;
    }
    return DefWindowProcA(hwnd, msg, wp, lp);
}

static LONG64 *map_counts(const char *path)
{
    HANDLE f = CreateFileA(path, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                           NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    HANDLE m;
    if (f == INVALID_HANDLE_VALUE) return NULL;
    m = CreateFileMappingA(f, NULL, PAGE_READWRITE, 0, 4096, NULL);
    if (!m) return NULL;
    return (LONG64 *)MapViewOfFile(m, FILE_MAP_ALL_ACCESS, 0, 0, 4096);
}

/* Pumps the window's messages until `until` is set (or forever); returns
 * FALSE once WM_QUIT came. */
static BOOL pump(HANDLE until, DWORD ms)
{
    DWORD end = GetTickCount() + ms;
    HANDLE waits[2] = {until, render_failed};
    for (;;) {
        MSG m;
        DWORD left = ms == INFINITE ? INFINITE : (DWORD)(end - GetTickCount());
        DWORD r;
        if (ms != INFINITE && (LONG)left <= 0) return TRUE;
        r = MsgWaitForMultipleObjects(2, waits, FALSE, left, QS_ALLINPUT);
        if (r == WAIT_OBJECT_0) return TRUE;
        if (r == WAIT_OBJECT_0 + 1) {
            WaitForSingleObject(render_thread, 5000);
            ExitProcess(4);
        }
        while (PeekMessageA(&m, NULL, 0, 0, PM_REMOVE)) {
            if (m.message == WM_QUIT) return FALSE;
            TranslateMessage(&m);
            DispatchMessageA(&m);
        }
        if (r == WAIT_TIMEOUT) return TRUE;
    }
}

int main(int argc, char **argv)
{
    WNDCLASSA wc;
    RECT r = {0, 0, WIDTH, HEIGHT};
    const char *how;
    DWORD hold = INFINITE;
    if (argc < 5) {
        printf("usage: present.exe d3d9|d3d11|d3d12 FRAMES exit|close|terminate|hold COUNTS [HOLD_MS]\n");
        return 2;
    }
    api = !strcmp(argv[1], "d3d9") ? 9 : !strcmp(argv[1], "d3d11") ? 11 : !strcmp(argv[1], "d3d12") ? 12 : 0;
    frames_wanted = strtol(argv[2], NULL, 10);
    how = argv[3];
    if (!api || frames_wanted < 1 ||
        (strcmp(how, "exit") && strcmp(how, "close") && strcmp(how, "terminate") && strcmp(how, "hold"))) {
        printf("present.exe: bad arguments\n");
        return 2;
    }
    if (argc > 5) hold = (DWORD)strtoul(argv[5], NULL, 10);
    counts = map_counts(argv[4]);
    if (!counts) {
        printf("present.exe: cannot map %s\n", argv[4]);
        return 2;
    }
    frames_reached = CreateEventA(NULL, TRUE, FALSE, NULL);
    render_failed = CreateEventA(NULL, TRUE, FALSE, NULL);

    memset(&wc, 0, sizeof wc);
    wc.lpfnWndProc = wndproc;
    wc.hInstance = GetModuleHandleA(NULL);
    wc.lpszClassName = "steadyhud-present";
    wc.hCursor = LoadCursorA(NULL, (LPCSTR)IDC_ARROW);
    RegisterClassA(&wc);
    AdjustWindowRect(&r, WS_OVERLAPPEDWINDOW, FALSE);
    window = CreateWindowA("steadyhud-present", "steadyhud present", WS_OVERLAPPEDWINDOW | WS_VISIBLE,
                           0, 0, r.right - r.left, r.bottom - r.top, NULL, NULL, wc.hInstance, NULL);
    if (!window) {
        printf("present.exe: CreateWindow failed: %lu\n", GetLastError());
        return 4;
    }
    render_thread = CreateThread(NULL, 0, render, NULL, 0, NULL);

    if (!pump(frames_reached, INFINITE)) return 0;
    if (!strcmp(how, "hold")) {
        pump(CreateEventA(NULL, TRUE, FALSE, NULL), hold);
        InterlockedExchange(&stop_rendering, 1);
        WaitForSingleObject(render_thread, INFINITE);
    }
    printf("presents %lld\n", (long long)counts[1]);
    fflush(stdout);
    if (!strcmp(how, "exit")) ExitProcess(0);
    if (!strcmp(how, "terminate")) TerminateProcess(GetCurrentProcess(), 3);
    if (!strcmp(how, "close")) {
        PostMessageA(window, WM_CLOSE, 0, 0);
        while (pump(CreateEventA(NULL, TRUE, FALSE, NULL), INFINITE)) {
        }
        printf("presents %lld\n", (long long)counts[1]);
        fflush(stdout);
    }
    return 0;
}
