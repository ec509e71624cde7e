use hwzip::rtl::zvc::*;
fn main() {
    let p = ZvcRtlParams::default();
    for top in [compressor(&p).unwrap(), decompressor(&p).unwrap(), loopback(&p).unwrap()] {
        for (name, text) in hwzip::hdl::emit::emit_design(&top).unwrap() {
            std::fs::write(format!("/tmp/lint/{}", name), text).unwrap();
        }
    }
}
