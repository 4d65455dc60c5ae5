//! Device family: versions, count, properties, synchronisation, reset, memory information,
//! limits and peers.

use super::{CallCx, Failure, Session};
use crate::backend::{DeviceLimit, PeerAttribute};
use proto_core::opcode::DeviceHandler;
use proto_core::wire;
use proto_core::{FixedStr, Status};

impl DeviceHandler for Session {
    fn get_versions<'a>(&'a mut self, _cx: &mut CallCx, _req: wire::Empty) -> Result<wire::Versions<'a>, Failure> {
        Ok(wire::Versions { driver_version: REPORTED_HIP_VERSION, runtime_version: REPORTED_HIP_VERSION, backend: self.backend.name().into() })
    }

    fn get_device_count(&mut self, _cx: &mut CallCx, _req: wire::Empty) -> Result<wire::DeviceCount, Failure> {
        let count = match &self.device_map {
            Some(map) => map.len() as u32,
            None => self.backend.device_count()?,
        };
        Ok(wire::DeviceCount { count })
    }

    fn get_device_properties(&mut self, _cx: &mut CallCx, req: wire::DeviceRef) -> Result<wire::DeviceProperties, Failure> {
        let dev = self.device(req.device)?;
        let mut props = to_wire_properties(&self.backend.device_properties(dev)?);
        props.uuid = self.backend.device_uuid(dev)?;
        Ok(props)
    }

    fn device_synchronize(&mut self, _cx: &mut CallCx, req: wire::DeviceRef) -> Result<wire::Empty, Failure> {
        let dev = self.device(req.device)?;
        self.capture_device_sync_gate()?;
        // The session's work only: other clients' queued work is theirs to wait for. Reports
        // errors latched on the session's streams, as HIP does.
        self.synchronize_session(Some(dev))?;
        Ok(wire::Empty {})
    }

    fn device_reset(&mut self, _cx: &mut CallCx, req: wire::DeviceRef) -> Result<wire::Empty, Failure> {
        let dev = self.device(req.device)?;
        self.release(Some(dev));
        self.limits.retain(|(d, _), _| *d != dev);
        self.peer_access.retain(|(d, _)| *d != dev);
        Ok(wire::Empty {})
    }

    fn mem_get_info(&mut self, _cx: &mut CallCx, req: wire::DeviceRef) -> Result<wire::MemInfo, Failure> {
        let dev = self.device(req.device)?;
        let info = self.backend.mem_get_info(dev)?;
        // Memory of freed client allocations kept mapped is this session's to take back.
        let free = info.free.saturating_add(self.client_cached_bytes(dev)).min(info.total);
        Ok(wire::MemInfo { free, total: info.total })
    }

    fn stream_priority_range(&mut self, _cx: &mut CallCx, req: wire::DeviceRef) -> Result<wire::PriorityRange, Failure> {
        let dev = self.device(req.device)?;
        // ROCm 7's range whatever the backend's (streams map onto it when created).
        self.backend.stream_priority_range(dev)?;
        Ok(wire::PriorityRange { least: super::hip_priority::LEAST, greatest: super::hip_priority::GREATEST })
    }
    fn device_get_limit(&mut self, _cx: &mut CallCx, req: wire::LimitRef) -> Result<wire::LimitValue, Failure> {
        let dev = self.device(req.device)?;
        let limit = Self::limit(req.limit)?;
        if !limit.readable() {
            return Err(unsupported_limit(limit, "read"));
        }
        let value = match self.limits.get(&(dev, limit)) {
            Some(&v) => v,
            None => self.backend.device_limit(dev, limit).map_err(|e| scratch_unsupported(limit, e))?,
        };
        Ok(wire::LimitValue { value })
    }

    fn device_set_limit(&mut self, _cx: &mut CallCx, req: wire::SetLimit) -> Result<wire::LimitValue, Failure> {
        let dev = self.device(req.device)?;
        let limit = Self::limit(req.limit)?;
        if !limit.settable() {
            return Err(unsupported_limit(limit, "set"));
        }
        let value = self.backend.set_device_limit(dev, limit, req.value).map_err(|e| scratch_unsupported(limit, e))?;
        self.limits.insert((dev, limit), value);
        Ok(wire::LimitValue { value })
    }

    fn device_get_attribute(&mut self, _cx: &mut CallCx, req: wire::AttributeQuery) -> Result<wire::AttributeValue, Failure> {
        let dev = self.device(req.device)?;
        // Arrays (and so textures) larger than the worker's limits are refused whatever the
        // driver allows: the limit reported is the smaller, as `maxTexture*` in the properties.
        let value = self.backend.device_attribute(dev, req.attr)?.map(|v| match array_limit(req.attr) {
            Some(limit) => v.min(limit),
            None => v,
        });
        Ok(wire::AttributeValue { known: value.is_some(), value: value.unwrap_or(0) })
    }

    /// ROCm's checks: a device and itself is `hipErrorInvalidDevice`, an unknown attribute
    /// `hipErrorInvalidValue`.
    fn device_get_peer_attribute(&mut self, _cx: &mut CallCx, req: wire::PeerAttributeQuery) -> Result<wire::AttributeValue, Failure> {
        let dev = self.device(req.device)?;
        let peer = self.device(req.peer)?;
        if dev == peer {
            return Err(Failure::new(Status::INVALID_DEVICE, format!("device {dev} has no link to itself")));
        }
        let attr = PeerAttribute::from_raw(req.attr)
            .ok_or_else(|| Failure::new(Status::INVALID_VALUE, format!("peer attribute {} is not defined", req.attr)))?;
        let value = self.backend.peer_attribute(dev, peer, attr)?;
        Ok(wire::AttributeValue { known: true, value })
    }

    fn device_can_access_peer(&mut self, _cx: &mut CallCx, req: wire::PeerQuery) -> Result<wire::PeerAccess, Failure> {
        let dev = self.device(req.device)?;
        let peer = self.device(req.peer)?;
        // A device is never its own peer (ROCm and CUDA both answer 0).
        let can_access = dev != peer && self.backend.can_access_peer(dev, peer)?;
        Ok(wire::PeerAccess { can_access })
    }

    /// ROCm's answers: a pair that cannot access each other (or a device and itself) is
    /// `hipErrorInvalidDevice`; enabling twice and disabling what was not enabled are errors
    /// of their own. Pairs are this session's: the backend's mapping stays for all sessions.
    fn device_set_peer_access(&mut self, _cx: &mut CallCx, req: wire::PeerAccessChange) -> Result<wire::Empty, Failure> {
        let dev = self.device(req.device)?;
        let peer = self.device(req.peer)?;
        if dev == peer || !self.backend.can_access_peer(dev, peer)? {
            return Err(Failure::new(Status::INVALID_DEVICE, format!("device {dev} cannot access device {peer}'s memory")));
        }
        let enabled = self.peer_access.contains(&(dev, peer));
        match (req.enable, enabled) {
            (true, true) => Err(Failure::new(Status::PEER_ACCESS_ALREADY_ENABLED, format!("device {dev} already accesses device {peer}"))),
            (false, false) => Err(Failure::new(Status::PEER_ACCESS_NOT_ENABLED, format!("device {dev} was not given access to device {peer}"))),
            (true, false) => {
                self.backend.enable_peer_access(dev, peer)?;
                self.grant_peer_access_to_client_units(dev, peer)?;
                self.peer_access.insert((dev, peer));
                Ok(wire::Empty {})
            }
            (false, true) => {
                self.peer_access.remove(&(dev, peer));
                Ok(wire::Empty {})
            }
        }
    }
}

