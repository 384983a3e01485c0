//! Feeds arbitrary bytes to the YAML and `.properties` loaders: any input must load or fail
//! with an error, never panic, overflow the stack or run away in time or memory.
#![no_main]

use breaker_config::{Format, Limits, Loader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let loader = Loader::new().env(Default::default()).limits(Limits {
        max_file_bytes: 256 * 1024,
        ..Limits::default()
    });
    for format in [Format::Yaml, Format::Properties] {
        if let Ok(loaded) = loader.load_str("fuzz.yml", format, &text) {
            let _ = breaker_config::json::report(&loaded);
        }
    }
});
