// hwzip 0.1.0 `hwzip gen --engine adaptive`: the generated modules; paths are relative
// to this file (verilator -F).
adaptive_ctrl_l64_lam6.v
adaptive_rx_l64_lam6.v
adaptive_tx_l64_lam6.v
bdi_comp_l64_e0.v
bdi_decomp_l64.v
comp_mux_egress_l64_lam6.v
cpack_comp_l64.v
cpack_decomp_l64.v
fpc_comp_l64.v
fpc_decomp_l64.v
penalty_select_l64_lam6.v
