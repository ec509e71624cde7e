// hwzip 0.1.0 `hwzip gen --engine buddy`: the generated modules; paths are relative
// to this file (verilator -F).
bpc_add_cs_w32.v
bpc_comp_s32.v
bpc_csa3_w32.v
bpc_csa4_w32.v
bpc_dec_s32_k4.v
bpc_len_sums_n2_w8.v
bpc_len_sums_n3_w12.v
bpc_len_sums_n4_w10.v
bpc_len_sums_n4_w8.v
bpc_merge_w128_w128a10_w128a10_w128a10_c768.v
bpc_merge_w129_w128a10_w128a10_w128a10_c768.v
bpc_merge_w32_w32a8_c768.v
bpc_merge_w32_w32a8_w32a8_w32a8_c768.v
bpc_merge_w33_w32a8_w32a8_w32a8_c768.v
bpc_merge_w513_w512a12_w64a12_c768.v
bpc_plane_cls_b31.v
bpc_plane_tok_s32.v
bpc_tok_plane_b31.v
bpc_zrun_scan_p33_r5.v
buddy_addr_gen_2m.v
buddy_mc_ctrl_2m_m8.v
buddy_size_mapper.v
buddy_zero_detect.v
cache_s8_w4_l128_sec32_f4_m4x4.v
ram_128x256_be4.v
