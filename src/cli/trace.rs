//! `hwzip trace`: a synthetic trace and its YAML description.

use std::path::PathBuf;

/// The arguments of `hwzip trace`.
#[derive(clap::Args)]
pub struct Args {
    /// all_zero | all_non_zero | uniform_random | sparse_random | clustered | relu |
    /// float_specials
    #[arg(long, default_value = "relu")]
    pub class: String,
    /// ReLU tensor shape N,C,H,W (class relu); otherwise use --elems.
    #[arg(long, value_delimiter = ',')]
    pub shape: Vec<usize>,
    /// Target sparsity for a shaped ReLU tensor [default: 0.6].
    #[arg(long, requires = "shape")]
    pub sparsity: Option<f64>,
    /// nchw | nhwc | chwn (shaped ReLU tensors) [default: nchw].
    #[arg(long, requires = "shape")]
    pub layout: Option<String>,
    /// Number of elements (unshaped classes) [default: 4096].
    #[arg(long, conflicts_with = "shape")]
    pub elems: Option<usize>,
    /// Element width in bits.
    #[arg(long, default_value_t = 32)]
    pub word_bits: u32,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output raw file; its YAML description is written beside it as <stem>.yaml (relu.bin
    /// -> relu.yaml; none beside a device or FIFO).
    pub output: PathBuf,
}

/// Runs `hwzip trace`: `Ok(false)` when it ran but something failed or mismatched.
pub fn run(args: Args) -> Result<bool, String> {
    let Args {
        class,
        shape,
        sparsity,
        layout,
        elems,
        word_bits,
        seed,
        output,
    } = args;
    use hwzip::trace::{synthetic, Layout};
    if ![8, 16, 32].contains(&word_bits) {
        return Err(format!(
            "--word-bits {} is not supported (8, 16, 32)",
            word_bits
        ));
    }
    let c = synthetic::DataClass::from_name(&class).ok_or_else(|| {
        let all: Vec<&str> = synthetic::DataClass::ALL.iter().map(|c| c.name()).collect();
        format!(
            "unknown class `{}` (known: {})",
            hwzip::files::quote(&class),
            all.join(", ")
        )
    })?;
    if !shape.is_empty() && c != synthetic::DataClass::Relu {
        return Err(format!(
            "--shape applies to --class relu only, not `{}`; use --elems",
            class
        ));
    }
    let sparsity = sparsity.unwrap_or(0.6);
    let layout = layout.unwrap_or_else(|| "nchw".into());
    let elems = elems.unwrap_or(4096);
    let lay = match layout.as_str() {
        "nchw" => Layout::Nchw,
        "nhwc" => Layout::Nhwc,
        "chwn" => Layout::Chwn,
        other => {
            return Err(format!(
                "unknown layout `{}` (nchw, nhwc, chwn)",
                hwzip::files::quote(other)
            ))
        }
    };
    let (data, desc_shape) = if c == synthetic::DataClass::Relu && !shape.is_empty() {
        if shape.len() != 4 || shape.contains(&0) || word_bits != 32 {
            return Err("--shape takes four non-zero sizes N,C,H,W of 32-bit data".into());
        }
        if !(0.0..=1.0).contains(&sparsity) {
            return Err(format!("--sparsity {} must be in [0, 1]", sparsity));
        }
        let s = [shape[0], shape[1], shape[2], shape[3]];
        s.iter()
            .try_fold(1usize, |a, &x| a.checked_mul(x))
            .filter(|&n| n <= MAX_TRACE_ELEMS)
            .ok_or_else(|| {
                format!(
                    "--shape {}x{}x{}x{} is more than {} elements",
                    s[0], s[1], s[2], s[3], MAX_TRACE_ELEMS
                )
            })?;
        (
            synthetic::relu_tensor(s, sparsity, lay, seed),
            Some(shape.clone()),
        )
    } else {
        if elems == 0 || elems > MAX_TRACE_ELEMS {
            return Err(format!(
                "--elems {} must be in 1..={}",
                elems, MAX_TRACE_ELEMS
            ));
        }
        (c.generate(elems, word_bits, seed), None)
    };
    let yaml_path = output.with_extension("yaml");
    if yaml_path == output {
        return Err(format!(
            "output {} would be overwritten by its own description (<stem>.yaml): \
             give the data file another extension, e.g. .bin",
            output.display()
        ));
    }
    let special = hwzip::files::is_special(&output);
    hwzip::trace::file::write_raw(&output, &data, word_bits).map_err(|e| e.to_string())?;
    if special {
        // A device or FIFO: the data only, no sidecar next to it.
        eprintln!(
            "{}: {} elements of {} bits (no description beside a special file)",
            output.display(),
            data.len(),
            word_bits
        );
        return Ok(true);
    }
    let file = output
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    let mut yaml = format!("file: {}\nword_bits: {}\n", file, word_bits);
    if let Some(sh) = desc_shape {
        yaml.push_str(&format!(
            "layout: {}\nshape: [{}]\n",
            layout,
            sh.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    hwzip::files::write(&yaml_path, yaml.as_bytes())?;
    let nz = data.iter().filter(|x| **x != 0).count();
    outln!(
        "{}: {} elements of {} bits, sparsity {:.3}; description {}",
        output.display(),
        data.len(),
        word_bits,
        1.0 - nz as f64 / data.len().max(1) as f64,
        yaml_path.display()
    );
    Ok(true)
}

/// Largest synthetic trace `hwzip trace` writes (2^28 elements, 1 GiB of 32-bit words).
const MAX_TRACE_ELEMS: usize = 1 << 28;
