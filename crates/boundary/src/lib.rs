//! `#[boundary]`: the one panic boundary of every napi export of
//! neurolink-commands. Placed above `#[napi]`, it rewrites the function so
//! that its body runs inside `crate::binding::panic::guard` (which turns a
//! panic into an `NLC_INTERNAL` error naming the JS call), and so that it
//! returns a `Result` even when the body cannot fail — a panic needs an
//! error to become. The JS name is the one napi gives the function
//! (snake_case to camelCase), so the error names what the host called.

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, ItemFn, ReturnType, Type};

/// Wrap a `#[napi]` export's body in the crate's panic boundary.
#[proc_macro_attribute]
pub fn boundary(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "#[boundary] takes no arguments",
        )
        .to_compile_error()
        .into();
    }
    let mut f = parse_macro_input!(item as ItemFn);
    if f.sig.asyncness.is_some() {
        // A napi `async fn` settles its promise with napi's own errors; an
        // export that returns a promise goes through `crate::promise`, whose
        // future the boundary guards.
        return syn::Error::new_spanned(
            f.sig.fn_token,
            "#[boundary] exports return a promise through crate::promise, not as async fn",
        )
        .to_compile_error()
        .into();
    }
    let js_name = camel_case(&f.sig.ident.to_string());
    let body = &f.block;
    let fallible = match &f.sig.output {
        ReturnType::Type(_, ty) => is_result(ty),
        ReturnType::Default => false,
    };
    let wrapped = if fallible {
        quote! { { crate::binding::panic::guard(#js_name, move || #body) } }
    } else {
        let ty = match &f.sig.output {
            ReturnType::Type(_, ty) => quote! { #ty },
            ReturnType::Default => quote! { () },
        };
        f.sig.output = syn::parse_quote! { -> ::napi::Result<#ty, crate::Code> };
        quote! { { crate::binding::panic::guard(#js_name, move || Ok(#body)) } }
    };
    *f.block = syn::parse_quote! { #wrapped };
    quote! { #f }.into()
}

/// Whether a return type is already a `Result` (by its last path segment,
/// as napi itself tells one: an alias of it is not recognized by napi).
fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Result"),
        _ => false,
    }
}

/// napi's JS name of a Rust function name.
fn camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}
