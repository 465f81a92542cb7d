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
use crate::output::{IntoOutput, Output};

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

fn decode_as<I: ActionInput>(arguments: &Value) -> Result<Decoded, DecodeError> {
    let input = I::from_arguments(arguments)?;
    let issues = input.check();
    Ok((Box::new(input), issues))
}

/// How what a handler returns becomes the [`Output`] the chain carries, for one kind of
/// entry: an action's result, a prompt's messages, a resource's contents. It is the only
/// part of a handler that differs between kinds, so one erased handler serves them all.
pub(crate) trait Returns<T>: 'static {
    /// The output schema the entry declares, if any.
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        let _ = generator;
        None
    }

    /// The output of what the handler returned on success.
    fn into_output(value: T) -> Result<Output, BoxError>;

    /// The failure's message when a middleware took the input, of type `input`, away.
    fn lost_input(input: &'static str) -> String;
}

/// An action's handler: its result as [`IntoOutput`] makes it.
pub(crate) struct AsAction;

impl<O: IntoOutput> Returns<O> for AsAction {
    fn output_schema(generator: &mut SchemaGenerator) -> Option<Schema> {
        O::output_schema(generator)
    }

    fn into_output(value: O) -> Result<Output, BoxError> {
        value.into_output()
    }

    fn lost_input(input: &'static str) -> String {
        format!("a middleware removed the input or replaced it with another type; the handler takes {input}")
    }
}

/// A handler `async fn(Ctx<S>, I) -> Result<O, E>` and its types, whose `O` becomes an
/// [`Output`] as `R` says.
pub(crate) struct TypedHandler<F, I, O, E, R = AsAction> {
    f: Arc<F>,
    types: Types<I, O, E, R>,
}

/// The handler's input, output and error types, and its conversion, held without owning any.
type Types<I, O, E, R> = PhantomData<fn() -> (I, O, E, R)>;

impl<F, I, O, E, R> TypedHandler<F, I, O, E, R> {
    pub(crate) fn new(f: F) -> Self {
        TypedHandler { f: Arc::new(f), types: PhantomData }
    }
}

impl<S, F, Fut, I, O, E, R> ErasedHandler<S> for TypedHandler<F, I, O, E, R>
where
    S: Send + Sync + 'static,
    F: Fn(Ctx<S>, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, E>> + Send + 'static,
    I: ActionInput,
    O: Send + 'static,
    E: Into<BoxError> + 'static,
    R: Returns<O>,
{
    fn input_schema(&self, generator: &mut SchemaGenerator) -> Schema {
        I::input_schema(generator)
    }

    fn output_schema(&self, generator: &mut SchemaGenerator) -> Option<Schema> {
        R::output_schema(generator)
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
                let message = R::lost_input(type_name::<I>());
                return Box::pin(std::future::ready(Err(info.failure(message))));
            };
            let future = f(Ctx::new(Arc::clone(&state), Arc::clone(&info)), *input);
            Box::pin(async move {
                match future.await {
                    Ok(output) => R::into_output(output).map_err(|error| info.failure(error)),
                    Err(error) => Err(info.failure(error)),
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_says_which_input_a_middleware_took() {
        assert_eq!(
            <AsAction as Returns<String>>::lost_input("billing::Invoice"),
            "a middleware removed the input or replaced it with another type; the handler takes billing::Invoice"
        );
    }
}
