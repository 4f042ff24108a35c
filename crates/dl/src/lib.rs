//! Libraries loaded at run time (libwayland-client, libxkbcommon, libxcb
//! and libxcb-present): no build-time dependency, and a game that has them
//! mapped already only gets one more reference. One way to open them and
//! read their symbols, with errors that name the library, the symbol and
//! what to install.

/// Why a library or one of its symbols is not there.
#[derive(Debug)]
pub enum LoadError {
    Lib {
        lib: &'static str,
        /// What to install, or "" (`"; Debian: libxcb1"`).
        hint: &'static str,
        source: libloading::Error,
    },
    Symbol {
        lib: &'static str,
        symbol: &'static str,
        /// Why the symbol may be missing, or "".
        hint: &'static str,
        source: libloading::Error,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Lib { lib, hint, source } => write!(f, "cannot load {lib} ({source}){hint}"),
            LoadError::Symbol {
                lib,
                symbol,
                hint,
                source,
            } => write!(f, "{lib} has no {symbol} ({source}){hint}"),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Lib { source, .. } | LoadError::Symbol { source, .. } => Some(source),
        }
    }
}

/// Opens the system library `lib` (a soname); `hint` ends the error.
pub fn open(lib: &'static str, hint: &'static str) -> Result<libloading::Library, LoadError> {
    // SAFETY: the system libraries we open (libwayland-client, libxkbcommon,
    // libxcb, libxcb-present) run no initialiser of consequence.
    unsafe { libloading::Library::new(lib) }.map_err(|source| LoadError::Lib { lib, hint, source })
}

/// Copies symbol `name` (NUL-terminated) of `lib` (called `lib_name` in
/// errors) as a `T`; `hint` ends the error.
///
/// # Safety
/// `T` must be the symbol's type: a function pointer of its prototype, or
/// a raw pointer for a data symbol (then the value is its address).
pub unsafe fn sym<T: Copy>(
    lib: &libloading::Library,
    lib_name: &'static str,
    name: &'static str,
    hint: &'static str,
) -> Result<T, LoadError> {
    // SAFETY: the caller's contract on `T`.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|source| LoadError::Symbol {
            lib: lib_name,
            symbol: name.trim_end_matches('\0'),
            hint,
            source,
        })
}
