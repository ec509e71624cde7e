//! Helpers shared by the integration tests.

use hwzip::config::Config;

/// The smallest configuration of every engine that still builds each unit (quick Verilator
/// builds and synthesis), with MC queues of `queue_beats` beats (0: none).
pub fn small_config(queue_beats: u32) -> Config {
    Config::from_yaml(&format!(
        "zvc: {{word_bits: 8, lanes: 4, window: 8}}\n\
         base_xor: {{t_bytes: 16}}\n\
         adaptive: {{line_bytes: 32}}\n\
         cpack_lossy: {{codec: {{block_bytes: 32, t_table: [0, 8, 16, 16]}}, \
         md_cache: {{sets: 2, line_bytes: 16, mshrs: 2}}, \
         queues: {{req_beats: {queue_beats}, rsp_beats: {queue_beats}}}}}\n\
         buddy: {{bpc: {{entry_bytes: 32, dec_tokens: 2}}, \
         meta: {{size_bytes: 1024, mshrs: 2, mshr_slots: 2}}}}\n"
    ))
    .expect("the small configuration parses")
}
