//! The `user_agent` argument: one string, or several in order of preference.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// What a call gave as its user agent.
pub(crate) enum Agents<'a, 'py> {
    /// One string: a product token, a name, or a whole User-Agent header.
    One(&'a Bound<'py, PyString>),
    /// Several, most preferred first (`["JittyBot-Image", "JittyBot"]`).
    Many(Vec<String>),
}

/// A cache key: the user agent as given.
pub(crate) enum Key {
    /// One string, kept as the Python object: a crawler asks with the same one every time,
    /// and comparing it with itself (or with an equal string) needs no copy of its text.
    One(Py<PyString>),
    Many(Vec<String>),
}

impl<'a, 'py> Agents<'a, 'py> {
    /// Reads `value`: a `str`, or an iterable of `str` (a list, a tuple). `bytes` is refused
    /// rather than read as a sequence of numbers.
    pub(crate) fn extract(value: &'a Bound<'py, PyAny>) -> PyResult<Agents<'a, 'py>> {
        if let Ok(text) = value.cast::<PyString>() {
            return Ok(Agents::One(text));
        }
        if value.cast::<PyBytes>().is_ok() {
            return Err(PyTypeError::new_err(
                "user_agent must be str or a sequence of str, not bytes (decode it first)",
            ));
        }
        let not_text = || {
            let kind = value
                .get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |name| name.to_string());
            PyTypeError::new_err(format!(
                "user_agent must be str or a sequence of str, not {kind}"
            ))
        };
        let items = value.try_iter().map_err(|_| not_text())?;
        let mut agents = Vec::new();
        for item in items {
            let item = item?;
            let text = item.cast::<PyString>().map_err(|_| not_text())?;
            agents.push(text.to_cow()?.into_owned());
        }
        Ok(Agents::Many(agents))
    }

    /// Whether these are the agents `key` was made from: the same string object, an equal
    /// string, or an equal list.
    pub(crate) fn is(&self, key: &Key) -> bool {
        match (self, key) {
            (Agents::One(agent), Key::One(key)) => {
                let key = key.bind(agent.py());
                agent.as_ptr() == key.as_ptr()
                    || PyAnyMethods::eq(agent.as_any(), key).unwrap_or(false)
            }
            (Agents::Many(agents), Key::Many(key)) => agents == key,
            _ => false,
        }
    }

    /// A key for a cache.
    pub(crate) fn key(&self) -> Key {
        match self {
            Agents::One(agent) => Key::One((*agent).clone().unbind()),
            Agents::Many(agents) => Key::Many(agents.clone()),
        }
    }

    /// The crawler's product tokens, read as the engine reads what callers have.
    pub(crate) fn tokens(&self) -> PyResult<robots::ProductTokens> {
        let read = match self {
            Agents::One(agent) => robots::ProductTokens::read([agent.to_cow()?]),
            Agents::Many(agents) => robots::ProductTokens::read(agents),
        };
        read.map(|(tokens, _notes)| tokens)
            .map_err(|error| PyValueError::new_err(format!("user_agent: {error}")))
    }
}
