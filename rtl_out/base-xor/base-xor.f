// hwzip 0.1.0 `hwzip gen --engine base-xor`: the generated modules; paths are relative
// to this file (verilator -F).
bx_nbyte_dec_t32_n2_ks.v
bx_nbyte_dec_t32_n4_ks.v
bx_nbyte_dec_t32_n4_z32.v
bx_nbyte_dec_t32_n8_ks.v
bx_nbyte_enc_t32_n2.v
bx_nbyte_enc_t32_n4.v
bx_nbyte_enc_t32_n4_z32.v
bx_nbyte_enc_t32_n8.v
bx_univ_dec_t32_s3_lg.v
bx_univ_dec_t32_s3_z32_ser.v
bx_univ_dec_t32_s3_z32_spec.v
bx_univ_enc_t32_s3.v
bx_univ_enc_t32_s3_z32.v
bxt_dec_t32_u3_z32_spec_d8_p1.v
bxt_deser_t32_f4.v
bxt_enc_t32_u3_z32_d8_p1.v
bxt_ser_t32_f4.v
dbi_beat_dec_g8.v
dbi_beat_enc_g8.v
dbi_dc_dec_g8.v
dbi_dc_enc_g8.v
zdr7_dec_w32.v
zdr7_enc_w32.v
zdr_dec_word_w32_c40000000.v
zdr_enc_word_w32_c40000000.v
