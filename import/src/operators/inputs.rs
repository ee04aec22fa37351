//! What torch.profiler records of an operator call: its arguments' element types and shapes
//! (`Input type`, `Input Dims`) and, from PyTorch 2.1, the values of its scalar arguments
//! (`Concrete Inputs`), read into [`OpInputs`].

use roofline_model::bundle::Datapath;

/// One recorded operator argument: its shape when it is a tensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// A tensor of this element type and shape (`[]` for a 0-d tensor).
    Tensor(Dtype, Vec<u64>),
    /// A list of tensors (newer PyTorch records their shapes; older ones record `[]`).
    Tensors(Vec<Vec<u64>>),
    /// Anything else: a scalar, an int list, a missing optional tensor.
    Other,
}

impl Arg {
    /// The shape, when the argument is a tensor.
    pub fn shape(&self) -> Option<&[u64]> {
        match self {
            Arg::Tensor(_, s) => Some(s),
            _ => None,
        }
    }

    /// Elements of a tensor argument (1 for a 0-d tensor); 0 otherwise.
    pub fn numel(&self) -> f64 {
        match self {
            Arg::Tensor(_, s) => numel(s),
            _ => 0.0,
        }
    }

    /// Bytes of a tensor argument; 0 otherwise.
    pub fn bytes(&self) -> f64 {
        match self {
            Arg::Tensor(d, s) => numel(s) * d.bytes(),
            _ => 0.0,
        }
    }
}

pub(crate) fn numel(s: &[u64]) -> f64 {
    s.iter().map(|&d| d as f64).product()
}

/// Tensor element types, as torch.profiler names them in `Input type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `double`.
    F64,
    /// `float`.
    F32,
    /// `c10::Half`.
    F16,
    /// `c10::BFloat16`.
    Bf16,
    /// The `c10::Float8_*` types.
    F8,
    /// `long`.
    I64,
    /// `int`.
    I32,
    /// `short`.
    I16,
    /// `signed char`.
    I8,
    /// `unsigned char`.
    U8,
    /// `bool`.
    Bool,
    /// `c10::complex<float>`.
    C64,
    /// `c10::complex<double>`.
    C128,
}

impl Dtype {
    /// The type of a recorded `Input type` string; `None` for non-tensor arguments (`Scalar`,
    /// `int[]`, `TensorList`, empty).
    pub fn from_profiler(s: &str) -> Option<Dtype> {
        Some(match s {
            "double" => Dtype::F64,
            "float" => Dtype::F32,
            "c10::Half" | "Half" => Dtype::F16,
            "c10::BFloat16" | "BFloat16" => Dtype::Bf16,
            "long" | "long int" | "int64_t" => Dtype::I64,
            "int" => Dtype::I32,
            "short" => Dtype::I16,
            "signed char" => Dtype::I8,
            "unsigned char" => Dtype::U8,
            "bool" => Dtype::Bool,
            "c10::complex<float>" => Dtype::C64,
            "c10::complex<double>" => Dtype::C128,
            s if s.starts_with("c10::Float8_") => Dtype::F8,
            _ => return None,
        })
    }

    /// The type of a `ScalarType` code, as `Concrete Inputs` records a `dtype` argument (`"6"`
    /// for float): c10's `ScalarType` enumeration (`c10/core/ScalarType.h`).
    pub fn from_scalar_type(code: &str) -> Option<Dtype> {
        Some(match code.trim().parse::<u32>().ok()? {
            0 => Dtype::U8,
            1 => Dtype::I8,
            2 => Dtype::I16,
            3 => Dtype::I32,
            4 => Dtype::I64,
            5 => Dtype::F16,
            6 => Dtype::F32,
            7 => Dtype::F64,
            9 => Dtype::C64,
            10 => Dtype::C128,
            11 => Dtype::Bool,
            15 => Dtype::Bf16,
            23..=26 => Dtype::F8,
            _ => return None,
        })
    }

    /// Whether the type is an integer or boolean type (PyTorch's `isIntegralType(t,
    /// includeBool=true)`).
    pub fn is_integral(self) -> bool {
        matches!(
            self,
            Dtype::I64 | Dtype::I32 | Dtype::I16 | Dtype::I8 | Dtype::U8 | Dtype::Bool
        )
    }

