//! Methods of generic impls: the impl's `T` is invisible to the attribute, so it is classified
//! by type and needs `'static`, which the impl states; a borrowed `Ok` type still works.
use std::marker::PhantomData;

use resilience4rs::{circuit_breaker, CallError, CallNotPermitted};

#[derive(Debug, PartialEq, Clone)]
pub struct RepoError;

impl From<CallNotPermitted> for RepoError {
    fn from(_: CallNotPermitted) -> Self {
        RepoError
    }
}

pub struct Repo<T> {
    items: Vec<T>,
}

impl<T: Clone + Send + Sync + 'static> Repo<T> {
    #[circuit_breaker(name = "ui-impl-generics", fallback = "get_fallback")]
    async fn get(&self, index: usize) -> Result<T, RepoError> {
        self.items.get(index).cloned().ok_or(RepoError)
    }

    async fn get_fallback(&self, _index: usize, _e: CallError<RepoError>) -> Result<T, RepoError> {
        self.items.last().cloned().ok_or(RepoError)
    }

    #[circuit_breaker(name = "ui-impl-generics")]
    async fn first(&self) -> Result<&T, RepoError> {
        self.items.first().ok_or(RepoError)
    }
}

pub struct Typed<K>(PhantomData<K>);

impl<K: Default + 'static> Typed<K> {
    #[circuit_breaker(name = "ui-impl-generics")]
    async fn make() -> Result<K, RepoError> {
        Ok(K::default())
    }
}

fn main() {
    let repo = Repo { items: vec![1u8, 2, 3] };
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        assert_eq!(repo.get(0).await, Ok(1));
        assert_eq!(repo.get(7).await, Ok(3));
        assert_eq!(repo.first().await, Ok(&1));
        assert_eq!(Typed::<String>::make().await, Ok(String::new()));
    });
}
