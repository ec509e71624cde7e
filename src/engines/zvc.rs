//! ZVC (cDMA, HPCA'18) in the registry: `model::zvc`, `rtl::zvc`, `cosim::zvc`.

use super::{Engine, EvalOutput, EvalRequest, Identity, UnitDesign};
use crate::config::Config;
use crate::cosim::run::Stimulus;
use crate::cosim::zvc as bench;
use crate::hdl::Module;
use crate::model::container;
use crate::synth::paper::PaperMark;
use std::sync::Arc;

/// The ZVC engine: compressor and decompressor of zero-value compression.
pub struct Zvc;

impl Engine for Zvc {
    /// The ZVC units' gate-level netlists build and run in minutes.
    fn gate_level_in_long_tier(&self) -> bool {
        true
    }

    /// ZVC is evaluated on activation traces only.
    fn has_synthetic_classes(&self) -> bool {
        false
    }

    /// cDMA Fig. 10: "six cycles" per 128 B line through the 3-stage compressor; "two
    /// additional cycles" for the decompressor.
    fn paper_mark(&self, unit: &str) -> Option<PaperMark> {
        let latency = match unit {
            "compressor" => 6,
            "decompressor" => 2,
            _ => return None,
        };
        Some(PaperMark {
            latency: Some(latency),
            ..PaperMark::default()
        })
    }

    /// cDMA gives the compressor's line latency (3 stages, 4 sectors), which counts as ours
    /// does; the decompressor's "additional cycles" come after the accepting one.
    fn latency_as_ours(&self, unit: &str, published: u32) -> u32 {
        match unit {
            "compressor" => published,
            _ => published + 1,
        }
    }

