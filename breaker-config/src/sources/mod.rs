//! The value sources Spring Boot reads besides the files (its "externalized configuration"),
//! each turned into one [`Document`] of higher precedence than every file document:
//! OS environment variables ([`env`]), `SPRING_APPLICATION_JSON` ([`app_json`]) and
//! command-line arguments ([`args`]). Lowest precedence first, as Spring Boot orders its
//! property sources: files < environment < `SPRING_APPLICATION_JSON` < command line.
//!
//! Every value keeps an [`Origin`](crate::Origin) that names its source
//! (`environment RESILIENCE4J_...`, `SPRING_APPLICATION_JSON`, `argument --...`), so
//! `breaker check` shows where it came from.

pub(crate) mod app_json;
pub(crate) mod args;
pub(crate) mod env;
pub(crate) mod names;

use std::collections::HashMap;

use crate::error::LoadError;
use crate::property::Document;

/// The documents of the environment, `SPRING_APPLICATION_JSON` and the command line, lowest
/// precedence first (append them after the file documents).
///
/// Errors: an argument Spring's `SimpleCommandLineArgsParser` refuses (`--=value`) and a
/// `SPRING_APPLICATION_JSON` that is not a JSON object ([`LoadError::Syntax`]); Spring Boot
/// does not start with either.
pub(crate) fn documents(
    env: &HashMap<String, String>,
    args: &[String],
) -> Result<Vec<Document>, LoadError> {
    let env_doc = env::document(env);
    let args_doc = args::document(args)?;
    let json = app_json::find(&args_doc, env);
    let mut out = vec![env_doc];
    if let Some((label, text)) = json {
        out.push(app_json::document(&label, &text)?);
    }
    out.push(args_doc);
    Ok(out)
}