    /// PyTorch's name of the type (`torch.bfloat16` without the module).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "float64",
            Dtype::F32 => "float32",
            Dtype::F16 => "float16",
            Dtype::Bf16 => "bfloat16",
            Dtype::F8 => "float8",
            Dtype::I64 => "int64",
            Dtype::I32 => "int32",
            Dtype::I16 => "int16",
            Dtype::I8 => "int8",
            Dtype::U8 => "uint8",
            Dtype::Bool => "bool",
            Dtype::C64 => "complex64",
            Dtype::C128 => "complex128",
        }
    }

    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::C64 => 8.0,
            Dtype::F32 | Dtype::I32 => 4.0,
            Dtype::F16 | Dtype::Bf16 | Dtype::I16 => 2.0,
            Dtype::F8 | Dtype::I8 | Dtype::U8 | Dtype::Bool => 1.0,
            Dtype::C128 => 16.0,
        }
    }

    /// The CUDA-core datapath of arithmetic on this type (FP32 for integer and boolean types,
    /// whose work is not counted as FLOPs anyway).
    pub fn cuda_core(self) -> Datapath {
        match self {
            Dtype::F64 | Dtype::C128 => Datapath::Fp64,
            Dtype::F16 => Datapath::Fp16,
            Dtype::Bf16 => Datapath::Bf16,
            _ => Datapath::Fp32,
        }
    }

    /// The datapath of a matrix product on this type: Tensor Cores for 16-bit, 8-bit float and
    /// int8 inputs; CUDA cores for FP32 and FP64 (TF32 and FP64 Tensor Cores depend on settings
    /// the trace does not record, see [`OpCost::assumed`](super::OpCost::assumed)).
    pub fn matmul(self) -> Datapath {
        match self {
            Dtype::F16 => Datapath::TensorFp16,
            Dtype::Bf16 => Datapath::TensorBf16,
            Dtype::F8 => Datapath::TensorFp8,
            Dtype::I8 | Dtype::U8 => Datapath::TensorInt8,
            Dtype::F64 | Dtype::C128 => Datapath::Fp64,
            _ => Datapath::Fp32,
        }
    }
}

impl Dtype {
    /// The element type a CUDA kernel's demangled name gives its data, when it names one: the
    /// first template argument that is a type name of its own (`AddFunctor<float>`,
    /// `implicit_convolve_sgemm<float, float, 1024, …>`, `BUnaryFunctor<AddFunctor<long>>`,
    /// `cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, …>`; a type inside a function's
    /// parameters, as in a lambda's `(float)`, is not one), else the precision letter of a
    /// cuBLAS or cuDNN kernel named by architecture (`volta_sgemm_128x64_nn`,
    /// `volta_scudnn_128x128_…`, `turing_h1688gemm_…`: s single, d double, h half). `None` for
    /// the others (`cask_cudnn::computeOffsetsKernel`, `volta_cgemm_32x32_tn`, whose complex
    /// numbers are an FFT convolution's intermediate).
    pub fn from_kernel_name(name: &str) -> Option<Dtype> {
        let name = name.trim_start_matches("void ");
        // Complete template arguments: the text after a `<` or `,` up to the next `,` or `>`,
        // outside parentheses and braces (a function's parameters, a lambda's).
        let mut start = None;
        for (i, c) in name.char_indices() {
            match c {
                '<' => start = Some(i + 1),
                ',' | '>' => {
                    if let Some(s) = start
                        && let Some(d) = Dtype::from_template_argument(&name[s..i])
                    {
                        return Some(d);
                    }
                    start = (c == ',').then_some(i + 1);
                }
                '(' | ')' | '{' | '}' => start = None,
                _ => {}
            }
        }
        Dtype::from_library_kernel(name)
    }

    /// One template argument's text as a type (`float`, ` c10::Half`), when it is one.
    fn from_template_argument(arg: &str) -> Option<Dtype> {
        match arg.trim() {
            "__half" | "half" => Some(Dtype::F16),
            "__nv_bfloat16" => Some(Dtype::Bf16),
            t if t.contains(['<', '>', '(', ')', ' ']) => None,
            t => Dtype::from_profiler(t),
        }
    }

    /// cuBLAS and cuDNN kernels named `<architecture>_<precision><routine>` (`volta_sgemm_…`,
    /// `maxwell_scudnn_…`, `turing_h1688gemm_…`).
    fn from_library_kernel(name: &str) -> Option<Dtype> {
        let (arch, rest) = name.split_once('_')?;
        if !["maxwell", "pascal", "volta", "turing", "ampere"].contains(&arch) {
            return None;
        }
        let routine = rest.split('_').next()?;
        let (letter, rest) = routine.split_at_checked(1)?;
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        if rest != "gemm" && rest != "cudnn" {
            return None;
        }
        match letter {
            "s" => Some(Dtype::F32),
            "d" => Some(Dtype::F64),
            "h" => Some(Dtype::F16),
            _ => None,
        }
    }
}

/// The element type of a call's tensor lists, as the name of a kernel it launched gives it
/// ([`kernel_elem`](super::kernel_elem)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListElem {
    /// A named type (`…Functor<float, …>`, `CatArrayBatchedCopy<c10::Half, …>`).
    Type(Dtype),
    /// A type known only by its size in bytes: kernels templated on PyTorch's `OpaqueType<N>`,
    /// as `cat`'s are in PyTorch 2.x (`CatArrayBatchedCopy<OpaqueType<4u>, …>`).
    Opaque(u8),
}

