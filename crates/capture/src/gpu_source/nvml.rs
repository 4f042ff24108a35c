//! NVIDIA GPUs through NVML (`libnvidia-ml.so.1`, opened at run time with
//! `libloading`): utilization, memory, graphics clock, temperature, power
//! and clock throttle reasons of the device with the game's PCI bus id.
//! Prototypes and constants: NVIDIA's NVML API reference (`nvml.h`).

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CString};
use steadyhud_sensors::{GpuReader, PciBusId, Sample, Sensor, Throttle};

/// The library the layer loads.
pub const NVML_LIB: &str = "libnvidia-ml.so.1";

type Ret = c_int;
const NVML_SUCCESS: Ret = 0;
type Device = *mut c_void;

#[repr(C)]
#[derive(Default)]
struct Utilization {
    gpu: c_uint,
    memory: c_uint,
}

#[repr(C)]
#[derive(Default)]
struct Memory {
    total: c_ulonglong,
    free: c_ulonglong,
    used: c_ulonglong,
}

/// `NVML_CLOCK_GRAPHICS`.
const CLOCK_GRAPHICS: c_int = 0;
/// `NVML_TEMPERATURE_GPU`.
const TEMPERATURE_GPU: c_int = 0;

/// `nvmlClocksThrottleReason*` bits and what they mean here.
const REASONS: [(u64, Throttle); 8] = [
    (0x2, Throttle::SETTING),   // ApplicationsClocksSetting
    (0x4, Throttle::POWER),     // SwPowerCap
    (0x8, Throttle::HARDWARE),  // HwSlowdown
    (0x10, Throttle::SETTING),  // SyncBoost
    (0x20, Throttle::THERMAL),  // SwThermalSlowdown
    (0x40, Throttle::THERMAL),  // HwThermalSlowdown
    (0x80, Throttle::POWER),    // HwPowerBrakeSlowdown
    (0x100, Throttle::SETTING), // DisplayClockSetting
];

