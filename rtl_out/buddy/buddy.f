// hwzip 0.1.0 `hwzip gen --engine buddy`: the generated modules; paths are relative
// to this file (verilator -F).
bpc_comp_s32.v
bpc_dec_s32_k4.v
buddy_addr_gen_2m.v
buddy_mc_ctrl_2m_m8.v
buddy_size_mapper.v
buddy_zero_detect.v
cache_s8_w4_l128_sec32_f4_m4x4.v