fn to_wire_properties(p: &crate::backend::DeviceProperties) -> wire::DeviceProperties {
    let u = |v: i32| v.max(0) as u32;
    wire::DeviceProperties {
        name: FixedStr::truncated(&p.name),
        arch_name: FixedStr::truncated(&p.gcn_arch_name),
        uuid: [0; 16],
        total_global_mem: p.total_global_mem,
        shared_mem_per_block: p.shared_mem_per_block,
        regs_per_block: u(p.regs_per_block),
        warp_size: u(p.warp_size),
        mem_pitch: p.mem_pitch,
        max_threads_per_block: u(p.max_threads_per_block),
        max_threads_dim: p.max_threads_dim.map(u),
        max_grid_size: p.max_grid_size.map(u),
        clock_rate_khz: u(p.clock_rate_khz),
        total_const_mem: p.total_const_mem,
        major: u(p.major),
        minor: u(p.minor),
        texture_alignment: p.texture_alignment,
        multi_processor_count: u(p.multi_processor_count),
        kernel_exec_timeout: p.kernel_exec_timeout_enabled,
        integrated: p.integrated,
        can_map_host_memory: p.can_map_host_memory,
        compute_mode: u(p.compute_mode),
        concurrent_kernels: p.concurrent_kernels,
        ecc_enabled: p.ecc_enabled,
        pci_bus_id: u(p.pci_bus_id),
        pci_device_id: u(p.pci_device_id),
        pci_domain_id: u(p.pci_domain_id),
        async_engine_count: u(p.async_engine_count),
        unified_addressing: p.unified_addressing,
        memory_clock_rate_khz: u(p.memory_clock_rate_khz),
        memory_bus_width: u(p.memory_bus_width),
        l2_cache_size: u(p.l2_cache_size),
        persisting_l2_cache_max_size: u(p.persisting_l2_cache_max_size),
        max_threads_per_multiprocessor: u(p.max_threads_per_multiprocessor),
        stream_priorities_supported: true,
        global_l1_cache_supported: true,
        local_l1_cache_supported: true,
        shared_mem_per_multiprocessor: p.max_shared_memory_per_multiprocessor,
        regs_per_multiprocessor: u(p.regs_per_multiprocessor),
        managed_memory: p.managed_memory,
        is_multi_gpu_board: p.is_multi_gpu_board,
        pageable_memory_access: p.pageable_memory_access,
        concurrent_managed_access: p.concurrent_managed_access,
        cooperative_launch: p.cooperative_launch,
        cooperative_multi_device_launch: p.cooperative_multi_device_launch,
        shared_mem_per_block_optin: p.shared_mem_per_block_optin,
        max_blocks_per_multiprocessor: u(p.max_blocks_per_multiprocessor),
        host_native_atomic_supported: true,
        clock_instruction_rate_khz: u(p.clock_instruction_rate_khz),
    }
}