/// NVML could not be used.
#[derive(Debug, thiserror::Error)]
pub enum NvmlError {
    #[error("NVML not loaded ({lib}: {source})")]
    Lib {
        lib: String,
        source: libloading::Error,
    },
    #[error("NVML has no {0}")]
    Symbol(&'static str),
    #[error("NVML {call} failed (error {code})")]
    Call { call: &'static str, code: Ret },
}

struct Fns {
    shutdown: unsafe extern "C" fn() -> Ret,
    utilization: unsafe extern "C" fn(Device, *mut Utilization) -> Ret,
    memory: unsafe extern "C" fn(Device, *mut Memory) -> Ret,
    clock: unsafe extern "C" fn(Device, c_int, *mut c_uint) -> Ret,
    temperature: unsafe extern "C" fn(Device, c_int, *mut c_uint) -> Ret,
    power: unsafe extern "C" fn(Device, *mut c_uint) -> Ret,
    throttle: unsafe extern "C" fn(Device, *mut c_ulonglong) -> Ret,
}

/// An initialised NVML and the game's device; shut down on drop.
pub struct Nvml {
    fns: Fns,
    device: Device,
    columns: Vec<Sensor>,
    has_throttle: bool,
    _lib: libloading::Library,
}

// SAFETY: NVML is thread-safe (its documentation: "all NVML calls are
// thread-safe"); the handle is an opaque token, used by one thread at a time.
unsafe impl Send for Nvml {}

/// Copies symbol `name` (NUL-terminated) of `lib` as a `T`.
///
/// # Safety
/// `T` is the symbol's function pointer type.
unsafe fn sym<T: Copy>(lib: &libloading::Library, name: &'static str) -> Result<T, NvmlError> {
    // SAFETY: the caller's contract on `T`.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|_| NvmlError::Symbol(name.trim_end_matches('\0')))
}

impl Nvml {
    /// Loads NVML from `lib` (a file name the dynamic linker finds, or a
    /// path), initialises it and finds the device at `pci`.
    pub fn open(lib: &str, pci: PciBusId) -> Result<Nvml, NvmlError> {
        // SAFETY: loading NVML runs no initialiser of consequence (it does
        // its work in nvmlInit).
        let library =
            unsafe { libloading::Library::new(lib) }.map_err(|source| NvmlError::Lib {
                lib: lib.to_string(),
                source,
            })?;
        // SAFETY: each type is the nvml.h prototype of the named function.
        let (init, by_pci, fns) = unsafe {
            let init: unsafe extern "C" fn() -> Ret = sym(&library, "nvmlInit_v2\0")?;
            let by_pci: unsafe extern "C" fn(*const c_char, *mut Device) -> Ret =
                sym(&library, "nvmlDeviceGetHandleByPciBusId_v2\0")?;
            let fns = Fns {
                shutdown: sym(&library, "nvmlShutdown\0")?,
                utilization: sym(&library, "nvmlDeviceGetUtilizationRates\0")?,
                memory: sym(&library, "nvmlDeviceGetMemoryInfo\0")?,
                clock: sym(&library, "nvmlDeviceGetClockInfo\0")?,
                temperature: sym(&library, "nvmlDeviceGetTemperature\0")?,
                power: sym(&library, "nvmlDeviceGetPowerUsage\0")?,
                throttle: sym(&library, "nvmlDeviceGetCurrentClocksThrottleReasons\0")?,
            };
            (init, by_pci, fns)
        };
        // SAFETY: nvmlInit_v2 takes no arguments.
        let r = unsafe { init() };
        if r != NVML_SUCCESS {
            return Err(NvmlError::Call {
                call: "nvmlInit_v2",
                code: r,
            });
        }
        // NVML's spelling: 8-digit domain, `00000000:01:00.0`.
        let id = CString::new(format!(
            "{:08x}:{:02x}:{:02x}.{:x}",
            pci.domain, pci.bus, pci.device, pci.function
        ))
        .unwrap_or_default();
        let mut device: Device = std::ptr::null_mut();
        // SAFETY: a NUL-terminated id and a valid out-pointer.
        let r = unsafe { by_pci(id.as_ptr(), &mut device) };
        if r != NVML_SUCCESS {
            // SAFETY: NVML was initialised above.
            unsafe { (fns.shutdown)() };
            return Err(NvmlError::Call {
                call: "nvmlDeviceGetHandleByPciBusId_v2",
                code: r,
            });
        }
        let mut nvml = Nvml {
            fns,
            device,
            columns: Vec::new(),
            has_throttle: false,
            _lib: library,
        };
        // The columns are the readings that work now.
        let mut s = Sample::default();
        nvml.read(&mut s);
        nvml.columns = steadyhud_sensors::COLUMNS
            .into_iter()
            .filter(|&c| s.get(c).is_some())
            .collect();
        nvml.has_throttle = s.throttle.is_some();
        Ok(nvml)
    }
}

impl GpuReader for Nvml {
    fn columns(&self) -> Vec<Sensor> {
        self.columns.clone()
    }

    fn has_throttle(&self) -> bool {
        self.has_throttle
    }

    fn read(&mut self, s: &mut Sample) {
        let d = self.device;
        let f = &self.fns;
        let mut u = Utilization::default();
        // SAFETY (every call below): the nvml.h prototypes, the device
        // handle NVML gave, valid out-pointers.
        if unsafe { (f.utilization)(d, &mut u) } == NVML_SUCCESS {
            s.set(Sensor::GpuLoadPct, Some(u.gpu as f64));
        }
        let mut m = Memory::default();
        if unsafe { (f.memory)(d, &mut m) } == NVML_SUCCESS {
            const MB: f64 = 1024.0 * 1024.0;
            s.set(Sensor::VramUsedMb, Some(m.used as f64 / MB));
            s.set(Sensor::VramTotalMb, Some(m.total as f64 / MB));
        }
        let mut v: c_uint = 0;
        if unsafe { (f.clock)(d, CLOCK_GRAPHICS, &mut v) } == NVML_SUCCESS {
            s.set(Sensor::GpuMhz, Some(v as f64));
        }
        if unsafe { (f.temperature)(d, TEMPERATURE_GPU, &mut v) } == NVML_SUCCESS {
            s.set(Sensor::GpuTempC, Some(v as f64));
        }
        if unsafe { (f.power)(d, &mut v) } == NVML_SUCCESS {
            s.set(Sensor::GpuPowerW, Some(v as f64 / 1000.0));
        }
        let mut bits: c_ulonglong = 0;
        if unsafe { (f.throttle)(d, &mut bits) } == NVML_SUCCESS {
            let mut t = Throttle::default();
            for (bit, reason) in REASONS {
                if bits & bit != 0 {
                    t.add(reason);
                }
            }
            s.throttle = Some(t);
        }
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        // SAFETY: NVML was initialised by `open`; the library is still loaded.
        unsafe { (self.fns.shutdown)() };
    }
}
