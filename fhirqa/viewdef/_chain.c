/*
 * The fast path of a compiled FHIRPath navigation chain, in C: the twin of the closure that
 * ``chain.fast_chain`` builds in Python (and the tests hold the two equal).
 *
 * Most ViewDefinition column paths are member names with ``first()``/``[0]``/``ofType()`` between
 * them, walked over elements that hold one item. While the walk stays on one item only dict lookups
 * run; at the first deviation (a repeating element, a missing choice element that needs a scan) the
 * remaining steps go to the Python ``walk``, exactly as the Python closure does. Canonical maps call
 * these chains hundreds of thousands of times per ingest, which is why this is worth C.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

typedef struct {
    PyObject *key;      /* member name (str) */
    int fallback;       /* a missing key hands the rest, from this step, to walk() */
    PyObject *rest;     /* steps after this one (tuple) */
    PyObject *from_here;/* steps from this one on (tuple) */
    PyObject *base;     /* ofType() step: the choice element's base name (walk() looks for it), else NULL */
} Member;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Member *members;
    Py_ssize_t count;
    PyObject *steps;      /* all steps (tuple): walk(inp, env, steps) when the input is not one item */
    PyObject *walk;       /* chain.walk */
    PyObject *refkey;     /* reference_key, or NULL when the chain does not end in getReferenceKey() */
    PyObject *ref_type;   /* its type argument (str or None) */
} Chain;

static PyObject *
call_walk(Chain *self, PyObject *inp, PyObject *env, PyObject *steps)
{
    PyObject *args[3] = {inp, env, steps};
    return PyObject_Vectorcall(self->walk, args, 3, NULL);
}

static PyObject *
walk_one(Chain *self, PyObject *item, PyObject *env, PyObject *steps)
{
    PyObject *inp = PyList_New(1);
    if (inp == NULL)
        return NULL;
    Py_INCREF(item);
    PyList_SET_ITEM(inp, 0, item);
    PyObject *out = call_walk(self, inp, env, steps);
    Py_DECREF(inp);
    return out;
}

static int
contains_none(PyObject *list)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++)
        if (PyList_GET_ITEM(list, i) == Py_None)
            return 1;
    return 0;
}

static PyObject *
without_none(PyObject *list)
{
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        if (item != Py_None && PyList_Append(out, item) < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

/* chain(inp, env) -> list */
static PyObject *
Chain_vectorcall(Chain *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a chain takes (input, env)");
        return NULL;
    }
    PyObject *inp = args[0], *env = args[1];
    if (!PyList_Check(inp) || PyList_GET_SIZE(inp) != 1)
        return call_walk(self, inp, env, self->steps);
    PyObject *cur = PyList_GET_ITEM(inp, 0);
    Py_INCREF(cur);  /* cur is owned from here on */
    for (Py_ssize_t i = 0; i < self->count; i++) {
        Member *m = &self->members[i];
        if (!Py_IS_TYPE(cur, &PyDict_Type)) {
            Py_DECREF(cur);
            return PyList_New(0);
        }
        PyObject *v = PyDict_GetItemWithError(cur, m->key);  /* borrowed */
        if (v == NULL && PyErr_Occurred()) {
            Py_DECREF(cur);
            return NULL;
        }
        if (v == NULL || v == Py_None) {
            int fallback = m->fallback;
            if (fallback && m->base != NULL) {  /* ofType(): walk() only looks further when the base name is there */
                fallback = PyDict_Contains(cur, m->base);
                if (fallback < 0) {
                    Py_DECREF(cur);
                    return NULL;
                }
            }
            PyObject *out = fallback ? walk_one(self, cur, env, m->from_here) : PyList_New(0);
            Py_DECREF(cur);
            return out;
        }
        if (Py_IS_TYPE(v, &PyList_Type)) {
            if (PyList_GET_SIZE(v) != 1 || PyList_GET_ITEM(v, 0) == Py_None) {
                PyObject *items, *out;
                Py_INCREF(v);
                Py_DECREF(cur);
                if (contains_none(v)) {
                    items = without_none(v);
                    Py_DECREF(v);
                    if (items == NULL)
                        return NULL;
                }
                else
                    items = v;
                out = PyList_GET_SIZE(items) ? call_walk(self, items, env, m->rest) : PyList_New(0);
                Py_DECREF(items);
                return out;
            }
            v = PyList_GET_ITEM(v, 0);
        }
        Py_INCREF(v);
        Py_DECREF(cur);
        cur = v;
    }
    if (self->refkey != NULL) {
        PyObject *key_args[2] = {cur, self->ref_type};
        PyObject *key = PyObject_Vectorcall(self->refkey, key_args, 2, NULL);
        Py_DECREF(cur);
        if (key == NULL)
            return NULL;
        if (key == Py_None) {
            Py_DECREF(key);
            return PyList_New(0);
        }
        cur = key;
    }
    PyObject *out = PyList_New(1);
    if (out == NULL) {
        Py_DECREF(cur);
        return NULL;
    }
    PyList_SET_ITEM(out, 0, cur);  /* steals cur */
    return out;
}

static void
Chain_dealloc(Chain *self)
{
    for (Py_ssize_t i = 0; i < self->count; i++) {
        Py_XDECREF(self->members[i].key);
        Py_XDECREF(self->members[i].rest);
        Py_XDECREF(self->members[i].from_here);
        Py_XDECREF(self->members[i].base);
    }
    PyMem_Free(self->members);
    Py_XDECREF(self->steps);
    Py_XDECREF(self->walk);
    Py_XDECREF(self->refkey);
    Py_XDECREF(self->ref_type);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Chain(members, steps, walk, refkey, ref_type): members is a tuple of (key, fallback, rest, from_here, base). */
static PyObject *
Chain_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *members, *steps, *walk, *refkey, *ref_type;
    static char *kwlist[] = {"members", "steps", "walk", "refkey", "ref_type", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!OOO:Chain", kwlist, &PyTuple_Type, &members, &PyTuple_Type,
                                     &steps, &walk, &refkey, &ref_type))
        return NULL;
    Chain *self = (Chain *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)Chain_vectorcall;
    Py_ssize_t n = PyTuple_GET_SIZE(members);
    self->members = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Member));
    if (self->members == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key, *fallback, *rest, *from_here, *base;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(members, i), "UOO!O!O:member", &key, &fallback, &PyTuple_Type, &rest,
                              &PyTuple_Type, &from_here, &base)) {
            Py_DECREF(self);
            return NULL;
        }
        int flag = PyObject_IsTrue(fallback);
        if (flag < 0) {
            Py_DECREF(self);
            return NULL;
        }
        Py_INCREF(key);
        Py_INCREF(rest);
        Py_INCREF(from_here);
        if (base == Py_None)
            base = NULL;
        else if (!PyUnicode_Check(base)) {
            PyErr_SetString(PyExc_TypeError, "a member's base must be str or None");
            Py_DECREF(key);
            Py_DECREF(rest);
            Py_DECREF(from_here);
            Py_DECREF(self);
            return NULL;
        }
        else
            Py_INCREF(base);
        self->members[i] = (Member){key, flag, rest, from_here, base};
        self->count = i + 1;
    }
    Py_INCREF(steps);
    self->steps = steps;
    Py_INCREF(walk);
    self->walk = walk;
    if (refkey != Py_None) {
        Py_INCREF(refkey);
        self->refkey = refkey;
    }
    Py_INCREF(ref_type);
    self->ref_type = ref_type;
    return (PyObject *)self;
}

