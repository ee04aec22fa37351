//! What a call's own record cannot say but the model and the run can: the fields of a Hugging
//! Face `config.json` that the mixture-of-experts rules need ([`ModelConfig`], read from the
//! file's text, which the caller hands over), and the tensor and expert parallelism of the run
//! ([`Parallel`], given or read from the trace's `distributedInfo`), gathered in the [`Context`]
//! every rule is applied in.
//!
//! The field names are those of the models' configuration classes in `transformers`
//! (`GptOssConfig`, `MixtralConfig`, `Qwen3MoeConfig`, `DeepseekV3Config`): the experts
//! (`num_local_experts`, `num_experts`, `n_routed_experts`), the experts chosen per token
//! (`num_experts_per_tok`, `experts_per_token`), the experts' feed-forward width
//! (`moe_intermediate_size`, else `intermediate_size`), the shared experts
//! (`shared_expert_intermediate_size`, or `n_shared_experts` × `moe_intermediate_size`), the
//! hidden width (`hidden_size`), and the weights' storage (`quantization_config.quant_method`,
//! else `torch_dtype` or `dtype`). A multimodal model's text model is read from its
//! `text_config`.

use serde_json::{Map, Value};

use super::Dtype;

/// How the experts' weights are stored, per weight element, scales included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WeightFormat {
    /// Unquantized, in this type (`torch_dtype`).
    Plain(Dtype),
    /// OCP MXFP4 (`quant_method: "mxfp4"`): a 4-bit E2M1 value and, per block of 32, one
    /// 8-bit E8M0 scale: 4 + 8/32 bits, 0.53125 bytes per weight.
    Mxfp4,
    /// FP8 with one FP32 scale per block of this many weights (`quant_method: "fp8"` with
    /// `weight_block_size` `[128, 128]`: 16,384), or per tensor (none given: one scale per
    /// expert matrix, counted with the matrix).
    Fp8 {
        /// Weights per FP32 scale, when block-scaled.
        block: Option<u64>,
    },
    /// A quantization method the rules do not know (`awq`, `gptq`, `compressed-tensors`…):
    /// the weights' size is unknown.
    Unknown,
}

impl WeightFormat {
    /// Bytes per weight element, scales included (per-tensor scales excepted: a few bytes per
    /// matrix, counted by the rule that reads the matrices); `None` when unknown.
    pub fn bytes(self) -> Option<f64> {
        match self {
            WeightFormat::Plain(d) => Some(d.bytes()),
            WeightFormat::Mxfp4 => Some(0.5 + 1.0 / 32.0),
            WeightFormat::Fp8 { block: Some(b) } => Some(1.0 + 4.0 / b as f64),
            WeightFormat::Fp8 { block: None } => Some(1.0),
            WeightFormat::Unknown => None,
        }
    }

    /// How a note names it.
    pub fn describe(self) -> String {
        match self {
            WeightFormat::Plain(d) => d.name().to_string(),
            WeightFormat::Mxfp4 => "MXFP4".into(),
            WeightFormat::Fp8 { block: Some(b) } => {
                format!("FP8 with an FP32 scale per {b} weights")
            }
            WeightFormat::Fp8 { block: None } => "FP8 with a scale per matrix".into(),
            WeightFormat::Unknown => "of an unknown quantization".into(),
        }
    }
}

/// The fields of a model's `config.json` that the rules read; each `None` when the file does
/// not give it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ModelConfig {
    /// `hidden_size`.
    pub hidden_size: Option<u64>,
    /// The routed experts: `num_local_experts`, `num_experts` or `n_routed_experts`.
    pub experts: Option<u64>,
    /// The experts each token is routed to: `num_experts_per_tok` or `experts_per_token`.
    pub top_k: Option<u64>,
    /// One expert's feed-forward width: `moe_intermediate_size`, else `intermediate_size`.
    pub expert_ffn: Option<u64>,
    /// The shared experts' feed-forward width, all of them together:
    /// `shared_expert_intermediate_size`, else `n_shared_experts` × `moe_intermediate_size`.
    pub shared_ffn: Option<u64>,
    /// How the weights are stored.
    pub weights: Option<WeightFormat>,
}

/// Why a model configuration could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelConfigError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    Json(String),
    /// JSON, but not an object.
    #[error("not a model configuration: a Hugging Face config.json is a JSON object")]
    NotObject,
    /// An object without a model's fields.
    #[error(
        "not a model configuration: it has neither model_type nor hidden_size, as a Hugging Face config.json has"
    )]
    NotModel,
    /// A field of the wrong kind.
    #[error("`{field}` is {value}, not a positive integer")]
    Field {
        /// The field.
        field: &'static str,
        /// Its value as written.
        value: String,
    },
}

