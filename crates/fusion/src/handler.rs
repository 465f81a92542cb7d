//! Typed handlers behind one object-safe face, so actions of different input and output types
//! live in one table.

use std::any::{Any, type_name};
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::{Schema, SchemaGenerator};
use serde_json::Value;

use futures_util::future::BoxFuture;

use crate::context::Ctx;
use crate::input::{ActionInput, DecodeError, FieldIssue};
use crate::middleware::{BoxError, Call, Endpoint, Outcome};
use crate::output::IntoOutput;

/// A decoded input, and the problems its custom rules found.
pub(crate) type Decoded = (Box<dyn Any + Send + Sync>, Vec<FieldIssue>);

/// Decodes arguments into an action's input type, whatever the server's state type.
pub(crate) type Decoder = fn(&Value) -> Result<Decoded, DecodeError>;

/// A handler with its types erased.
pub(crate) trait ErasedHandler<S>: Send + Sync {
    fn input_schema(&self, generator: &mut SchemaGenerator) -> Schema;
    fn output_schema(&self, generator: &mut SchemaGenerator) -> Option<Schema>;
    fn decoder(&self) -> Decoder;
    fn endpoint(&self, state: Arc<S>) -> Endpoint;
}

pub(crate) fn decode_as<I: ActionInput>(arguments: &Value) -> Result<Decoded, DecodeError> {
    let input = I::from_arguments(arguments)?;
    let issues = input.check();
    Ok((Box::new(input), issues))
}

/// A handler `async fn(Ctx<S>, I) -> Result<O, E>` and its types.
pub(crate) struct TypedHandler<F, I, O, E> {
    f: Arc<F>,
    types: Types<I, O, E>,
}

/// The handler's input, output and error types, held without owning any.
pub(crate) type Types<I, O, E> = PhantomData<fn() -> (I, O, E)>;

impl<F, I, O, E> TypedHandler<F, I, O, E> {
    pub(crate) fn new(f: F) -> Self {
        TypedHandler { f: Arc::new(f), types: PhantomData }
    }
}

impl<S, F, Fut, I, O, E> ErasedHandler<S> for TypedHandler<F, I, O, E>
where
    S: Send + Sync + 'static,
    F: Fn(Ctx<S>, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    I: ActionInput,
    O: IntoOutput,
    E: Into<BoxError> + 'static,
{
    fn input_schema(&self, generator: &mut SchemaGenerator) -> Schema {
        I::input_schema(generator)
    }

    fn output_schema(&self, generator: &mut SchemaGenerator) -> Option<Schema> {
        O::output_schema(generator)
    }

    fn decoder(&self) -> Decoder {
        decode_as::<I>
    }

    fn endpoint(&self, state: Arc<S>) -> Endpoint {
        let f = Arc::clone(&self.f);
        Box::new(move |mut call: Call| -> BoxFuture<'static, Outcome> {
            let input = call.input.take().map(|input| input.downcast::<I>());
            let info = Arc::clone(&call.info);
            let Some(Ok(input)) = input else {
                let message = format!(
                    "a middleware removed the input or replaced it with another type; the handler takes {}",
                    type_name::<I>()
                );
                return Box::pin(std::future::ready(Err(info.failure(message))));
            };
            let future = f(Ctx::new(Arc::clone(&state), Arc::clone(&info)), *input);
            Box::pin(async move {
                match future.await {
                    Ok(output) => output.into_output().map_err(|error| info.failure(error)),
                    Err(error) => Err(info.failure(error)),
                }
            })
        })
    }
}
