//! cuDNN's LSTM through the v8 RNN API: one [`CudnnLstm`] per LSTM configuration (a
//! single-layer, unidirectional LSTM with one input bias, packed sequence-major data, every
//! sequence full length), holding its descriptors and device buffers, all released on drop. The
//! call sequence follows the cuDNN API reference (`cudnnSetRNNDescriptor_v8`,
//! `cudnnSetRNNDataDescriptor`, `cudnnGetRNNWeightSpaceSize`, `cudnnGetRNNTempSpaceSizes`,
//! `cudnnBuildRNNDynamic` for the persistent-dynamic algorithm, `cudnnRNNForward`).

use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use cudarc::cudnn::sys as dnn;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use roofline_model::analysis::dl::{Lstm, Precision};

use super::{
    DataDesc, DnnError, DnnHandle, DropoutDesc, RnnDesc, TensorDesc, check, data_type, int,
    math_type,
};

/// cuDNN's RNN algorithms (`cudnnRNNAlgo_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algo {
    /// One GEMM for all inputs, then per-step kernels.
    Standard,
    /// Persistent kernel, weights kept on chip; compiled ahead of time.
    PersistStatic,
    /// Persistent kernel compiled at run time for the exact sizes (`cudnnBuildRNNDynamic`).
    PersistDynamic,
    /// Persistent kernel for small hidden sizes.
    PersistStaticSmallH,
}

impl Algo {
    /// Every algorithm, in enum order.
    pub const ALL: [Algo; 4] = [
        Algo::Standard,
        Algo::PersistStatic,
        Algo::PersistDynamic,
        Algo::PersistStaticSmallH,
    ];

    /// cuDNN's name without the `CUDNN_RNN_ALGO_` prefix.
    pub fn key(self) -> &'static str {
        match self {
            Algo::Standard => "STANDARD",
            Algo::PersistStatic => "PERSIST_STATIC",
            Algo::PersistDynamic => "PERSIST_DYNAMIC",
            Algo::PersistStaticSmallH => "PERSIST_STATIC_SMALL_H",
        }
    }

    fn raw(self) -> dnn::cudnnRNNAlgo_t {
        match self {
            Algo::Standard => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_STANDARD,
            Algo::PersistStatic => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_STATIC,
            Algo::PersistDynamic => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_DYNAMIC,
            Algo::PersistStaticSmallH => dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H,
        }
    }
}

/// `auxFlags` of `cudnnSetRNNDescriptor_v8`: packed input and output, no padding
/// (`CUDNN_RNN_PADDED_IO_DISABLED`).
const PADDED_IO_DISABLED: u32 = 0;

fn alloc(
    stream: &Arc<CudaStream>,
    what: &'static str,
    bytes: usize,
) -> Result<CudaSlice<u8>, DnnError> {
    stream
        .alloc_zeros::<u8>(bytes.max(1))
        .map_err(|source| DnnError::Alloc { what, source })
}

/// A cuDNN LSTM ready to run forward (inference mode) over one sequence batch.
///
/// Device buffers are allocated zero-filled; the suite then writes real data into the ones
/// `cudnnRNNForward` reads ([`CudnnLstm::inputs`]): the values do not change the work an LSTM
/// does, but zeros toggle no bits and let a power-limited GPU keep a higher clock. The outputs,
/// the workspace and the dropout states stay as they are, and so do the sequence lengths
/// (integers cuDNN needs right).
pub struct CudnnLstm<'h> {
    handle: &'h DnnHandle,
    // Field order is drop order: descriptors go after the calls that use them are done.
    rnn: RnnDesc,
    _dropout: DropoutDesc,
    x_desc: DataDesc,
    y_desc: DataDesc,
    h_desc: TensorDesc,
    seq_lengths: CudaSlice<i32>,
    x: CudaSlice<u8>,
    y: CudaSlice<u8>,
    hx: CudaSlice<u8>,
    cx: CudaSlice<u8>,
    hy: CudaSlice<u8>,
    cy: CudaSlice<u8>,
    weights: CudaSlice<u8>,
    work: CudaSlice<u8>,
    _dropout_states: CudaSlice<u8>,
}

