//! The `Backend` for one GPU: the device services through the driver, every
//! op through the seam's counted host fallback.

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::CudaSlice;
use oxmera_core::{Device, Error, Result};
use oxmera_tensor::{Backend, DeviceBuffer, HostBuffer, Storage};

use crate::driver::Gpu;

/// The backend for one opened GPU.
#[derive(Debug)]
pub(crate) struct CudaBackend {
    device: Device,
    gpu: Arc<Gpu>,
}

/// A tensor's bytes in device memory (whole 32-bit words, so a kernel may
/// read any element as words).
#[derive(Debug)]
struct GpuBytes(CudaSlice<u8>);

impl DeviceBuffer for GpuBytes {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl CudaBackend {
    pub(crate) fn new(device: Device, gpu: Arc<Gpu>) -> CudaBackend {
        CudaBackend { device, gpu }
    }

    fn bytes<'a>(&self, storage: &'a Storage) -> Result<&'a CudaSlice<u8>> {
        match storage.device_buffer_as::<GpuBytes>() {
            Some(GpuBytes(slice)) => Ok(slice),
            None => Err(self.foreign(storage)),
        }
    }

    fn foreign(&self, storage: &Storage) -> Error {
        Error::BackendUnavailable {
            op: "download",
            device: self.device,
            reason: format!(
                "storage of {} was not made by the CUDA backend",
                storage.device()
            ),
        }
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn device(&self) -> Device {
        self.device
    }

    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        let mut bytes = data.to_le_bytes();
        bytes.resize(bytes.len().div_ceil(4).max(1) * 4, 0);
        let slice = self
            .gpu
            .stream
            .clone_htod(&bytes)
            .map_err(|e| self.gpu.fault("upload", e.to_string()))?;
        Ok(Storage::device_buffer(
            self.device,
            data.dtype(),
            data.len(),
            Box::new(GpuBytes(slice)),
        ))
    }

    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        let slice = self.bytes(storage)?;
        let bytes = self
            .gpu
            .stream
            .clone_dtoh(slice)
            .map_err(|e| self.gpu.fault("download", e.to_string()))?;
        let used = storage.len() * storage.dtype().size_in_bytes();
        Ok(HostBuffer::from_le_bytes(storage.dtype(), &bytes[..used]))
    }

    fn synchronize(&self) -> Result<()> {
        self.gpu
            .stream
            .synchronize()
            .map_err(|e| self.gpu.fault("synchronize", e.to_string()))
    }
}