    fn id(&self) -> &'static Identity {
        &Identity {
            name: "zvc",
            section: "zvc",
            title: "ZVC",
            about: "Zero-value compression of DMA traffic (Rhu et al., cDMA, HPCA'18): a 32-bit \
             mask per window of elements and the packed non-zero elements.",
            units: &["compressor", "decompressor"],
            test_units: &["loopback"],
        }
    }

    fn describe(&self, cfg: &Config) -> String {
        cfg.zvc.describe()
    }

    fn units(&self, cfg: &Config) -> Result<Vec<UnitDesign>, String> {
        let p = &cfg.zvc;
        let unit = |unit: &'static str, top: Arc<Module>| UnitDesign {
            engine: self.name(),
            unit,
            top,
            params: p.describe(),
            beat_bytes: p.beat_bytes(),
        };
        let e = |e: crate::hdl::HdlError| e.to_string();
        Ok(vec![
            unit("compressor", crate::rtl::zvc::compressor(p).map_err(e)?),
            unit("decompressor", crate::rtl::zvc::decompressor(p).map_err(e)?),
        ])
    }

    super::bench_methods!(zvc, |cfg, s| bench::StimConfig {
        max_windows: cfg.cosim.max_windows,
        ..bench::StimConfig::of(s)
    });

    fn trace_word_bits(&self, cfg: &Config) -> u32 {
        cfg.zvc.word_bits
    }

    /// Compressor → decompressor: every sector comes back with its `last`, and no error.
    /// A transfer ends on a window boundary (`last` only on a window's final sector): a
    /// transfer cut short comes back padded to its window, which the cosim scoreboard checks.
    fn round_trips(&self, cfg: &Config) -> Result<Vec<crate::formal::RoundTrip>, String> {
        let sectors = cfg.zvc.window / cfg.zvc.lanes;
        let top = self.cosim_top(cfg, "loopback")?;
        let bits = 8.max(sectors.trailing_zeros() + 2);
        let assume = (sectors > 1)
            .then(|| {
                let tz = sectors.trailing_zeros();
                format!(
                    "!s_last_i | (f_in_n_q[{}:0] == {tz}'d{})",
                    tz - 1,
                    sectors - 1
                )
            })
            .into_iter()
            .collect();
        Ok(vec![crate::formal::RoundTrip::framed(
            top,
            "data",
            assume,
            (sectors, 1),
            bits,
        )])
    }

    /// The decompressor's error flag, per transfer: a stream that does not end on a window
    /// boundary (FORMATS §3.3).
    fn error_flags(&self, cfg: &Config) -> Result<Vec<crate::formal::ErrorFlag>, String> {
        let top = crate::rtl::zvc::decompressor(&cfg.zvc).map_err(|e| e.to_string())?;
        Ok(vec![super::zvc_flags::decompressor(top, &cfg.zvc)])
    }

    /// The compression ratio of one trace beside RLE and zlib.
    fn eval(&self, cfg: &Config, req: &EvalRequest) -> Result<EvalOutput, String> {
        if !req.classes.is_empty() || req.traces.len() != 1 {
            return Err("eval --engine zvc takes exactly one --trace (no --class)".into());
        }
        req.check_options(self.name(), &[])?;
        let trace = &req.traces[0];
        let t = crate::trace::file::load_trace_exact(trace, cfg.zvc.word_bits, "zvc.word_bits")
            .map_err(|e| e.to_string())?;
        let c = crate::model::compare::compare(&t.elems, &cfg.zvc.model());
        let md = format!(
            "trace: {} ({} elements of {} bits)\n{}",
            trace.display(),
            t.elems.len(),
            t.word_bits,
            c.to_markdown()
        );
        EvalOutput::new(&c, md)
    }

    fn compress(&self, cfg: &Config, data: &[u8]) -> Result<super::Packed, String> {
        let p = cfg.zvc.model();
        let bytes = container::compress_file(&p, data).map_err(|e| e.to_string())?;
        let stats = zvc_stats(&p, data, bytes.len());
        Ok(super::Packed { bytes, stats })
    }

    fn decompress(&self, data: &[u8]) -> Result<super::Packed, String> {
        // The engine check every engine makes, with the same message.
        super::files::open(container::ENGINE_ZVC, data)?;
        let bytes = container::decompress_file(data).map_err(|e| e.to_string())?;
        let h = container::parse_header(data).map_err(|e| e.to_string())?;
        let p: crate::model::zvc::ZvcParams =
            container::read_params(&h, "zvc").map_err(|e| e.to_string())?;
        let stats = zvc_stats(&p, &bytes, data.len());
        Ok(super::Packed { bytes, stats })
    }
}

/// `--stats` for ZVC: windows by their count of non-zero elements (quarters of the window).
fn zvc_stats(p: &crate::model::zvc::ZvcParams, data: &[u8], stored: usize) -> String {
    let wb = p.word_bytes();
    let win = p.window;
    let mut buckets = [0u64; 5];
    let mut windows = 0u64;
    for w in data.chunks(wb * win) {
        let nz = w.chunks(wb).filter(|e| e.iter().any(|&b| b != 0)).count();
        let b = if nz == 0 {
            0
        } else {
            1 + (4 * (nz - 1) / win).min(3)
        };
        buckets[b] += 1;
        windows += 1;
    }
    let mut s = format!(
        "zvc: {windows} windows of {win} x {} bits, {} -> {stored} bytes (ratio {:.3})\n\n\
         | Non-zero elements per window | Windows | Share |\n|---|---:|---:|\n",
        p.word_bits,
        data.len(),
        data.len() as f64 / stored.max(1) as f64
    );
    let q = win / 4;
    let names = [
        "0".to_string(),
        format!("1-{q}"),
        format!("{}-{}", q + 1, 2 * q),
        format!("{}-{}", 2 * q + 1, 3 * q),
        format!("{}-{win}", 3 * q + 1),
    ];
    for (n, c) in names.iter().zip(buckets) {
        s.push_str(&format!(
            "| {n} | {c} | {:.1} % |\n",
            100.0 * c as f64 / windows.max(1) as f64
        ));
    }
    s
}
