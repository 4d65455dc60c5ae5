//! The remaining `hipDeviceGetAttribute` values on CUDA, each from the `cuDeviceGetAttribute`
//! CUDA defines for it; the device UUID (`cuDeviceGetUuid`); link attributes
//! (`cuDeviceGetP2PAttribute`).

use super::props::attr;
use super::{result, CudaBackend};
use crate::backend::{link_type, BackendError, DeviceAttributeBackend, DeviceIndex, PeerAttribute};
use cudarc::driver::sys::{CUdevice_P2PAttribute as P, CUdevice_attribute as A};

/// `hipDeviceAttributeMaxTexture1DLinear`: bytes of a 1D texture bound to linear memory.
const ATTR_MAX_TEXTURE_1D_LINEAR: u32 = 41;

/// The CUDA attribute answering a HIP one, for those CUDA has.
fn cuda_attribute(hip: u32) -> Option<A> {
    Some(match hip {
        1 => A::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE,
        4 => A::CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
        7 => A::CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED,
        13 => A::CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST,
        32 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH,
        33 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH,
        34 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH,
        35 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH,
        36 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH,
        37 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH,
        38 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH,
        39 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH,
        40 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH,
        42 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH,
        43 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH,
        44 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT,
        45 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH,
        46 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH,
        47 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH,
        48 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH,
        49 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH,
        50 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT,
        51 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH,
        52 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE,
        53 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH,
        54 => A::CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH,
        62 => A::CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID,
        66 => A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES,
        73 => A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
        77 => A::CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO,
        79 => A::CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT,
        80 => A::CU_DEVICE_ATTRIBUTE_TCC_DRIVER,
        82 => A::CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT,
        88 => A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
        89 => A::CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED,
        90 => A::CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED,
        91 => A::CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES,
        10015 => A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        _ => return None,
    })
}

impl DeviceAttributeBackend for CudaBackend {
    fn device_attribute(&self, dev: DeviceIndex, hip: u32) -> Result<Option<i64>, BackendError> {
        let d = self.device(dev)?.dev;
        if let Some(a) = cuda_attribute(hip) {
            // A driver too old for the attribute refuses it: not reported, as ROCm does for
            // attributes it lacks.
            return match attr(d, a) {
                Ok(v) => Ok(Some(i64::from(v))),
                Err(BackendError::InvalidValue(_)) => Ok(None),
                Err(e) => Err(e),
            };
        }
        if hip == ATTR_MAX_TEXTURE_1D_LINEAR {
            // The attribute CUDA had for it is deprecated: ask for the width in one-byte
            // elements, which is the limit in bytes ROCm reports.
            let width = result::device::texture_1d_linear_max_width(d)?;
            return Ok(Some(i64::try_from(width).unwrap_or(i64::MAX)));
        }
        // AMD-specific attributes, with what they mean on an NVIDIA device.
        Ok(match hip {
            // No LUID outside Windows; no multi-device cooperative launches with unmatched
            // parameters; not a large-BAR AMD part; no AMD ASIC revision or chip id.
            22 | 10007..=10012 | 10020 => Some(0),
            // CUDA devices sample textures and keep host-coherent (system-scope) atomics;
            // since CUDA 12 every device supports stream memory operations (wait value).
            10013 | 10014 | 10016 => Some(1),
            // %globaltimer counts nanoseconds: a 1 GHz wall clock, in kHz.
            10017 => Some(1_000_000),
            // One die (no XCC partitioning).
            10018 => Some(1),
            _ => None,
        })
    }

    fn device_uuid(&self, dev: DeviceIndex) -> Result<[u8; 16], BackendError> {
        let d = self.device(dev)?.dev;
        Ok(result::device::uuid(d)?)
    }

    fn peer_attribute(&self, dev: DeviceIndex, peer: DeviceIndex, attr: PeerAttribute) -> Result<i64, BackendError> {
        let (d, p) = (self.device(dev)?.dev, self.device(peer)?.dev);
        let query = |a: P| -> Result<i64, BackendError> { Ok(i64::from(result::device::p2p_attribute(a, d, p)?)) };
        match attr {
            PeerAttribute::PerformanceRank => query(P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK),
            PeerAttribute::AccessSupported => query(P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED),
            PeerAttribute::NativeAtomicSupported => query(P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED),
            PeerAttribute::ArrayAccessSupported => query(P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_ACCESS_SUPPORTED),
            // CUDA names no link type: native peer atomics mean a coherent fabric (NVLink,
            // reported as xGMI, AMD's equivalent), else PCIe; one hop either way.
            PeerAttribute::LinkType => {
                Ok(if query(P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)? != 0 { link_type::XGMI } else { link_type::PCIE })
            }
            PeerAttribute::HopCount => Ok(1),
        }
    }
}
