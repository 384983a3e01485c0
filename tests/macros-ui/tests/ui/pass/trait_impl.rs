//! Async methods of a trait impl (native `async fn` in traits), generic and not.
use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq)]
pub struct RepoError;

impl From<CallNotPermitted> for RepoError {
    fn from(_: CallNotPermitted) -> Self {
        RepoError
    }
}

pub trait Repo {
    async fn load(&self, id: u64) -> Result<String, RepoError>;
    async fn save(&mut self, id: u64, value: String) -> Result<(), RepoError>;
}

pub struct Remote<T> {
    items: Vec<(u64, T)>,
}

impl<T: Clone + Into<String> + From<String>> Repo for Remote<T> {
    #[circuit_breaker(name = "ui-trait", fallback = "load_fallback")]
    async fn load(&self, id: u64) -> Result<String, RepoError> {
        let found = self.items.iter().find(|(k, _)| *k == id);
        found.map(|(_, v)| v.clone().into()).ok_or(RepoError)
    }

    #[circuit_breaker(name = "ui-trait")]
    async fn save(&mut self, id: u64, value: String) -> Result<(), RepoError> {
        self.items.push((id, T::from(value)));
        Ok(())
    }
}

impl<T> Remote<T> {
    async fn load_fallback(&self, _id: u64, _e: CallError<RepoError>) -> Result<String, RepoError> {
        Ok("default".into())
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        let mut repo = Remote::<String> { items: Vec::new() };
        repo.save(1, "one".into()).await.unwrap();
        assert_eq!(repo.load(1).await, Ok("one".to_string()));
        assert_eq!(repo.load(2).await, Ok("default".to_string()));
    });
}
