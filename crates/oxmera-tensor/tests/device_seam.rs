//! The device seam from a backend author's side: lazy and fallible
//! opening, custom devices, dtypes a device cannot store, the index dtype,
//! and errors that arrive after the call that caused them.

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use oxmera_core::{DType, Device, Error, Result};
use oxmera_reference::Reference;
use oxmera_tensor::{
    Backend, DeviceBuffer, HostBuffer, Provider, Storage, StorageData, Tensor, fallback, registry,
    synchronize,
};

/// A custom device for one test (each test its own kind, so tests running
/// in parallel never share a device).
fn custom(kind: &'static str, open: fn(Device) -> Result<Arc<dyn Backend>>) -> Device {
    registry::register_provider(Provider { kind, open });
    Device::custom(kind, 0).unwrap()
}

static OPENS: AtomicUsize = AtomicUsize::new(0);

#[test]
fn registering_opens_nothing_and_the_first_tensor_opens_once() {
    let d = custom("lazy-dev", |d| {
        OPENS.fetch_add(1, Ordering::SeqCst);
        Ok(Arc::new(Queued::new(d)))
    });
    assert_eq!(OPENS.load(Ordering::SeqCst), 0, "registration opened it");
    let a = Tensor::ones([2], DType::F32, d).unwrap();
    let _b = a.add_scalar(1.0).unwrap();
    assert_eq!(OPENS.load(Ordering::SeqCst), 1);
    assert!(registry::devices().contains(&d));
}

#[test]
fn a_provider_may_use_another_device_while_it_opens() {
    // Opening is serialized, but not against the opening thread itself: a
    // provider that makes a tensor on another device not yet opened (here,
    // to build a lookup table) while it opens must not deadlock on the
    // registry.
    custom("warm-inner", |d| Ok(Arc::new(Queued::new(d))));
    let d = custom("warm-up", |d| {
        let inner = Device::custom("warm-inner", 0)?;
        let table = Tensor::arange(0.0, 4.0, 1.0, DType::F32, inner)?;
        assert_eq!(table.to_vec::<f32>()?, vec![0.0, 1.0, 2.0, 3.0]);
        Ok(Arc::new(Queued::new(d)))
    });
    // A generous watchdog turns a deadlock into a failure instead of a
    // hung test run (it asserts nothing about speed).
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let made = Tensor::ones([2], DType::F32, d).map(|t| t.dims().to_vec());
        let _ = done.send(made);
    });
    let made = wait
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("opening a device that opens another one deadlocked");
    assert_eq!(made.unwrap(), vec![2]);
}

#[test]
fn a_provider_that_fails_is_backend_unavailable_with_its_reason() {
    let d = custom("no-driver", |d| {
        Err(Error::BackendUnavailable {
            op: "open",
            device: d,
            reason: "libvulkan.so.1 was not found".into(),
        })
    });
    match Tensor::zeros([2], DType::F32, d) {
        Err(Error::BackendUnavailable { device, reason, .. }) => {
            assert_eq!(device, d);
            assert!(reason.contains("libvulkan.so.1"), "{reason}");
        }
        other => panic!("expected BackendUnavailable, got {other:?}"),
    }
    // It is tried again (and fails again) rather than remembered as open.
    assert!(Tensor::zeros([2], DType::F32, d).is_err());
}

#[test]
fn a_provider_that_panics_is_backend_unavailable_not_a_panic() {
    let d = custom("panicky", |_| panic!("no adapter found"));
    match Tensor::zeros([2], DType::F32, d) {
        Err(Error::BackendUnavailable { reason, .. }) => {
            assert!(reason.contains("no adapter found"), "{reason}")
        }
        other => panic!("expected BackendUnavailable, got {other:?}"),
    }
}

#[test]
fn a_kind_nobody_provides_names_the_kinds_that_are() {
    let d = Device::custom("nobody-provides", 0).unwrap();
    let e = Tensor::zeros([1], DType::F32, d).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, Error::BackendUnavailable { .. }), "{text}");
    assert!(text.contains("reference"), "{text}");
}

#[test]
fn a_dtype_the_device_cannot_store_is_refused_at_creation_and_cast() {
    let d = custom("no-f64", |d| Ok(Arc::new(Queued::new(d))));
    let refused = |r: Result<Tensor>, op: &str| match r {
        Err(Error::UnsupportedOnDevice {
            op: got,
            dtype,
            device,
            ..
        }) => {
            assert_eq!((got, dtype, device), (op, DType::F64, d));
        }
        other => panic!("{op}: expected UnsupportedOnDevice, got {other:?}"),
    };
    refused(Tensor::zeros([2], DType::F64, d), "full");
    refused(Tensor::from_vec(vec![1.0f64], [1], d), "from_vec");
    refused(
        oxmera_tensor::Generator::new(1).randn([2], DType::F64, d),
        "normal",
    );
    let x = Tensor::ones([2], DType::F32, d).unwrap();
    refused(x.to_dtype(DType::F64), "to_dtype");
    let e = x.to_dtype(DType::F64).unwrap_err().to_string();
    assert!(e.contains("no-f64:0") && e.contains("f64"), "{e}");
}

