//! libwayland-client, loaded at run time with `libloading` (no
//! build-time dependency): the functions and interface tables our
//! connections use (`crate::connection`), and
//! [`sym`], which `steadyhud-input` also loads libxkbcommon with.

use std::ffi::{c_char, c_int, c_void};

/// `libwayland-client.so.0`; the app using a Wayland surface has it loaded.
pub const WAYLAND_LIB: &str = "libwayland-client.so.0";

pub use steadyhud_dl::{sym, LoadError};

pub type WlProxy = c_void;
pub type WlDisplay = c_void;
pub type WlEventQueue = c_void;

/// `struct wl_message`: one request or event of an interface.
#[repr(C)]
pub struct WlMessage {
    pub name: *const c_char,
    pub signature: *const c_char,
    /// Per argument, the interface of an object or new_id argument (null
    /// for the others).
    pub types: *const *const WlInterface,
}

/// `struct wl_interface` (libwayland's tables are only read; ours, for
/// protocols libwayland does not carry, are built in `presentation`).
#[repr(C)]
pub struct WlInterface {
    pub name: *const c_char,
    pub version: c_int,
    pub method_count: c_int,
    pub methods: *const WlMessage,
    pub event_count: c_int,
    pub events: *const WlMessage,
}

/// `struct wl_registry_listener`: its events in protocol order (`global`:
/// name, interface, version; `global_remove`: name), with the listener's
/// user data first.
#[repr(C)]
pub struct RegistryListener {
    pub global: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32, *const c_char, u32),
    pub global_remove: unsafe extern "C" fn(*mut c_void, *mut WlProxy, u32),
}

/// `struct wl_array`.
#[repr(C)]
pub struct WlArray {
    pub size: usize,
    pub alloc: usize,
    pub data: *mut c_void,
}

/// `WL_MARSHAL_FLAG_DESTROY`.
pub const MARSHAL_DESTROY: u32 = 1;

type MarshalFlags =
    unsafe extern "C" fn(*mut WlProxy, u32, *const WlInterface, u32, u32, ...) -> *mut WlProxy;

/// The libwayland-client functions and interface tables we use.
pub struct Wayland {
    pub create_queue: unsafe extern "C" fn(*mut WlDisplay) -> *mut WlEventQueue,
    pub queue_destroy: unsafe extern "C" fn(*mut WlEventQueue),
    pub create_wrapper: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    pub wrapper_destroy: unsafe extern "C" fn(*mut c_void),
    pub set_queue: unsafe extern "C" fn(*mut WlProxy, *mut WlEventQueue),
    /// `wl_proxy_marshal_flags` (libwayland 1.20+), variadic.
    pub marshal_flags: MarshalFlags,
    pub add_listener: unsafe extern "C" fn(*mut WlProxy, *const c_void, *mut c_void) -> c_int,
    pub proxy_destroy: unsafe extern "C" fn(*mut WlProxy),
    pub proxy_version: unsafe extern "C" fn(*mut WlProxy) -> u32,
    pub dispatch_queue_pending: unsafe extern "C" fn(*mut WlDisplay, *mut WlEventQueue) -> c_int,
    pub flush: unsafe extern "C" fn(*mut WlDisplay) -> c_int,
    pub get_error: unsafe extern "C" fn(*mut WlDisplay) -> c_int,
    pub registry_interface: *const WlInterface,
    pub seat_interface: *const WlInterface,
    pub keyboard_interface: *const WlInterface,
    pub pointer_interface: *const WlInterface,
    pub callback_interface: *const WlInterface,
    pub surface_interface: *const WlInterface,
    pub output_interface: *const WlInterface,
    _lib: libloading::Library,
}

// SAFETY: plain function pointers and pointers to the library's immutable
// interface tables, kept valid by `_lib`; libwayland-client's functions are
// thread-safe.
unsafe impl Send for Wayland {}
// SAFETY: as above; nothing in the struct is ever written after loading.
unsafe impl Sync for Wayland {}

impl Wayland {
    /// `wl_registry.bind` of global `name` as `iface` at `version`: the new
    /// proxy (null when libwayland could not make it).
    ///
    /// # Safety
    /// `registry` is a live `wl_registry` of ours; `iface` is a valid
    /// interface table.
    pub unsafe fn bind(
        &self,
        registry: *mut WlProxy,
        iface: *const WlInterface,
        name: u32,
        version: u32,
    ) -> *mut WlProxy {
        /// `wl_registry.bind`.
        const REGISTRY_BIND: u32 = 0;
        // SAFETY: bind's arguments are (name, interface name, version,
        // new_id), on the caller's live registry and interface.
        unsafe {
            (self.marshal_flags)(
                registry,
                REGISTRY_BIND,
                iface,
                version,
                0,
                name,
                (*iface).name,
                version,
                std::ptr::null_mut::<c_void>(),
            )
        }
    }

    /// Loads `libwayland-client.so.0` (in a Wayland app already mapped, so
    /// this only adds a reference).
    pub fn load() -> Result<Wayland, LoadError> {
        let l = WAYLAND_LIB;
        let lib = steadyhud_dl::open(l, "")?;
        // SAFETY: each type below is the libwayland-client prototype of the
        // named function, or a pointer for the `wl_*_interface` data symbols.
        unsafe {
            Ok(Wayland {
                create_queue: sym(&lib, l, "wl_display_create_queue\0", "")?,
                queue_destroy: sym(&lib, l, "wl_event_queue_destroy\0", "")?,
                create_wrapper: sym(&lib, l, "wl_proxy_create_wrapper\0", "")?,
                wrapper_destroy: sym(&lib, l, "wl_proxy_wrapper_destroy\0", "")?,
                set_queue: sym(&lib, l, "wl_proxy_set_queue\0", "")?,
                marshal_flags: sym(
                    &lib,
                    l,
                    "wl_proxy_marshal_flags\0",
                    "; libwayland-client 1.20 or newer is needed",
                )?,
                add_listener: sym(&lib, l, "wl_proxy_add_listener\0", "")?,
                proxy_destroy: sym(&lib, l, "wl_proxy_destroy\0", "")?,
                proxy_version: sym(&lib, l, "wl_proxy_get_version\0", "")?,
                dispatch_queue_pending: sym(&lib, l, "wl_display_dispatch_queue_pending\0", "")?,
                flush: sym(&lib, l, "wl_display_flush\0", "")?,
                get_error: sym(&lib, l, "wl_display_get_error\0", "")?,
                registry_interface: sym(&lib, l, "wl_registry_interface\0", "")?,
                seat_interface: sym(&lib, l, "wl_seat_interface\0", "")?,
                keyboard_interface: sym(&lib, l, "wl_keyboard_interface\0", "")?,
                pointer_interface: sym(&lib, l, "wl_pointer_interface\0", "")?,
                callback_interface: sym(&lib, l, "wl_callback_interface\0", "")?,
                surface_interface: sym(&lib, l, "wl_surface_interface\0", "")?,
                output_interface: sym(&lib, l, "wl_output_interface\0", "")?,
                _lib: lib,
            })
        }
    }
}