impl ModelConfig {
    /// Reads a Hugging Face `config.json` from its text.
    ///
    /// # Errors
    /// [`ModelConfigError`]: not JSON, not an object, a count that is not a positive integer.
    pub fn from_json(text: &str) -> Result<ModelConfig, ModelConfigError> {
        let root: Value =
            serde_json::from_str(text).map_err(|e| ModelConfigError::Json(e.to_string()))?;
        let Value::Object(top) = &root else {
            return Err(ModelConfigError::NotObject);
        };
        // A multimodal model keeps its language model's fields in `text_config`.
        let text = match top.get("text_config") {
            Some(Value::Object(t)) if !top.contains_key("hidden_size") => t,
            _ => top,
        };
        if !["model_type", "hidden_size"]
            .iter()
            .any(|k| top.contains_key(*k) || text.contains_key(*k))
        {
            return Err(ModelConfigError::NotModel);
        }
        let int = |field: &'static str| -> Result<Option<u64>, ModelConfigError> {
            match text.get(field).or_else(|| top.get(field)) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v > 0) => Ok(n.as_u64()),
                Some(v) => Err(ModelConfigError::Field {
                    field,
                    value: v.to_string(),
                }),
            }
        };
        let first = |fields: &[&'static str]| -> Result<Option<u64>, ModelConfigError> {
            for f in fields {
                if let Some(v) = int(f)? {
                    return Ok(Some(v));
                }
            }
            Ok(None)
        };
        let moe_ffn = int("moe_intermediate_size")?;
        let shared_ffn = match int("shared_expert_intermediate_size")? {
            Some(s) => Some(s),
            None => match (int("n_shared_experts")?, moe_ffn) {
                (Some(n), Some(f)) => Some(n * f),
                _ => None,
            },
        };
        Ok(ModelConfig {
            hidden_size: int("hidden_size")?,
            experts: first(&["num_local_experts", "num_experts", "n_routed_experts"])?,
            top_k: first(&["num_experts_per_tok", "experts_per_token"])?,
            expert_ffn: match moe_ffn {
                Some(f) => Some(f),
                None => int("intermediate_size")?,
            },
            shared_ffn,
            weights: weights(top, text),
        })
    }
}

/// The weights' storage: `quantization_config` when there is one, else the checkpoint's type.
fn weights(top: &Map<String, Value>, text: &Map<String, Value>) -> Option<WeightFormat> {
    let quant = top
        .get("quantization_config")
        .or_else(|| text.get("quantization_config"));
    if let Some(Value::Object(q)) = quant {
        return Some(match q.get("quant_method").and_then(Value::as_str) {
            Some("mxfp4") => WeightFormat::Mxfp4,
            Some("fp8") => WeightFormat::Fp8 {
                block: match q.get("weight_block_size") {
                    Some(Value::Array(b)) => b
                        .iter()
                        .map(Value::as_u64)
                        .collect::<Option<Vec<u64>>>()
                        .filter(|b| !b.is_empty() && b.iter().all(|&d| d > 0))
                        .map(|b| b.iter().product()),
                    _ => None,
                },
            },
            _ => WeightFormat::Unknown,
        });
    }
    let dtype = ["torch_dtype", "dtype"]
        .iter()
        .find_map(|k| text.get(*k).or_else(|| top.get(*k)).and_then(Value::as_str))?;
    Some(match dtype {
        "bfloat16" => WeightFormat::Plain(Dtype::Bf16),
        "float16" | "half" => WeightFormat::Plain(Dtype::F16),
        "float32" | "float" => WeightFormat::Plain(Dtype::F32),
        _ => WeightFormat::Unknown,
    })
}

/// Where a parallelism's size came from, for the notes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParallelFrom {
    /// Given to the import (`--tensor-parallel`, `--expert-parallel`).
    Given,
    /// The trace's `distributedInfo.world_size`, every process group it lists of that size or
    /// of one rank: no pipeline or data parallelism assumed.
    WorldSize,
    /// The trace has no `distributedInfo`: `torch.distributed` was not initialised, so the run
    /// had one rank.
    NotDistributed,
    /// Expert parallelism not given: vLLM's and SGLang's default, none.
    Default,
}

/// A parallelism's size and where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parallel {
    /// The number of ranks.
    pub size: u64,
    /// Where it came from.
    pub from: ParallelFrom,
}