impl<'h> CudnnLstm<'h> {
    /// Sets up `l` with `algo` for storage precision `p`, FP32 arithmetic (`mathPrec`), Tensor
    /// Cores allowed or not.
    ///
    /// # Errors
    /// cuDNN refused the configuration ([`DnnError::Call`]), or memory ran out.
    pub fn new(
        handle: &'h DnnHandle,
        l: &Lstm,
        p: Precision,
        tensor: bool,
        algo: Algo,
    ) -> Result<Self, DnnError> {
        let stream = &handle.stream;
        let (batch, seq) = (int("batch", l.batch)?, int("time steps", l.seq)?);
        let (input, hidden) = (int("input size", l.input)?, int("hidden size", l.hidden)?);
        let dt = data_type(p);
        let elt = match p {
            Precision::Fp32 => 4usize,
            Precision::Fp16 | Precision::Bf16 => 2,
        };

        // Dropout descriptor (required by the v8 descriptor; a one-layer RNN applies none).
        let dropout = DropoutDesc::new()?;
        let mut states_size = 0usize;
        // SAFETY: live handle, valid out-pointer.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnDropoutGetStatesSize",
                dnn::cudnnDropoutGetStatesSize(handle.raw, &mut states_size),
            )?;
        }
        let mut dropout_states = alloc(stream, "the LSTM's dropout states", states_size)?;
        {
            let (states, _g) = dropout_states.device_ptr_mut(stream);
            // SAFETY: `states` holds `states_size` bytes and outlives the descriptor.
            #[allow(unsafe_code)]
            unsafe {
                check(
                    "cudnnSetDropoutDescriptor",
                    dnn::cudnnSetDropoutDescriptor(
                        dropout.0,
                        handle.raw,
                        0.0,
                        states as *mut c_void,
                        states_size,
                        0,
                    ),
                )?;
            }
        }

        let rnn = RnnDesc::new()?;
        // SAFETY: live descriptors; every enum is a valid cuDNN value.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnSetRNNDescriptor_v8",
                dnn::cudnnSetRNNDescriptor_v8(
                    rnn.0,
                    algo.raw(),
                    dnn::cudnnRNNMode_t::CUDNN_LSTM,
                    dnn::cudnnRNNBiasMode_t::CUDNN_RNN_SINGLE_INP_BIAS,
                    dnn::cudnnDirectionMode_t::CUDNN_UNIDIRECTIONAL,
                    dnn::cudnnRNNInputMode_t::CUDNN_LINEAR_INPUT,
                    dt,
                    dnn::cudnnDataType_t::CUDNN_DATA_FLOAT,
                    math_type(p, tensor),
                    input,
                    hidden,
                    hidden,
                    1,
                    dropout.0,
                    PADDED_IO_DISABLED,
                ),
            )?;
            if algo == Algo::PersistDynamic {
                check(
                    "cudnnBuildRNNDynamic",
                    dnn::cudnnBuildRNNDynamic(handle.raw, rnn.0, batch),
                )?;
            }
        }

        let lengths = vec![seq; l.batch as usize];
        let data = |vector: i32| -> Result<DataDesc, DnnError> {
            let d = DataDesc::new()?;
            // SAFETY: `lengths` holds `batch` entries; no padding fill for a packed layout.
            #[allow(unsafe_code)]
            unsafe {
                check(
                    "cudnnSetRNNDataDescriptor",
                    dnn::cudnnSetRNNDataDescriptor(
                        d.0,
                        dt,
                        dnn::cudnnRNNDataLayout_t::CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                        seq,
                        batch,
                        vector,
                        lengths.as_ptr(),
                        ptr::null_mut(),
                    ),
                )?;
            }
            Ok(d)
        };
        let x_desc = data(input)?;
        let y_desc = data(hidden)?;
        let h_desc = TensorDesc::new()?;
        let dims = [1, batch, hidden];
        let strides = [batch * hidden, hidden, 1];
        // SAFETY: three dimensions and strides, as `nbDims` says.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnSetTensorNdDescriptor",
                dnn::cudnnSetTensorNdDescriptor(h_desc.0, dt, 3, dims.as_ptr(), strides.as_ptr()),
            )?;
        }

        let (mut weight_size, mut work_size, mut reserve_size) = (0usize, 0usize, 0usize);
        // SAFETY: live handle and descriptors, valid out-pointers.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnGetRNNWeightSpaceSize",
                dnn::cudnnGetRNNWeightSpaceSize(handle.raw, rnn.0, &mut weight_size),
            )?;
            check(
                "cudnnGetRNNTempSpaceSizes",
                dnn::cudnnGetRNNTempSpaceSizes(
                    handle.raw,
                    rnn.0,
                    dnn::cudnnForwardMode_t::CUDNN_FWD_MODE_INFERENCE,
                    x_desc.0,
                    &mut work_size,
                    &mut reserve_size,
                ),
            )?;
        }

        let bh = (l.batch * l.hidden) as usize * elt;
        let seq_lengths = stream
            .clone_htod(&lengths)
            .map_err(|source| DnnError::Alloc {
                what: "the LSTM's sequence lengths",
                source,
            })?;
        Ok(CudnnLstm {
            handle,
            x: alloc(
                stream,
                "the LSTM's input",
                (l.seq * l.batch * l.input) as usize * elt,
            )?,
            y: alloc(
                stream,
                "the LSTM's output",
                (l.seq * l.batch * l.hidden) as usize * elt,
            )?,
            hx: alloc(stream, "the LSTM's initial hidden state", bh)?,
            cx: alloc(stream, "the LSTM's initial cell state", bh)?,
            hy: alloc(stream, "the LSTM's final hidden state", bh)?,
            cy: alloc(stream, "the LSTM's final cell state", bh)?,
            weights: alloc(stream, "the LSTM's weights", weight_size)?,
            work: alloc(stream, "the LSTM's workspace", work_size)?,
            rnn,
            _dropout: dropout,
            x_desc,
            y_desc,
            h_desc,
            seq_lengths,
            _dropout_states: dropout_states,
        })
    }

    /// What `cudnnRNNForward` reads, all in the storage type, for the caller to fill with real
    /// data: the input x (seq × batch × input), the initial hidden and cell states hx and cx
    /// (batch × hidden each) and the weight space (weights and biases, laid out by cuDNN).
    pub fn inputs(&self) -> [&CudaSlice<u8>; 4] {
        [&self.x, &self.hx, &self.cx, &self.weights]
    }

    /// Enqueues one forward pass over the whole sequence on the handle's stream.
    ///
    /// # Errors
    /// cuDNN rejected the call.
    pub fn forward(&mut self) -> Result<(), DnnError> {
        let s = &self.handle.stream;
        let (lengths, _g0) = self.seq_lengths.device_ptr(s);
        let (x, _g1) = self.x.device_ptr(s);
        let (y, _g2) = self.y.device_ptr_mut(s);
        let (hx, _g3) = self.hx.device_ptr(s);
        let (hy, _g4) = self.hy.device_ptr_mut(s);
        let (cx, _g5) = self.cx.device_ptr(s);
        let (cy, _g6) = self.cy.device_ptr_mut(s);
        let weight_size = self.weights.len();
        let (w, _g7) = self.weights.device_ptr(s);
        let work_size = self.work.len();
        let (work, _g8) = self.work.device_ptr_mut(s);
        // SAFETY: every buffer was sized from the descriptors (cuDNN's own size queries for the
        // weights and workspace) and lives until the call is enqueued; inference mode needs no
        // reserve space.
        #[allow(unsafe_code)]
        unsafe {
            check(
                "cudnnRNNForward",
                dnn::cudnnRNNForward(
                    self.handle.raw,
                    self.rnn.0,
                    dnn::cudnnForwardMode_t::CUDNN_FWD_MODE_INFERENCE,
                    lengths as *const i32,
                    self.x_desc.0,
                    x as *const c_void,
                    self.y_desc.0,
                    y as *mut c_void,
                    self.h_desc.0,
                    hx as *const c_void,
                    hy as *mut c_void,
                    self.h_desc.0,
                    cx as *const c_void,
                    cy as *mut c_void,
                    weight_size,
                    w as *const c_void,
                    work_size,
                    work as *mut c_void,
                    0,
                    ptr::null_mut(),
                ),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algorithms_are_listed_in_enum_order() {
        for (i, a) in Algo::ALL.iter().enumerate() {
            assert_eq!(a.raw() as usize, i, "{}", a.key());
        }
        assert_eq!(
            Algo::ALL.len(),
            dnn::cudnnRNNAlgo_t::CUDNN_RNN_ALGO_COUNT as usize
        );
    }
}
