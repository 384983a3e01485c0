use resilience4rs::{circuit_breaker, CallNotPermitted};

pub struct RepoError;
impl From<CallNotPermitted> for RepoError {
    fn from(_: CallNotPermitted) -> Self {
        RepoError
    }
}

pub struct Repo<T> {
    items: Vec<T>,
}

// The impl's `T` is invisible to the attribute: it is classified by type (`recordResult`),
// which needs `T: 'static` on the impl.
impl<T: Clone> Repo<T> {
    #[circuit_breaker(name = "repo")]
    async fn get(&self, index: usize) -> Result<T, RepoError> {
        self.items.get(index).cloned().ok_or(RepoError)
    }
}

fn main() {}