#[test]
fn indices_arrive_in_the_device_index_dtype() {
    let d = custom("i32-index", |d| Ok(Arc::new(Queued::new(d))));
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], d).unwrap();
    let i = Tensor::from_vec(vec![2i64, 0], [2], d).unwrap();
    // Queued::index_select asserts that it receives i32.
    let y = x.index_select(0, &i).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![3.0, 1.0]);
}

#[test]
fn a_bad_index_found_on_the_device_surfaces_at_the_next_synchronization_naming_the_op() {
    let d = custom("async-dev", |d| Ok(Arc::new(Queued::new(d))));
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], d).unwrap();
    // i64 beyond i32's range: narrowed with saturation, still out of range.
    let bad = Tensor::from_vec(vec![0i64, 1 << 40], [2], d).unwrap();
    let y = x.index_select(0, &bad).expect("queued: the call succeeds");
    match synchronize(d) {
        Err(Error::DeviceFault { op, device, reason }) => {
            assert_eq!((op, device), ("index_select", d));
            assert!(reason.contains(&i32::MAX.to_string()), "{reason}");
        }
        other => panic!("expected DeviceFault, got {other:?}"),
    }
    // Reported once; the device goes on.
    synchronize(d).unwrap();
    assert_eq!(y.numel(), 2);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
}

#[test]
fn a_read_back_is_a_synchronization_too() {
    let d = custom("async-read", |d| Ok(Arc::new(Queued::new(d))));
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3], d).unwrap();
    let bad = Tensor::from_vec(vec![3i32], [1], d).unwrap();
    let y = x.index_select(0, &bad).expect("queued: the call succeeds");
    let e = y.to_vec::<f32>().unwrap_err();
    assert!(
        matches!(
            e,
            Error::DeviceFault {
                op: "index_select",
                ..
            }
        ),
        "{e}"
    );
    // An op this device has no kernel for reads its operands back to run
    // on the host, so it is where a fault queued before it surfaces —
    // still naming the op that caused it, not the one that found it.
    let y = x.index_select(0, &bad).unwrap();
    let e = y.add_scalar(1.0).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DeviceFault {
                op: "index_select",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("next synchronization"), "{e}");
}

#[test]
fn the_first_of_several_late_failures_is_the_one_reported() {
    let d = custom("async-two", |d| Ok(Arc::new(Queued::new(d))));
    let x = Tensor::from_vec(vec![1.0f32, 2.0], [1, 2], d).unwrap();
    // i32 indices need no conversion, so nothing reads back in between.
    let first = Tensor::from_vec(vec![-1i32], [1], d).unwrap();
    let second = Tensor::from_vec(vec![5i32, 0], [1, 2], d).unwrap();
    let fine = Tensor::from_vec(vec![1i32, 0], [1, 2], d).unwrap();
    x.index_select(1, &first).unwrap();
    x.gather(1, &second).unwrap();
    x.gather(1, &fine).unwrap();
    match synchronize(d) {
        Err(Error::DeviceFault { op, reason, .. }) => {
            assert_eq!(op, "index_select");
            assert!(reason.contains("-1"), "{reason}");
        }
        other => panic!("expected DeviceFault, got {other:?}"),
    }
    synchronize(d).unwrap();
}

#[test]
fn a_lost_device_fails_every_synchronization_after() {
    let d = Device::custom("lost-dev", 0).unwrap();
    let queued = Arc::new(Queued::new(d));
    registry::register(queued.clone());
    let x = Tensor::ones([2], DType::F32, d).unwrap();
    queued.lose();
    for _ in 0..2 {
        assert!(matches!(x.to_vec::<f32>(), Err(Error::DeviceFault { .. })));
        assert!(matches!(synchronize(d), Err(Error::DeviceFault { .. })));
    }
}

#[test]
fn ops_without_kernels_fall_back_and_are_counted_per_op() {
    let d = custom("counted", |d| Ok(Arc::new(Queued::new(d))));
    let x = Tensor::arange(0.0, 4.0, 1.0, DType::F32, d).unwrap();
    for _ in 0..3 {
        x.exp().unwrap();
    }
    x.sum_all().unwrap();
    let report = fallback::report().for_device(d);
    assert_eq!(fallback::count(d, "exp"), 3);
    assert_eq!(fallback::count(d, "sum"), 1);
    // A service the backend left to its default builds on the host: also
    // counted.
    assert_eq!(fallback::count(d, "arange"), 1);
    assert_eq!(report.total_for(d), 5, "{report}");
    let text = report.to_string();
    assert!(text.contains("counted:0") && text.contains("exp"), "{text}");
}