impl ListElem {
    /// Bytes per element.
    pub fn bytes(self) -> f64 {
        match self {
            ListElem::Type(d) => d.bytes(),
            ListElem::Opaque(n) => f64::from(n),
        }
    }

    /// The CUDA-core datapath: the type's; FP32 for an opaque type (the operators with tensor
    /// lists are bytes only: no FLOPs are counted on it, as for integer types).
    pub fn cuda_core(self) -> Datapath {
        match self {
            ListElem::Type(d) => d.cuda_core(),
            ListElem::Opaque(_) => Datapath::Fp32,
        }
    }

    /// How a note names it: `float32`, `a 4-byte type`.
    pub fn describe(self) -> String {
        match self {
            ListElem::Type(d) => d.name().to_string(),
            ListElem::Opaque(n) => format!("a {n}-byte type"),
        }
    }
}

/// What torch.profiler recorded for one operator call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpInputs {
    /// One entry per argument, from `Input Dims` and `Input type`.
    pub args: Vec<Arg>,
    /// `Concrete Inputs`: the values of scalar arguments as text (`"[2, 2]"`, `"True"`, `""`),
    /// when the trace has them.
    pub concrete: Option<Vec<String>>,
    /// The element type of the tensor-list arguments ([`Arg::Tensors`]), which torch.profiler
    /// records only as `TensorList`: the import reads it from the name of a kernel the call
    /// launched ([`kernel_elem`](super::kernel_elem)). `None` when unknown.
    pub list_elem: Option<ListElem>,
    /// Shapes this call's own arguments do not record but the trace does elsewhere, found by the
    /// import ([`Derived`]).
    pub derived: Derived,
    /// Arguments recorded with a shape but an element type the rules do not know (a new
    /// PyTorch's `c10::Float4_e2m1fn_x2`), or with none at all (PyTorch 1.8 leaves `Input type`
    /// empty: the recorded type is then `""`): their index, recorded type and shape. They are
    /// [`Arg::Other`] in [`Self::args`]; a rule that needed one says which ([`super::op_cost`]),
    /// and the import gives the untyped ones the element type the trace names elsewhere
    /// ([`Self::typed_as`]).
    pub untyped: Vec<(usize, Box<str>, Vec<u64>)>,
    /// Whether the call was recorded with no element types at all (PyTorch 1.8's empty
    /// `Input type`), its shapes then in [`Self::untyped`] (a `[]`, a scalar or a 0-d tensor
    /// alike, stays [`Arg::Other`]).
    pub no_types: bool,
}

/// Shapes of a call that the trace records elsewhere than in the call's own arguments, found by
/// the import so that a rule need not assume what it was not told.
///
/// Before `Concrete Inputs` (PyTorch 2.1) a convolution's stride, padding and dilation are not
/// recorded, but its output's shape is: the autograd node the call made (same `Sequence number`)
/// records the gradient of the output as its input, and the backward calls record it as
/// `grad_output`. The halves of a PyTorch 1.8–1.10 convolution backward
/// (`cudnn_convolution_backward_input(self_size, grad_output, weight, …)`) record the input's
/// size as an integer list, whose values are not recorded either; the enclosing
/// `cudnn_convolution_backward(self, grad_output, weight, …)` records it as a tensor.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Derived {
    /// The shape of the call's (first) output.
    pub output: Option<Vec<u64>>,
    /// The shape of the call's input (`self`), when its own arguments give only its size as an
    /// unrecorded integer list.
    pub input: Option<Vec<u64>>,
    /// The shape of the call's weight, likewise (`weight_size`).
    pub weight: Option<Vec<u64>>,
    /// Which gradients a backward call computes (input, weight), when its `output_mask` is not
    /// recorded but the calls inside it say.
    pub grads: Option<[bool; 2]>,
    /// Where [`Self::output`] came from, for the import's notes.
    pub output_from: Option<OutputFrom>,
}

/// What in the trace gave a forward convolution's output shape ([`Derived::output`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OutputFrom {
    /// The autograd node the call made (same `Sequence number`, PyTorch 1.9 and later): the
    /// gradient of the output it records.
    AutogradNode,
    /// The backward calls with the same input and weight shapes (PyTorch 1.8 records no sequence
    /// numbers): the output gradient they all record.
    Backward,
    /// The input of the operator called next (this operator), which reads the output.
    NextOperator(Box<str>),
}

impl OpInputs {
    /// Whether tensors were recorded with their shapes but no element type at all (PyTorch
    /// 1.8's empty `Input type`).
    pub fn types_unrecorded(&self) -> bool {
        self.no_types || self.untyped.iter().any(|(_, ty, _)| ty.is_empty())
    }

