//! Command-line arguments as Spring's `SimpleCommandLineArgsParser` reads them
//! (`SpringApplication.run(args)`): `--name=value` sets `name`, `--name` alone sets it to
//! `""`, a name given twice gets both values joined with `,`, a bare `--` ends the options,
//! and every other argument is not an option (ignored). `--=value` is refused, as Spring
//! refuses it ("Invalid argument syntax").

use std::sync::Arc;

use crate::error::LoadError;
use crate::origin::Origin;
use crate::property::{Document, Property, ValueKind};

/// The command-line document: every option, in the order first given, with its origin
/// `argument --name=value`.
///
/// Errors: [`LoadError::Syntax`] for `--=value` (an option without a name).
pub(crate) fn document(args: &[String]) -> Result<Document, LoadError> {
    // (name, values, the arguments that gave them)
    let mut options: Vec<(String, Vec<String>, Vec<&str>)> = Vec::new();
    for arg in args {
        let Some(text) = arg.strip_prefix("--") else {
            continue;
        };
        if text.is_empty() {
            break;
        }
        let (name, value) = match text.split_once('=') {
            Some(("", _)) => {
                return Err(LoadError::Syntax {
                    origin: Origin::outside(format!("argument {arg}")),
                    message: format!("Invalid argument syntax: {arg}"),
                })
            }
            Some((n, v)) => (n, Some(v)),
            None => (text, None),
        };
        match options.iter_mut().find(|(n, _, _)| n == name) {
            Some((_, values, given)) => {
                values.extend(value.map(str::to_string));
                given.push(arg);
            }
            None => options.push((
                name.to_string(),
                value.map(str::to_string).into_iter().collect(),
                vec![arg],
            )),
        }
    }
    let properties = options
        .into_iter()
        .map(|(name, values, given)| {
            let origin = Origin::outside(format!("argument {}", given.join(" ")));
            Property::new(
                name,
                values.join(","),
                ValueKind::Str,
                origin.clone(),
                origin,
            )
        })
        .filter(|p| !p.name.is_empty())
        .collect();
    Ok(Document {
        file: Arc::from(super::names::ARGS_DOCUMENT),
        index: 0,
        properties,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(args: &[&str]) -> Result<Document, LoadError> {
        document(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn options_as_spring_parses_them() {
        let d = doc(&[
            "serve",
            "--resilience4j.retry.instances.payments.max-attempts=5",
            "--debug",
            "--a=1",
            "--a=2",
            "--eq=x=y",
            "--",
            "--after=ignored",
        ])
        .unwrap();
        let pairs: Vec<(&str, &str)> = d
            .properties
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str()))
            .collect();
        assert_eq!(
            pairs,
            vec![
                ("resilience4j.retry.instances.payments.max-attempts", "5"),
                ("debug", ""),
                ("a", "1,2"),
                ("eq", "x=y"),
            ]
        );
        assert_eq!(
            d.properties[0].value_origin.to_string(),
            "argument --resilience4j.retry.instances.payments.max-attempts=5"
        );
        assert_eq!(
            d.properties[2].value_origin.to_string(),
            "argument --a=1 --a=2"
        );
    }

    #[test]
    fn an_option_without_a_name_is_refused() {
        let e = doc(&["--=5"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "argument --=5: syntax error: Invalid argument syntax: --=5"
        );
    }
}
