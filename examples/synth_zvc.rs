use hwzip::rtl::zvc::*;
use hwzip::synth::*;
fn main() {
    let p = ZvcRtlParams::default();
    let lib = std::env::args()
        .nth(1)
        .unwrap_or("/work/shared/pdk/nangate45_typ.lib.gz".into());
    let clk: f64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1.0);
    for top in [compressor(&p).unwrap(), decompressor(&p).unwrap()] {
        let dir = std::path::PathBuf::from(format!("/tmp/syn/{}", top.name));
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = vec![];
        for (name, text) in hwzip::hdl::emit::emit_design(&top).unwrap() {
            let f = dir.join(&name);
            std::fs::write(&f, text).unwrap();
            files.push(f);
        }
        let mut job = SynthJob::new(
            top.name.clone(),
            files,
            Liberty::load(&lib).unwrap(),
            dir.join("work"),
        );
        job.clock_ns = clk;
        job.clock_port = Some("clk_i".into());
        match synthesize(&job) {
            Ok(r) => println!("{} cells={} seq={} area={:.0} kGE={:.2} cp={:.3} fmax={:.0} from {} to {} ({:.0}s+{:.0}s)", r.top, r.cells, r.seq_cells, r.area_um2, r.kge, r.critical_path_ns, r.fmax_mhz, r.path_from, r.path_to, r.yosys_seconds, r.sta_seconds),
            Err(e) => println!("{} ERROR {}", top.name, e),
        }
    }
}