    /// The call with its untyped tensors ([`Self::types_unrecorded`]) read as tensors of `dt`,
    /// the element type the trace names elsewhere (the kernels the call launched).
    pub fn typed_as(&self, dt: Dtype) -> OpInputs {
        let mut x = self.clone();
        x.untyped.retain(|(i, ty, s)| {
            if !ty.is_empty() {
                return true;
            }
            if let Some(a) = x.args.get_mut(*i) {
                *a = Arg::Tensor(dt, s.clone());
            }
            false
        });
        x
    }

    /// Argument `i`, or [`Arg::Other`] past the end.
    pub fn arg(&self, i: usize) -> &Arg {
        self.args.get(i).unwrap_or(&Arg::Other)
    }

    /// The shape of argument `i` when it is a tensor, typed or not (a tensor of PyTorch 1.8, which
    /// records no element types, or of a type the rules do not know).
    pub fn dims(&self, i: usize) -> Option<&[u64]> {
        match self.args.get(i) {
            Some(Arg::Tensor(_, s)) => Some(s),
            _ => self
                .untyped
                .iter()
                .find(|(j, _, _)| *j == i)
                .map(|(_, _, s)| s.as_slice()),
        }
    }

    pub(crate) fn tensor(&self, i: usize) -> Option<(Dtype, &[u64])> {
        match self.args.get(i) {
            Some(Arg::Tensor(d, s)) => Some((*d, s.as_slice())),
            _ => None,
        }
    }

    /// The concrete value of argument `i`, when recorded and not empty.
    pub(crate) fn concrete(&self, i: usize) -> Option<&str> {
        self.concrete
            .as_ref()?
            .get(i)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
    }

    /// The items of argument `i`'s concrete value read as a list (`"[2, 2]"` → `["2", "2"]`,
    /// `"1"` → `["1"]`, `"[]"` → none), when recorded and not empty.
    pub(crate) fn items(&self, i: usize) -> Option<Vec<&str>> {
        let inner = self
            .concrete(i)?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim();
        Some(if inner.is_empty() {
            Vec::new()
        } else {
            inner.split(',').map(str::trim).collect()
        })
    }

    /// A `bool[N]` argument (an `output_mask`, recorded as `"[True, False, True]"`), when
    /// recorded with N items.
    pub(crate) fn mask<const N: usize>(&self, i: usize) -> Option<[bool; N]> {
        let items = self.items(i)?;
        (items.len() == N)
            .then(|| std::array::from_fn(|j| matches!(items[j], "True" | "true" | "1")))
    }

    pub(crate) fn int_list(&self, i: usize, len: usize) -> Option<Vec<u64>> {
        let v: Vec<u64> = self
            .items(i)?
            .iter()
            .map(|x| x.parse::<u64>().ok())
            .collect::<Option<_>>()?;
        match v.len() {
            1 => Some(vec![v[0]; len]),
            n if n == len => Some(v),
            _ => None,
        }
    }

    pub(crate) fn int(&self, i: usize) -> Option<u64> {
        self.concrete(i)?.parse().ok()
    }

    /// Argument `i` as `len` non-negative integers (one value stands for all `len`): `None`
    /// when not recorded; refused when recorded as anything else (a negative, a word, another
    /// count), so that a rule never reads an impossible value as an unrecorded one.
    ///
    /// # Errors
    /// [`NoCost::Shapes`](super::NoCost::Shapes) naming the argument and its value.
    pub(crate) fn int_list_arg(
        &self,
        i: usize,
        len: usize,
        what: &str,
    ) -> Result<Option<Vec<u64>>, super::NoCost> {
        if self.concrete(i).is_none() {
            return Ok(None);
        }
        self.int_list(i, len).map(Some).ok_or_else(|| {
            super::NoCost::Shapes(format!(
                "impossible arguments: {what} {} (expected {len} non-negative integers)",
                self.concrete(i).unwrap_or_default()
            ))
        })
    }

    /// Argument `i` as a non-negative integer: `None` when not recorded; refused when recorded
    /// as anything else.
    ///
    /// # Errors
    /// [`NoCost::Shapes`](super::NoCost::Shapes) naming the argument and its value.
    pub(crate) fn int_arg(&self, i: usize, what: &str) -> Result<Option<u64>, super::NoCost> {
        match self.concrete(i) {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| {
                super::NoCost::Shapes(format!(
                    "impossible arguments: {what} {v} (expected a non-negative integer)"
                ))
            }),
        }
    }

    pub(crate) fn flag(&self, i: usize) -> Option<bool> {
        match self.concrete(i)? {
            "True" | "true" | "1" => Some(true),
            "False" | "false" | "0" => Some(false),
            _ => None,
        }
    }
}
/// The broadcast shape of two shapes, NumPy rules.
pub(crate) fn broadcast(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for (i, o) in out.iter_mut().enumerate() {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        *o = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}
