//! Execution providers: the one place that decides where a model runs (`--device auto|cpu|cuda|coreml`).
//!
//! `auto` tries every provider compiled in (cargo features `cuda`, `coreml`) that the loaded ONNX Runtime
//! supports, and falls back to the CPU with a [`DeviceStatus::notice`] the CLI logs and the UI shows. An
//! explicitly requested provider that cannot be used is an error with ONNX Runtime's reason.

use std::fmt;
use std::str::FromStr;

use ort::session::builder::SessionBuilder;

use super::ort_lib::OrtRuntime;

/// Where the user asked a model to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// The best provider available, else the CPU.
    #[default]
    Auto,
    /// The CPU provider.
    Cpu,
    /// NVIDIA CUDA (needs the `cuda` cargo feature and the onnxruntime-gpu library).
    Cuda,
    /// Apple CoreML (needs the `coreml` cargo feature).
    CoreMl,
}

impl Device {
    /// All choices, for menus.
    pub const ALL: [Device; 4] = [Device::Auto, Device::Cpu, Device::Cuda, Device::CoreMl];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Device::Auto => "auto",
            Device::Cpu => "cpu",
            Device::Cuda => "cuda",
            Device::CoreMl => "coreml",
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Device {
    type Err = DeviceError;

    fn from_str(s: &str) -> Result<Device, DeviceError> {
        Device::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| DeviceError::Unknown { name: s.to_owned() })
    }
}

/// The provider a session actually uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// ONNX Runtime's CPU provider.
    Cpu,
    /// CUDA.
    Cuda,
    /// CoreML.
    CoreMl,
    /// An inference server (a package with a mav.json `remote` section).
    Remote,
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Provider::Cpu => "CPU",
            Provider::Cuda => "CUDA",
            Provider::CoreMl => "CoreML",
            Provider::Remote => "remote server",
        })
    }
}

/// What device selection ended with: the provider in use and, after a fallback, why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceStatus {
    /// What was asked for.
    pub requested: Device,
    /// What runs.
    pub provider: Provider,
    /// Set when `auto` fell back to the CPU (or had nothing better compiled in), for the log and the UI.
    pub notice: Option<String>,
}

/// Why a device cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum DeviceError {
    /// Not one of the known names.
    #[error("unknown device '{name}': use auto, cpu, cuda or coreml")]
    Unknown {
        /// What was given.
        name: String,
    },
    /// The provider is not compiled into this mavboard build.
    #[error(
        "{device} was requested but this mavboard was built without it: rebuild with `cargo build --release --features {device}`"
    )]
    NotCompiled {
        /// The device.
        device: Device,
    },
    /// ONNX Runtime refused the provider (e.g. the CUDA libraries are missing).
    #[error("{device} could not be enabled: {reason}")]
    Failed {
        /// The device.
        device: Device,
        /// ONNX Runtime's reason (e.g. a missing libcublasLt.so).
        reason: String,
    },
    /// Session options could not be set.
    #[error("could not configure the ONNX Runtime session: {reason}")]
    Options {
        /// ONNX Runtime's reason.
        reason: String,
    },
}

/// Threading for one session. Sessions belong to inference workers; a small intra-op pool with spinning off
/// keeps an idle desktop app idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionThreads {
    /// Intra-op threads per session.
    pub intra_op: usize,
}

impl Default for SessionThreads {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        SessionThreads { intra_op: cores.clamp(1, 4) }
    }
}

fn options_err<E: fmt::Display>(e: E) -> DeviceError {
    DeviceError::Options { reason: e.to_string() }
}

/// A session builder configured for `device` and `threads`, and the status of the device choice.
pub fn session_builder(
    runtime: &OrtRuntime,
    device: Device,
    threads: SessionThreads,
) -> Result<(SessionBuilder, DeviceStatus), DeviceError> {
    let mut builder = ort::session::Session::builder(runtime.environment())
        .map_err(options_err)?
        .with_intra_threads(threads.intra_op.max(1))
        .map_err(options_err)?
        .with_inter_threads(1)
        .map_err(options_err)?
        .with_intra_op_spinning(false)
        .map_err(options_err)?
        .with_inter_op_spinning(false)
        .map_err(options_err)?;
    let status = match device {
        Device::Cpu => DeviceStatus { requested: device, provider: Provider::Cpu, notice: None },
        Device::Cuda | Device::CoreMl => {
            let provider = register(&mut builder, device)?;
            DeviceStatus { requested: device, provider, notice: None }
        }
        Device::Auto => {
            let mut notices = Vec::new();
            let mut chosen = None;
            for d in [Device::Cuda, Device::CoreMl] {
                match register(&mut builder, d) {
                    Ok(p) => {
                        chosen = Some(p);
                        break;
                    }
                    Err(DeviceError::NotCompiled { .. }) => {}
                    Err(e) => notices.push(e.to_string()),
                }
            }
            match chosen {
                Some(provider) => DeviceStatus { requested: device, provider, notice: None },
                None => DeviceStatus {
                    requested: device,
                    provider: Provider::Cpu,
                    notice: (!notices.is_empty()).then(|| format!("using the CPU: {}", notices.join("; "))),
                },
            }
        }
    };
    Ok((builder, status))
}

#[allow(unused_variables)]
fn register(builder: &mut SessionBuilder, device: Device) -> Result<Provider, DeviceError> {
    match device {
        #[cfg(feature = "cuda")]
        Device::Cuda => {
            use ort::ep::ExecutionProvider;
            ort::ep::CUDA::default()
                .register(builder)
                .map(|()| Provider::Cuda)
                .map_err(|e| DeviceError::Failed { device, reason: e.to_string() })
        }
        #[cfg(feature = "coreml")]
        Device::CoreMl => {
            use ort::ep::ExecutionProvider;
            ort::ep::CoreML::default()
                .register(builder)
                .map(|()| Provider::CoreMl)
                .map_err(|e| DeviceError::Failed { device, reason: e.to_string() })
        }
        Device::Cpu | Device::Auto => Ok(Provider::Cpu),
        #[allow(unreachable_patterns)]
        _ => Err(DeviceError::NotCompiled { device }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_names() {
        assert_eq!("CUDA".parse::<Device>().expect("known"), Device::Cuda);
        assert_eq!("auto".parse::<Device>().expect("known"), Device::Auto);
        let err = "tpu".parse::<Device>().expect_err("unknown");
        assert!(err.to_string().contains("auto, cpu, cuda or coreml"));
    }
}
