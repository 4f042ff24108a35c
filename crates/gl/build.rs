//! On 32-bit x86 the exported `dlsym` is the `global_asm!` entry
//! `steadyhud_dlsym_entry` (src/hooks.rs): rustc's version script exports
//! the name only because Rust defines a `dlsym` too, and the linker's
//! `--defsym` (which wins over an object's definition) points the name at
//! the entry, so no compiler prologue precedes it whatever the Rust flags.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,--defsym=dlsym=steadyhud_dlsym_entry");
    }
}