// ---- A fake asynchronous backend ------------------------------------------

/// A backend that queues its index checks: each index op records a check
/// that runs only at the next synchronization (as a GPU kernel's range
/// check finds a bad index after the launch returned), and the first
/// failure is kept and reported there, naming the op. It stores no `f64`
/// and takes `i32` indices, as a WGSL device does.
#[derive(Debug)]
struct Queued {
    device: Device,
    pending: Mutex<Vec<Check>>,
    lost: AtomicBool,
}

/// A queued check: the op, the indices as the device holds them, and the
/// extent they must lie in.
#[derive(Debug)]
struct Check {
    op: &'static str,
    indices: Vec<i64>,
    size: usize,
}

#[derive(Debug)]
struct Memory(HostBuffer);

impl DeviceBuffer for Memory {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Queued {
    fn new(device: Device) -> Self {
        Queued {
            device,
            pending: Mutex::new(Vec::new()),
            lost: AtomicBool::new(false),
        }
    }

    fn lose(&self) {
        self.lost.store(true, Ordering::SeqCst);
    }

    fn memory<'a>(&self, s: &'a Storage) -> &'a HostBuffer {
        match s.data() {
            StorageData::Device(b) => &b.as_any().downcast_ref::<Memory>().unwrap().0,
            StorageData::Host(_) => panic!("host storage handed to a device backend"),
        }
    }

    /// Queues the range check of an index operand.
    fn queue(&self, op: &'static str, index: &Tensor, size: usize) {
        assert_eq!(index.dtype(), DType::I32, "indices arrive as i32");
        let host = self.memory(index.storage());
        let indices = index.layout().offsets().map(|o| host.get_i64(o)).collect();
        self.pending
            .lock()
            .unwrap()
            .push(Check { op, indices, size });
    }

    /// A tensor of this device seen on the host (the reference's device),
    /// read without synchronizing: what a kernel sees of its operands.
    fn on_host(&self, x: &Tensor) -> Tensor {
        let copy = Storage::host(Device::Reference, self.memory(x.storage()).clone());
        Tensor::from_parts(Arc::new(copy), x.layout().clone())
    }

    /// Indices on the host, clamped into range so that the host
    /// computation the fake stands in for stays defined (a real kernel
    /// would read whatever lies there), widened to the reference's i64.
    fn safe_indices(&self, index: &Tensor, size: usize) -> Result<Tensor> {
        let top = size.saturating_sub(1) as f64;
        self.on_host(index)
            .clamp(Some(0.0), Some(top))?
            .to_dtype(DType::I64)
    }

    /// The reference's result, in this device's memory.
    fn keep(&self, s: Storage) -> Result<Storage> {
        self.from_host(s.into_host().expect("the reference stores on the host"))
    }
}

impl Backend for Queued {
    fn name(&self) -> &'static str {
        "queued"
    }
    fn device(&self) -> Device {
        self.device
    }
    fn from_host(&self, data: HostBuffer) -> Result<Storage> {
        Ok(Storage::device_buffer(
            self.device,
            data.dtype(),
            data.len(),
            Box::new(Memory(data)),
        ))
    }
    fn download(&self, storage: &Storage) -> Result<HostBuffer> {
        self.synchronize()?;
        Ok(self.memory(storage).clone())
    }
    fn synchronize(&self) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(Error::DeviceFault {
                op: "synchronize",
                device: self.device,
                reason: "the device was lost".into(),
            });
        }
        let checks = std::mem::take(&mut *self.pending.lock().unwrap());
        for c in checks {
            if let Some(&bad) = c
                .indices
                .iter()
                .find(|&&i| usize::try_from(i).map_or(true, |i| i >= c.size))
            {
                return Err(Error::DeviceFault {
                    op: c.op,
                    device: self.device,
                    reason: format!("index {bad} is out of range 0..{}", c.size),
                });
            }
        }
        Ok(())
    }
    fn stores(&self, dtype: DType) -> bool {
        dtype != DType::F64
    }
    fn index_dtype(&self) -> DType {
        DType::I32
    }
    fn checks_indices(&self) -> bool {
        true
    }
    fn index_select(&self, x: &Tensor, dim: usize, indices: &Tensor) -> Result<Storage> {
        let size = x.dims()[dim];
        self.queue("index_select", indices, size);
        let safe = self.safe_indices(indices, size)?;
        self.keep(Reference.index_select(&self.on_host(x), dim, &safe)?)
    }
    fn gather(&self, x: &Tensor, dim: usize, index: &Tensor) -> Result<Storage> {
        let size = x.dims()[dim];
        self.queue("gather", index, size);
        let safe = self.safe_indices(index, size)?;
        self.keep(Reference.gather(&self.on_host(x), dim, &safe)?)
    }
}