static PyTypeObject ChainType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fhirqa.viewdef._chain.Chain",
    .tp_doc = PyDoc_STR("A compiled navigation chain: chain(input, env) -> list (see chain.fast_chain)."),
    .tp_basicsize = sizeof(Chain),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Chain, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = Chain_new,
    .tp_dealloc = (destructor)Chain_dealloc,
};

/* own_row(columns, focus, env) -> tuple | None
 * One row of a select's own columns: columns is a tuple of (expr, collection) pairs. A collection column
 * is the list of its values; another is None, its single value, or (more than one) this returns None so
 * that the Python runner raises its error naming the column. */
static PyObject *
chain_own_row(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "own_row(columns: tuple, focus, env)");
        return NULL;
    }
    PyObject *columns = args[0];
    PyObject *call_args[2] = {args[1], args[2]};
    Py_ssize_t n = PyTuple_GET_SIZE(columns);
    PyObject *row = PyTuple_New(n);
    if (row == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *spec = PyTuple_GET_ITEM(columns, i);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2) {
            PyErr_SetString(PyExc_TypeError, "a column is (expr, collection)");
            goto error;
        }
        PyObject *expr = PyTuple_GET_ITEM(spec, 0);
        PyObject *values = Py_IS_TYPE(expr, &ChainType)
                               ? Chain_vectorcall((Chain *)expr, call_args, 2, NULL)
                               : PyObject_Vectorcall(expr, call_args, 2, NULL);
        if (values == NULL)
            goto error;
        PyObject *cell;
        if (PyTuple_GET_ITEM(spec, 1) == Py_True) {
            cell = PySequence_List(values);
            Py_DECREF(values);
            if (cell == NULL)
                goto error;
        }
        else {
            Py_ssize_t count = PyObject_Length(values);
            if (count < 0) {
                Py_DECREF(values);
                goto error;
            }
            if (count == 0) {
                cell = Py_None;
                Py_INCREF(cell);
            }
            else if (count == 1) {
                cell = PySequence_GetItem(values, 0);
                if (cell == NULL) {
                    Py_DECREF(values);
                    goto error;
                }
            }
            else {
                Py_DECREF(values);
                Py_DECREF(row);
                Py_RETURN_NONE;
            }
            Py_DECREF(values);
        }
        PyTuple_SET_ITEM(row, i, cell);
    }
    return row;
error:
    Py_DECREF(row);
    return NULL;
}

static PyMethodDef chain_methods[] = {
    {"own_row", (PyCFunction)(void (*)(void))chain_own_row, METH_FASTCALL,
     "own_row(columns, focus, env) -> tuple | None: one row of (expr, collection) columns; None when a "
     "non-collection column has several values (the caller raises the error)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef chain_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "fhirqa.viewdef._chain",
    .m_doc = "The one-item fast path of compiled FHIRPath navigation chains, in C (optional speed-up).",
    .m_size = -1,
    .m_methods = chain_methods,
};

PyMODINIT_FUNC
PyInit__chain(void)
{
    if (PyType_Ready(&ChainType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&chain_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&ChainType);
    if (PyModule_AddObject(module, "Chain", (PyObject *)&ChainType) < 0) {
        Py_DECREF(&ChainType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