/// Version numbers reported as HIP 7.0 (`HIP_VERSION` = major·10⁷ + minor·10⁵ + patch).
pub const REPORTED_HIP_VERSION: i32 = 70_000_000;

/// ROCm 7's `hipErrorUnsupportedLimit` for a limit its `hipDeviceGetLimit` or
/// `hipDeviceSetLimit` does not handle (the printf FIFO size; setting the scratch bounds).
fn unsupported_limit(limit: DeviceLimit, what: &str) -> Failure {
    Failure::new(Status::UNSUPPORTED_LIMIT, format!("hipLimit_t {:#x} cannot be {what} (ROCm answers hipErrorUnsupportedLimit)", limit.raw()))
}

/// The scratch limits exist on AMD GPUs only: another backend's "not supported" is
/// `hipErrorUnsupportedLimit`, ROCm's answer on a GPU without them.
fn scratch_unsupported(limit: DeviceLimit, e: crate::backend::BackendError) -> Failure {
    match e {
        crate::backend::BackendError::NotSupported(message) if limit.is_scratch() => Failure::new(Status::UNSUPPORTED_LIMIT, message),
        other => other.into(),
    }
}

/// The worker's array limit behind a `hipDeviceAttributeMaxTexture*` dimension (ROCm 7
/// numbers: 1D width 39, 2D width 43 and height 44, 3D width 49, height 50, depth 51).
fn array_limit(attr: u32) -> Option<i64> {
    let limit = match attr {
        39 => wire::MAX_ARRAY_1D_WIDTH,
        43 => wire::MAX_ARRAY_2D[0],
        44 => wire::MAX_ARRAY_2D[1],
        49 => wire::MAX_ARRAY_3D[0],
        50 => wire::MAX_ARRAY_3D[1],
        51 => wire::MAX_ARRAY_3D[2],
        _ => return None,
    };
    i64::try_from(limit).ok()
}