impl Parallel {
    /// How a note says it: `tensor parallelism 8 (the trace's world size; pipeline and data
    /// parallelism taken as none)`.
    pub fn describe(self, what: &str) -> String {
        let from = match self.from {
            ParallelFrom::Given => "given",
            ParallelFrom::WorldSize => {
                "the trace's world size; pipeline and data parallelism taken as none"
            }
            ParallelFrom::NotDistributed => "no distributedInfo: torch.distributed not initialised",
            ParallelFrom::Default => "not given: none, the serving engines' default",
        };
        format!("{what} {} ({from})", self.size)
    }
}

/// What every rule is applied with beyond a call's own record.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Context {
    /// The model's configuration (`--model-config`), when given.
    pub model: Option<ModelConfig>,
    /// The tensor parallelism, when known.
    pub tensor_parallel: Option<Parallel>,
    /// The expert parallelism, when known.
    pub expert_parallel: Option<Parallel>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gpt-oss-120b's `config.json` fields as `transformers`' `GptOssConfig` defines them (its
    /// defaults are that model's), with the checkpoint's MXFP4 quantization.
    const GPT_OSS: &str = r#"{"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
      "hidden_size": 2880, "intermediate_size": 2880, "num_local_experts": 128,
      "num_experts_per_tok": 4, "experts_per_token": 4, "num_attention_heads": 64,
      "num_key_value_heads": 8, "head_dim": 64, "num_hidden_layers": 36,
      "quantization_config": {"quant_method": "mxfp4"}, "torch_dtype": "bfloat16"}"#;

    #[test]
    fn a_moe_models_config_is_read() {
        let c = ModelConfig::from_json(GPT_OSS).unwrap();
        assert_eq!(c.hidden_size, Some(2880));
        assert_eq!(
            (c.experts, c.top_k, c.expert_ffn),
            (Some(128), Some(4), Some(2880))
        );
        assert_eq!(c.shared_ffn, None);
        assert_eq!(c.weights, Some(WeightFormat::Mxfp4));
        assert_eq!(WeightFormat::Mxfp4.bytes(), Some(0.53125));
        // DeepSeek-V3's names: routed experts, the experts' own width, shared experts, FP8
        // weights with a scale per 128×128 block.
        let ds = ModelConfig::from_json(
            r#"{"hidden_size": 7168, "intermediate_size": 18432, "moe_intermediate_size": 2048,
            "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8,
            "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]}}"#,
        )
        .unwrap();
        assert_eq!(
            (ds.experts, ds.expert_ffn, ds.shared_ffn),
            (Some(256), Some(2048), Some(2048))
        );
        assert_eq!(ds.weights, Some(WeightFormat::Fp8 { block: Some(16384) }));
        assert_eq!(ds.weights.unwrap().bytes(), Some(1.0 + 4.0 / 16384.0));
        // A multimodal model's text model, unquantized.
        let mm = ModelConfig::from_json(
            r#"{"model_type": "x", "text_config": {"hidden_size": 64, "num_experts": 8,
            "num_experts_per_tok": 2, "moe_intermediate_size": 32, "torch_dtype": "bfloat16"}}"#,
        )
        .unwrap();
        assert_eq!(
            (mm.hidden_size, mm.experts, mm.expert_ffn),
            (Some(64), Some(8), Some(32))
        );
        assert_eq!(mm.weights, Some(WeightFormat::Plain(Dtype::Bf16)));
        // A dense model: no experts, nothing invented.
        let dense = ModelConfig::from_json(r#"{"hidden_size": 4096}"#).unwrap();
        assert_eq!(
            (dense.experts, dense.top_k, dense.weights),
            (None, None, None)
        );
        let awq = ModelConfig::from_json(
            r#"{"hidden_size": 64, "quantization_config": {"quant_method": "awq"}}"#,
        );
        assert_eq!(awq.unwrap().weights, Some(WeightFormat::Unknown));
    }

    #[test]
    fn what_is_not_a_config_is_refused() {
        assert!(matches!(
            ModelConfig::from_json("{"),
            Err(ModelConfigError::Json(_))
        ));
        assert_eq!(
            ModelConfig::from_json("[1]"),
            Err(ModelConfigError::NotObject)
        );
        // A trace is JSON and an object, but no model's configuration.
        assert_eq!(
            ModelConfig::from_json(r#"{"traceEvents": []}"#),
            Err(ModelConfigError::NotModel)
        );
        assert_eq!(
            ModelConfig::from_json(r#"{"model_type": "x", "num_experts_per_tok": -4}"#),
            Err(ModelConfigError::Field {
                field: "num_experts_per_tok",
                value: "-4".into()
            })
        );
    }
}
