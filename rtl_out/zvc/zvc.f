// hwzip 0.1.0 `hwzip gen --engine zvc`: the generated modules; paths are relative
// to this file (verilator -F).
zvc_comp_w32_l8_n32_bk.v
zvc_compact_xbar_w32_l8.v
zvc_decomp_w32_l8_n32_bk.v
zvc_expand_w32_l8_bk.v
