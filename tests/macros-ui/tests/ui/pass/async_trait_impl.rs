//! Methods of an `#[async_trait]` impl: `#[async_trait]` on the impl, `#[circuit_breaker]` on
//! the method. The trait stays object safe.
use std::sync::Arc;

use async_trait::async_trait;
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct MailError;

impl From<CallNotPermitted> for MailError {
    fn from(_: CallNotPermitted) -> Self {
        MailError
    }
}

#[async_trait]
pub trait Mailer: Send + Sync {
    async fn send(&self, to: String) -> Result<u32, MailError>;
    async fn count(&self) -> Result<u32, MailError>;
    async fn bump(&mut self) -> Result<u32, MailError>;
}

pub struct Smtp {
    sent: u32,
}

#[async_trait]
impl Mailer for Smtp {
    #[circuit_breaker(name = "ui-async-trait", fallback = "send_fallback")]
    async fn send(&self, to: String) -> Result<u32, MailError> {
        if to.is_empty() {
            return Err(MailError);
        }
        Ok(self.sent + 1)
    }

    #[circuit_breaker(name = "ui-async-trait")]
    async fn count(&self) -> Result<u32, MailError> {
        Ok(self.sent)
    }

    #[circuit_breaker(name = "ui-async-trait", fallback = "Self::bump_fallback")]
    async fn bump(&mut self) -> Result<u32, MailError> {
        self.sent += 1;
        Ok(self.sent)
    }
}

impl Smtp {
    async fn send_fallback(&self, _to: String, _e: CallError<MailError>) -> Result<u32, MailError> {
        Ok(0)
    }

    async fn bump_fallback(_e: CallError<MailError>) -> Result<u32, MailError> {
        Ok(0)
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut smtp = Smtp { sent: 1 };
        assert_eq!(smtp.bump().await, Ok(2));
        let mailer: Arc<dyn Mailer> = Arc::new(smtp);
        assert_eq!(mailer.send("a@b".into()).await, Ok(3));
        assert_eq!(mailer.send(String::new()).await, Ok(0));
        assert_eq!(mailer.count().await, Ok(2));
    });
}
