use async_trait::async_trait;
use resilience4rs::{circuit_breaker, CallError};

pub struct MailError;

#[async_trait]
pub trait Mailer {
    async fn bump(&mut self) -> Result<u32, MailError>;
}

pub struct Smtp {
    sent: u32,
}

#[async_trait]
impl Mailer for Smtp {
    #[circuit_breaker(name = "mail", fallback = "bump_fallback")]
    async fn bump(&mut self) -> Result<u32, MailError> {
        self.sent += 1;
        Ok(self.sent)
    }
}

impl Smtp {
    async fn bump_fallback(&mut self, _e: CallError<MailError>) -> Result<u32, MailError> {
        Ok(0)
    }
}

fn main() {}
