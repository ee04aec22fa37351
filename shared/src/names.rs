//! Short display names for demangled CUDA kernel names.
//!
//! `void at::native::reduce_kernel<512, 1, ReduceOp<float>>(ReduceOp<float>)` becomes
//! `reduce_kernel`: the return type, namespaces, template arguments and parameter list go.

/// Shortens a demangled kernel name to its bare identifier; returns the input when it has no
/// recognisable structure.
pub fn shorten(full: &str) -> String {
    // Keep only depth-0 characters (drop everything inside <...> and (...)), remembering where
    // the first depth-0 parameter list starts so that the signature ends there. The text
    // "(anonymous namespace)" is a namespace, not a parameter list.
    let mut out = String::with_capacity(full.len());
    let mut depth = 0usize;
    let mut rest = full;
    while let Some(c) = rest.chars().next() {
        if depth == 0 && rest.starts_with("(anonymous namespace)") {
            rest = &rest["(anonymous namespace)".len()..];
            continue;
        }
        match c {
            '<' | '(' | '[' => {
                if depth == 0 && c == '(' && !out.trim().is_empty() {
                    break;
                }
                depth += 1;
            }
            '>' | ')' | ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
        rest = &rest[c.len_utf8()..];
    }
    let last_word = out.split_whitespace().last().unwrap_or("");
    let ident = last_word.rsplit("::").find(|s| !s.is_empty()).unwrap_or("");
    if ident.is_empty() {
        full.trim().to_string()
    } else {
        ident.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn strips_signature_templates_and_namespaces() {
        assert_eq!(
            shorten(
                "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(at::native::ReduceOp<float>)"
            ),
            "reduce_kernel"
        );
        assert_eq!(
            shorten("cudnn::gemm::computeOffsetsKernel(cudnn::gemm::ComputeOffsetsParams)"),
            "computeOffsetsKernel"
        );
        assert_eq!(
            shorten(
                "void at::native::(anonymous namespace)::cunn_SpatialSoftMaxForward<float, float>(float*, float const*)"
            ),
            "cunn_SpatialSoftMaxForward"
        );
        assert_eq!(
            shorten("volta_fp16_sgemm_fp16_128x32_nt"),
            "volta_fp16_sgemm_fp16_128x32_nt"
        );
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        assert_eq!(shorten(""), "");
        assert_eq!(shorten("((("), "(((");
        assert_eq!(shorten(">>>"), ">>>");
        assert_eq!(shorten("::"), "::");
        assert_eq!(shorten("ü<ö>(ä)"), "ü");
    }
}
