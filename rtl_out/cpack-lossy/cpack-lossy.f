// hwzip 0.1.0 `hwzip gen --engine cpack-lossy`: the generated modules; paths are relative
// to this file (verilator -F).
cache_s16_w2_l128_sec128_f8_m10x4.v
cpack_lossy_comp_b128.v
cpack_lossy_decomp_b128.v
cpack_lossy_mc_b128.v
cpack_lossy_pos_off_p256_s64.v
cpack_lossy_reqsize_b128.v
cpack_lossy_restore_b128.v
cpack_lossy_sizer_b128.v
cpack_lossy_slot_grid_w128_g2.v
cpack_lossy_tok_pick_l2_h34.v
cpack_lossy_tok_pick_l4_h68.v
cpack_lossy_tok_pick_l6_h102.v
cpack_lossy_trunc_b128.v
ram_32x1024_be8.v
ram_32x137.v
