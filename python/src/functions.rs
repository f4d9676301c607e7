//! The Python functions of a task: `custom` scorers' `function:` and `python` metrics,
//! called by the engine through [`UserFunctions`].

use crate::convert::to_py;
use arrow::array::ArrayRef;
use evalscore_engine::{Functions, UserFunctions};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use pyo3_arrow::PyArray;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The Python callables a task's `custom` scorers and `python` metrics call, by name. Each
/// call takes the GIL (the engine runs with it released) and goes through
/// `evalscore._functions`, which reads results and pickles metric states.
#[derive(Debug)]
struct PyFunctions {
    functions: BTreeMap<String, Py<PyAny>>,
}

impl PyFunctions {
    fn call<T>(
        &self,
        name: &str,
        glue: &str,
        args: impl for<'py> FnOnce(Python<'py>, &Py<PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>>,
        read: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<T>,
    ) -> Result<T, String> {
        Python::attach(|py| {
            let f = self
                .functions
                .get(name)
                .ok_or_else(|| format!("no function `{name}`"))?;
            let run = || -> PyResult<T> {
                let module = py.import("evalscore._functions")?;
                let args = args(py, f)?;
                let out = module
                    .getattr(glue)?
                    .call1(pyo3::types::PyTuple::new(py, args)?)?;
                read(&out)
            };
            run().map_err(|e| e.to_string())
        })
    }
}

impl UserFunctions for PyFunctions {
    fn names(&self) -> Vec<String> {
        self.functions.keys().cloned().collect()
    }

    fn score(
        &self,
        name: &str,
        values: &ArrayRef,
        ground_truth: Option<&ArrayRef>,
    ) -> Result<ArrayRef, String> {
        self.call(
            name,
            "score",
            |py, f| {
                let gt = match ground_truth {
                    Some(g) => to_py(py, g)?,
                    None => py.None().into_bound(py),
                };
                Ok(vec![f.bind(py).clone(), to_py(py, values)?, gt])
            },
            |out| Ok(out.extract::<PyArray>()?.into_inner().0),
        )
    }

    fn metric_update(&self, name: &str, values: &ArrayRef) -> Result<Vec<u8>, String> {
        self.call(
            name,
            "metric_update",
            |py, f| Ok(vec![f.bind(py).clone(), to_py(py, values)?]),
            |out| out.extract::<Vec<u8>>(),
        )
    }

    fn metric_merge(&self, name: &str, parts: &[Vec<u8>]) -> Result<Vec<u8>, String> {
        self.call(
            name,
            "metric_merge",
            |py, f| {
                let parts: Vec<Bound<'_, PyBytes>> =
                    parts.iter().map(|p| PyBytes::new(py, p)).collect();
                Ok(vec![
                    f.bind(py).clone(),
                    pyo3::types::PyList::new(py, parts)?.into_any(),
                ])
            },
            |out| out.extract::<Vec<u8>>(),
        )
    }

    fn metric_finish(
        &self,
        name: &str,
        state: &[u8],
    ) -> Result<Vec<(Option<String>, Option<f64>)>, String> {
        self.call(
            name,
            "metric_finish",
            |py, f| Ok(vec![f.bind(py).clone(), PyBytes::new(py, state).into_any()]),
            |out| out.extract::<Vec<(Option<String>, Option<f64>)>>(),
        )
    }
}

/// `functions=`: a mapping of names to callables.
pub(crate) fn functions_of(dict: Option<&Bound<'_, PyDict>>) -> PyResult<Option<Functions>> {
    let Some(dict) = dict else { return Ok(None) };
    let mut functions = BTreeMap::new();
    for (k, v) in dict.iter() {
        let name: String = k.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("functions: the names must be strings")
        })?;
        if !v.is_callable() {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "functions: `{name}` is not callable"
            )));
        }
        functions.insert(name, v.unbind());
    }
    Ok(Some(Arc::new(PyFunctions { functions })))
}
