/*
 * Compiled FHIRPath navigation chains and ViewDefinition row assembly, in C: the twins of
 * ``chain.walk`` and of the closures ``runner._body`` / ``_Builder.iterate`` / ``_Builder.union``
 * build in Python (the tests hold the two paths equal; FHIRQA_PURE_PYTHON=1 runs the Python one).
 *
 * Canonical maps run during every ingest: tens of cells per resource, hundreds of thousands of cells per
 * ingest. Measured on synthea-r4 (26k resources), the Python frames around each cell (the row closures,
 * the cross product, ``where``/``extension`` invocations between chain pieces) cost more than the dict
 * lookups themselves, which is why the row assembly and the common chain steps live here.
 *
 * A Chain walks its steps over one item (``cur``) or a list (``coll``) exactly as ``chain.walk`` does; a
 * step it does not handle here (``ofType`` on a resource, a choice element's base-name fallback, odd
 * data such as a non-list ``extension``) hands the current collection and the remaining steps to the
 * Python ``walk``. Handing off at a step boundary is exact: ``walk`` started on ``[cur]`` or ``coll``
 * continues in the same state.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stddef.h>

/* Step kinds: the same numbers as chain.py (MEMBER, FIRST, ... = range(10)). */
enum {
    K_MEMBER, K_FIRST, K_LAST, K_CHOICE, K_REFKEY, K_INDEX, K_TYPE, K_OFTYPE, K_WHERE_EQ, K_EXT, K_WHERE_CHAIN,
    K_COUNT
};

typedef struct {
    int kind;
    int scan;            /* MEMBER: a missing key scans for base + choice suffix (chain._scan_choice) */
    Py_ssize_t index;    /* INDEX */
    PyObject *a;         /* the step's a (key, url, type name...) */
    PyObject *b;         /* the step's b (WHERE_EQ: the text; REFKEY: unused) */
    PyObject *base;      /* CHOICE: the base element name */
    PyObject *from_here; /* the steps from this one on (tuple), for the hand-off to walk() */
    PyObject *sub;       /* WHERE_CHAIN: the criterion's chain (a Chain); its b: True for exists() */
} Step;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    Step *steps;
    Py_ssize_t count;
    PyObject *all;        /* all steps (tuple) */
    PyObject *walk;       /* chain.walk */
    PyObject *refkey;     /* values.reference_key */
    PyObject *suffixes;   /* values.CHOICE_SUFFIXES (a frozenset of str) */
} Chain;

static PyTypeObject ChainType;
static PyObject *str_extension, *str_url, *str_row_index;

static int chain_from(Chain *self, PyObject *in_cur, PyObject *in_coll, PyObject *env, PyObject **cur_out,
                      PyObject **coll_out);

/* where(<chain>.exists()) / where(<chain>.empty()) on one item: 1 kept, 0 not, -1 error. */
static int
chain_test_keeps(Step *s, PyObject *item, PyObject *env)
{
    PyObject *cur, *coll;
    if (chain_from((Chain *)s->sub, item, NULL, env, &cur, &coll) < 0)
        return -1;
    int found = cur != NULL || (coll != NULL && PyList_GET_SIZE(coll) > 0);
    Py_XDECREF(cur);
    Py_XDECREF(coll);
    return found == (s->b == Py_True);
}

static PyObject *
call_walk(Chain *self, PyObject *inp, PyObject *env, PyObject *steps)
{
    PyObject *args[3] = {inp, env, steps};
    return PyObject_Vectorcall(self->walk, args, 3, NULL);
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

/* chain._scan_choice: the value of the first key that is base + a choice suffix (borrowed; *found = 0 if none).
 * Returns -1 on error, -2 when a key is not a str (the Python scan then decides, errors included). */
static int
scan_choice(Chain *self, PyObject *d, PyObject *base, PyObject **found)
{
    Py_ssize_t pos = 0, n = PyUnicode_GET_LENGTH(base);
    PyObject *k, *v;
    *found = NULL;
    while (PyDict_Next(d, &pos, &k, &v)) {
        if (!PyUnicode_Check(k))
            return -2;
        Py_ssize_t len = PyUnicode_GET_LENGTH(k);
        if (len <= n)
            continue;
        Py_ssize_t m = PyUnicode_Tailmatch(k, base, 0, n, -1);
        if (m < 0)
            return -1;
        if (!m)
            continue;
        PyObject *suffix = PyUnicode_Substring(k, n, len);
        if (suffix == NULL)
            return -1;
        int in = PySet_Contains(self->suffixes, suffix);
        Py_DECREF(suffix);
        if (in < 0)
            return -1;
        if (in) {
            *found = v;
            return 0;
        }
    }
    return 0;
}

/* where(key = literal or ...) on one item, pairs being the (key, literal) tests: 1 kept, 0 not, -1 error
 * (chain.where_equals). A bool literal only matches that JSON boolean (True and False are singletons). */
static int
where_keeps(PyObject *item, PyObject *pairs)
{
    if (!PyDict_CheckExact(item))
        return 0;
    for (Py_ssize_t p = 0; p < PyTuple_GET_SIZE(pairs); p++) {
        PyObject *pair = PyTuple_GET_ITEM(pairs, p);
        PyObject *key = PyTuple_GET_ITEM(pair, 0), *want = PyTuple_GET_ITEM(pair, 1);
        int boolean = PyBool_Check(want);
        PyObject *v = PyDict_GetItemWithError(item, key);
        if (v == NULL) {
            if (PyErr_Occurred())
                return -1;
            v = Py_None;
        }
        int eq = boolean ? v == want : PyObject_RichCompareBool(v, want, Py_EQ);
        if (eq == 0 && PyList_CheckExact(v) && PyList_GET_SIZE(v) == 1) {
            PyObject *only = PyList_GET_ITEM(v, 0);
            eq = boolean ? only == want : PyObject_RichCompareBool(only, want, Py_EQ);
        }
        if (eq != 0)
            return eq;
    }
    return 0;
}

/* The extensions of item that carry url, appended to out: 0 done, -1 error, -2 odd data (hand off). */
static int
add_extensions(PyObject *item, PyObject *url, PyObject *out)
{
    if (!PyDict_CheckExact(item))
        return 0;
    PyObject *exts = PyDict_GetItemWithError(item, str_extension);
    if (exts == NULL)
        return PyErr_Occurred() ? -1 : 0;
    if (exts == Py_None)
        return 0;
    if (!PyList_CheckExact(exts))
        return -2;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(exts); i++) {
        PyObject *ext = PyList_GET_ITEM(exts, i);
        if (!PyDict_CheckExact(ext))
            continue;
        PyObject *u = PyDict_GetItemWithError(ext, str_url);
        if (u == NULL) {
            if (PyErr_Occurred())
                return -1;
            u = Py_None;
        }
        int eq = PyObject_RichCompareBool(u, url, Py_EQ);
        if (eq < 0)
            return -1;
        if (eq && PyList_Append(out, ext) < 0)
            return -1;
    }
    return 0;
}

/* One list-mode MEMBER step (chain._member_all): a new list, or NULL with *odd set when the scan met odd data. */
static PyObject *
member_all(Chain *self, PyObject *coll, Step *s, int *odd)
{
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(coll); j++) {
        PyObject *item = PyList_GET_ITEM(coll, j);
        if (!PyDict_CheckExact(item))
            continue;
        PyObject *v = PyDict_GetItemWithError(item, s->a);
        if (v == NULL && PyErr_Occurred())
            goto error;
        if ((v == NULL || v == Py_None) && s->scan) {
            int r = scan_choice(self, item, s->a, &v);
            if (r == -2) {
                *odd = 1;
                goto error;
            }
            if (r < 0)
                goto error;
        }
        if (v == NULL || v == Py_None)
            continue;
        if (PyList_CheckExact(v)) {
            Py_ssize_t at = PyList_GET_SIZE(out);
            if (PyList_SetSlice(out, at, at, v) < 0)
                goto error;
        }
        else if (PyList_Append(out, v) < 0)
            goto error;
    }
    if (contains_none(out)) {
        PyObject *clean = without_none(out);
        Py_DECREF(out);
        return clean;
    }
    return out;
error:
    Py_DECREF(out);
    return NULL;
}

/* Run the chain (at least one step) from a state: one item in_cur, or the list in_coll (any length; borrowed).
 * walk() restarted on [item] or on a list continues exactly as it would have (one item and a one-item list
 * give the same results through every step kind), which is what lets a state be shared and continued.
 * On success (0) exactly one of: *cur (one item, new reference), *coll (a list of any length, new reference),
 * neither (empty). -1 on error. */
static int
chain_from(Chain *self, PyObject *in_cur, PyObject *in_coll, PyObject *env, PyObject **cur_out, PyObject **coll_out)
{
    PyObject *cur = NULL, *coll = NULL, *handed;
    Py_ssize_t i = 0;
    *cur_out = *coll_out = NULL;
    if (in_cur != NULL) {
        cur = in_cur;
        Py_INCREF(cur);
    }
    else if (PyList_GET_SIZE(in_coll) == 1) {
        cur = PyList_GET_ITEM(in_coll, 0);
        Py_INCREF(cur);
    }
    else if (PyList_GET_SIZE(in_coll) == 0)
        return 0;  /* walk() of nothing through at least one step is nothing */
    else {
        coll = in_coll;
        Py_INCREF(coll);
    }
    for (i = 0; i < self->count; i++) {
        Step *s = &self->steps[i];
        if (coll == NULL) {
            PyObject *v;
            switch (s->kind) {
            case K_MEMBER:
                if (!PyDict_CheckExact(cur))
                    goto empty;
                v = PyDict_GetItemWithError(cur, s->a);
                if (v == NULL && PyErr_Occurred())
                    goto error;
                if ((v == NULL || v == Py_None) && s->scan) {
                    int r = scan_choice(self, cur, s->a, &v);
                    if (r == -2)
                        goto hand_off;
                    if (r < 0)
                        goto error;
                }
                if (v == NULL || v == Py_None)
                    goto empty;
                if (PyList_CheckExact(v)) {
                    Py_ssize_t n = PyList_GET_SIZE(v);
                    if (n == 1) {
                        v = PyList_GET_ITEM(v, 0);
                        if (v == Py_None)
                            goto empty;
                    }
                    else if (n == 0)
                        goto empty;
                    else {  /* walk() stays in list mode here, whatever is left once nulls are dropped */
                        if (contains_none(v)) {
                            coll = without_none(v);
                            if (coll == NULL)
                                goto error;
                        }
                        else {
                            coll = v;
                            Py_INCREF(coll);
                        }
                        Py_CLEAR(cur);
                        continue;
                    }
                }
                Py_INCREF(v);
                Py_SETREF(cur, v);
                break;
            case K_FIRST:
            case K_LAST:
                break;  /* first()/last() of one item is that item */
            case K_CHOICE:
                if (!PyDict_CheckExact(cur))
                    goto empty;
                v = PyDict_GetItemWithError(cur, s->a);
                if (v == NULL && PyErr_Occurred())
                    goto error;
                if (v == NULL || v == Py_None) {
                    int has = PyDict_Contains(cur, s->base);
                    if (has < 0)
                        goto error;
                    if (!has)
                        goto empty;
                    goto hand_off;  /* the base element is there: walk() checks its type */
                }
                if (PyList_CheckExact(v)) {
                    PyObject *items = without_none(v);
                    if (items == NULL)
                        goto error;
                    Py_CLEAR(cur);
                    coll = items;
                    goto settle;
                }
                Py_INCREF(v);
                Py_SETREF(cur, v);
                break;
            case K_REFKEY: {
                PyObject *key_args[2] = {cur, s->a};
                PyObject *key = PyObject_Vectorcall(self->refkey, key_args, 2, NULL);
                if (key == NULL)
                    goto error;
                Py_SETREF(cur, key);
                if (cur == Py_None)
                    goto empty;
                break;
            }
            case K_INDEX:
                if (s->index != 0)
                    goto empty;
                break;
            case K_WHERE_EQ: {
                int keep = where_keeps(cur, s->a);
                if (keep < 0)
                    goto error;
                if (!keep)
                    goto empty;
                break;
            }
            case K_WHERE_CHAIN: {
                int keep = chain_test_keeps(s, cur, env);
                if (keep < 0)
                    goto error;
                if (!keep)
                    goto empty;
                break;
            }
            case K_EXT: {
                PyObject *out = PyList_New(0);
                if (out == NULL)
                    goto error;
                int r = add_extensions(cur, s->a, out);
                if (r < 0) {
                    Py_DECREF(out);
                    if (r == -2)
                        goto hand_off;
                    goto error;
                }
                Py_CLEAR(cur);
                coll = out;
                goto settle;
            }
            default:  /* TYPE, OFTYPE: rare in maps; walk() does them */
                goto hand_off;
            }
            continue;
        }
        /* list mode */
        {
            PyObject *out;
            Py_ssize_t n = PyList_GET_SIZE(coll);
            switch (s->kind) {
            case K_MEMBER: {
                int odd = 0;
                out = member_all(self, coll, s, &odd);
                if (out == NULL) {
                    if (odd) {
                        PyErr_Clear();
                        goto hand_off;
                    }
                    goto error;
                }
                break;
            }
            case K_FIRST:
                out = PyList_GetSlice(coll, 0, 1);
                break;
            case K_LAST:
                out = PyList_GetSlice(coll, n - 1, n);
                break;
            case K_INDEX:
                out = s->index >= 0 ? PyList_GetSlice(coll, s->index, s->index + 1) : PyList_New(0);
                break;
            case K_WHERE_EQ:
                out = PyList_New(0);
                if (out == NULL)
                    goto error;
                for (Py_ssize_t j = 0; j < n; j++) {
                    PyObject *item = PyList_GET_ITEM(coll, j);
                    int keep = where_keeps(item, s->a);
                    if (keep < 0 || (keep && PyList_Append(out, item) < 0)) {
                        Py_DECREF(out);
                        goto error;
                    }
                }
                break;
            case K_WHERE_CHAIN:
                out = PyList_New(0);
                if (out == NULL)
                    goto error;
                for (Py_ssize_t j = 0; j < n; j++) {
                    PyObject *item = PyList_GET_ITEM(coll, j);
                    int keep = chain_test_keeps(s, item, env);
                    if (keep < 0 || (keep && PyList_Append(out, item) < 0)) {
                        Py_DECREF(out);
                        goto error;
                    }
                }
                break;
            case K_EXT:
                out = PyList_New(0);
                if (out == NULL)
                    goto error;
                for (Py_ssize_t j = 0; j < n; j++) {
                    int r = add_extensions(PyList_GET_ITEM(coll, j), s->a, out);
                    if (r < 0) {
                        Py_DECREF(out);
                        if (r == -2)
                            goto hand_off;
                        goto error;
                    }
                }
                break;
            default:  /* CHOICE, REFKEY, TYPE, OFTYPE over several items */
                goto hand_off;
            }
            if (out == NULL)
                goto error;
            Py_SETREF(coll, out);
        }
    settle:  /* walk(): a list of at most one item goes back to one-item mode */
        if (PyList_GET_SIZE(coll) <= 1) {
            if (PyList_GET_SIZE(coll) == 0)
                goto empty;
            cur = PyList_GET_ITEM(coll, 0);
            Py_INCREF(cur);
            Py_CLEAR(coll);
        }
    }
    *cur_out = cur;
    *coll_out = coll;
    return 0;
hand_off:
    if (coll == NULL) {
        PyObject *one = PyList_New(1);
        if (one == NULL)
            goto error;
        PyList_SET_ITEM(one, 0, cur);  /* steals cur */
        cur = NULL;
        handed = call_walk(self, one, env, self->steps[i].from_here);
        Py_DECREF(one);
    }
    else {
        handed = call_walk(self, coll, env, self->steps[i].from_here);
        Py_CLEAR(coll);
    }
    if (handed == NULL)
        return -1;
    if (!PyList_Check(handed)) {
        Py_DECREF(handed);
        PyErr_SetString(PyExc_TypeError, "walk() must return a list");
        return -1;
    }
    *coll_out = handed;
    return 0;
empty:
    Py_XDECREF(cur);
    Py_XDECREF(coll);
    return 0;
error:
    Py_XDECREF(cur);
    Py_XDECREF(coll);
    return -1;
}

/* Run the chain over the collection inp (chain_from's results). */
static int
chain_run(Chain *self, PyObject *inp, PyObject *env, PyObject **cur_out, PyObject **coll_out)
{
    if (!PyList_CheckExact(inp) || self->count == 0) {
        PyObject *handed = call_walk(self, inp, env, self->all);
        *cur_out = NULL;
        *coll_out = handed;
        if (handed == NULL)
            return -1;
        if (!PyList_Check(handed)) {
            Py_CLEAR(*coll_out);
            PyErr_SetString(PyExc_TypeError, "walk() must return a list");
            return -1;
        }
        return 0;
    }
    return chain_from(self, NULL, inp, env, cur_out, coll_out);
}

/* chain(inp, env) -> list, or chain(inp, focus, env) as an invocation (fhirpath._chain_inv; focus unused) */
static PyObject *
Chain_vectorcall(Chain *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if ((nargs != 2 && nargs != 3) || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a chain takes (input, env) or (input, focus, env)");
        return NULL;
    }
    PyObject *cur, *coll;
    if (chain_run(self, args[0], args[nargs - 1], &cur, &coll) < 0)
        return NULL;
    if (coll != NULL)
        return coll;
    if (cur == NULL)
        return PyList_New(0);
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
        Py_XDECREF(self->steps[i].a);
        Py_XDECREF(self->steps[i].b);
        Py_XDECREF(self->steps[i].base);
        Py_XDECREF(self->steps[i].from_here);
        Py_XDECREF(self->steps[i].sub);
    }
    PyMem_Free(self->steps);
    Py_XDECREF(self->all);
    Py_XDECREF(self->walk);
    Py_XDECREF(self->refkey);
    Py_XDECREF(self->suffixes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Chain(steps, walk, reference_key, choice_suffixes): steps is chain.walk's tuple of (kind, a, b). */
static PyObject *
Chain_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *steps, *walk, *refkey, *suffixes;
    static char *kwlist[] = {"steps", "walk", "reference_key", "choice_suffixes", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!OOO!:Chain", kwlist, &PyTuple_Type, &steps, &walk, &refkey,
                                     &PyFrozenSet_Type, &suffixes))
        return NULL;
    Chain *self = (Chain *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)Chain_vectorcall;
    Py_INCREF(steps);
    self->all = steps;
    Py_INCREF(walk);
    self->walk = walk;
    Py_INCREF(refkey);
    self->refkey = refkey;
    Py_INCREF(suffixes);
    self->suffixes = suffixes;
    Py_ssize_t n = PyTuple_GET_SIZE(steps);
    self->steps = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Step));
    if (self->steps == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int kind;
        PyObject *a, *b;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(steps, i), "iOO:step", &kind, &a, &b)) {
            Py_DECREF(self);
            return NULL;
        }
        if (kind < 0 || kind >= K_COUNT) {
            PyErr_Format(PyExc_ValueError, "unknown chain step kind %d", kind);
            Py_DECREF(self);
            return NULL;
        }
        Step *s = &self->steps[i];
        self->count = i + 1;  /* from here on, dealloc releases this step */
        s->kind = kind;
        s->from_here = PyTuple_GetSlice(steps, i, n);
        if (s->from_here == NULL) {
            Py_DECREF(self);
            return NULL;
        }
        Py_INCREF(a);
        s->a = a;
        Py_INCREF(b);
        s->b = b;
        int bad = 0;
        if (kind == K_MEMBER || kind == K_CHOICE) {
            bad = !PyUnicode_Check(a);
            if (kind == K_MEMBER && !bad) {
                s->scan = PyObject_IsTrue(b);
                if (s->scan < 0) {
                    Py_DECREF(self);
                    return NULL;
                }
            }
            if (kind == K_CHOICE && !bad) {
                bad = !PyTuple_Check(b) || PyTuple_GET_SIZE(b) != 2;
                if (!bad) {
                    s->base = PyTuple_GET_ITEM(b, 0);
                    Py_INCREF(s->base);
                }
            }
        }
        else if (kind == K_INDEX) {
            s->index = PyLong_AsSsize_t(a);
            if (s->index == -1 && PyErr_Occurred()) {
                Py_DECREF(self);
                return NULL;
            }
        }
        else if (kind == K_WHERE_EQ) {
            bad = !PyTuple_Check(a);
            for (Py_ssize_t p = 0; !bad && p < PyTuple_GET_SIZE(a); p++) {
                PyObject *pair = PyTuple_GET_ITEM(a, p);
                bad = !PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(pair, 0));
            }
        }
        else if (kind == K_WHERE_CHAIN) {
            bad = !PyTuple_Check(a) || PyTuple_GET_SIZE(a) == 0 || !PyBool_Check(b);
            if (!bad) {
                s->sub = PyObject_CallFunctionObjArgs((PyObject *)&ChainType, a, walk, refkey, suffixes, NULL);
                if (s->sub == NULL) {
                    Py_DECREF(self);
                    return NULL;
                }
            }
        }
        if (bad) {
            PyErr_SetString(PyExc_TypeError, "malformed chain step");
            Py_DECREF(self);
            return NULL;
        }
    }
    return (PyObject *)self;
}

static PyMemberDef Chain_members[] = {
    {"steps", T_OBJECT, offsetof(Chain, all), READONLY, "the chain's steps, as chain.walk takes them"},
    {NULL},
};

static PyTypeObject ChainType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fhirqa.viewdef._chain.Chain",
    .tp_doc = PyDoc_STR("A compiled navigation chain: chain(input, env) -> list, the twin of chain.walk."),
    .tp_basicsize = sizeof(Chain),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Chain, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = Chain_new,
    .tp_dealloc = (destructor)Chain_dealloc,
    .tp_members = Chain_members,
};

/* ------------------------------------------------------------------------------------------ cells and rows */

/* Shared chain prefixes of one select's columns (runner._shared_prefixes): several columns often start with the
 * same steps (``code.coding``, ``value.ofType(Quantity)``: four Observation columns each), and on synthea-r4 the
 * dict lookups are most of the cost of a cell, so each prefix is walked once per row and its state reused. */
#define MAX_NODES 64

typedef struct {
    PyObject *cur, *coll;  /* the state (new references; both NULL: empty) */
    int done;
} State;

/* The state of node j (a tuple (parent, chain), parents first), computed on first use. */
static int
node_state(PyObject *nodes, State *states, Py_ssize_t j, PyObject *focus, PyObject *env)
{
    if (states[j].done)
        return 0;
    PyObject *node = PyTuple_GET_ITEM(nodes, j);
    Py_ssize_t parent = PyLong_AsSsize_t(PyTuple_GET_ITEM(node, 0));
    Chain *chain = (Chain *)PyTuple_GET_ITEM(node, 1);
    int r;
    if (parent < 0)
        r = chain_run(chain, focus, env, &states[j].cur, &states[j].coll);
    else {
        if (node_state(nodes, states, parent, focus, env) < 0)
            return -1;
        State *up = &states[parent];
        if (up->cur == NULL && up->coll == NULL)
            r = 0;  /* nothing goes on through at least one step */
        else
            r = chain_from(chain, up->cur, up->coll, env, &states[j].cur, &states[j].coll);
    }
    if (r < 0)
        return -1;
    states[j].done = 1;
    return 0;
}

/* A cell from a chain result (cur, coll: new references, consumed). 0: *cell set; 1: several values in a
 * non-collection column; -1: error. */
static int
cell_of(PyObject *cur, PyObject *coll, int collection, PyObject **cell)
{
    if (collection) {
        if (coll != NULL) {
            *cell = PySequence_List(coll);
            Py_DECREF(coll);
            return *cell == NULL ? -1 : 0;
        }
        *cell = PyList_New(cur != NULL);
        if (*cell == NULL) {
            Py_XDECREF(cur);
            return -1;
        }
        if (cur != NULL)
            PyList_SET_ITEM(*cell, 0, cur);
        return 0;
    }
    if (cur != NULL) {
        *cell = cur;
        return 0;
    }
    if (coll == NULL) {
        Py_INCREF(Py_None);
        *cell = Py_None;
        return 0;
    }
    Py_ssize_t count = PyObject_Length(coll);
    if (count < 0) {
        Py_DECREF(coll);
        return -1;
    }
    if (count > 1) {
        Py_DECREF(coll);
        return 1;
    }
    if (count == 0) {
        Py_INCREF(Py_None);
        *cell = Py_None;
    }
    else
        *cell = PySequence_GetItem(coll, 0);
    Py_DECREF(coll);
    return *cell == NULL ? -1 : 0;
}

/* One column cell: spec is (expr, collection) or, with shared prefixes, (rest, collection, node) where rest is
 * the chain after the node's steps (None: the column is the node). Returns as cell_of. */
static int
column_cell(PyObject *spec, PyObject *nodes, State *states, PyObject *focus, PyObject *env, PyObject **cell)
{
    PyObject *expr = PyTuple_GET_ITEM(spec, 0), *cur = NULL, *coll = NULL;
    int collection = PyTuple_GET_ITEM(spec, 1) == Py_True;
    if (PyTuple_GET_SIZE(spec) == 3) {
        Py_ssize_t j = PyLong_AsSsize_t(PyTuple_GET_ITEM(spec, 2));
        if (node_state(nodes, states, j, focus, env) < 0)
            return -1;
        State *st = &states[j];
        if (expr == Py_None) {
            cur = st->cur;
            coll = st->coll;
            Py_XINCREF(cur);
            Py_XINCREF(coll);
        }
        else if ((st->cur != NULL || st->coll != NULL)
                 && chain_from((Chain *)expr, st->cur, st->coll, env, &cur, &coll) < 0)
            return -1;
    }
    else if (Py_IS_TYPE(expr, &ChainType)) {
        /* No list around a single value: most cells are one value. */
        if (chain_run((Chain *)expr, focus, env, &cur, &coll) < 0)
            return -1;
    }
    else {
        PyObject *call_args[2] = {focus, env};
        coll = PyObject_Vectorcall(expr, call_args, 2, NULL);
        if (coll == NULL)
            return -1;
    }
    return cell_of(cur, coll, collection, cell);
}

/* One row of columns (see column_cell): a tuple, Py_None when a column has several values, NULL on error. */
static PyObject *
own_row(PyObject *columns, PyObject *nodes, PyObject *focus, PyObject *env)
{
    Py_ssize_t n = PyTuple_GET_SIZE(columns), count = nodes == NULL ? 0 : PyTuple_GET_SIZE(nodes);
    State states[MAX_NODES];
    for (Py_ssize_t j = 0; j < count; j++)
        states[j] = (State){NULL, NULL, 0};
    PyObject *row = PyTuple_New(n);
    if (row == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *cell;
        int r = column_cell(PyTuple_GET_ITEM(columns, i), nodes, states, focus, env, &cell);
        if (r != 0) {
            Py_DECREF(row);
            row = r < 0 ? NULL : Py_None;
            Py_XINCREF(row);
            break;
        }
        PyTuple_SET_ITEM(row, i, cell);
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        Py_XDECREF(states[j].cur);
        Py_XDECREF(states[j].coll);
    }
    return row;
}

/* Columns are (expr, collection) or (rest chain or None, collection, node index); nodes are (parent, chain). */
static int
check_columns(PyObject *columns, PyObject *nodes)
{
    Py_ssize_t count = nodes == NULL ? 0 : PyTuple_GET_SIZE(nodes);
    if (count > MAX_NODES) {
        PyErr_SetString(PyExc_ValueError, "too many shared prefixes");
        return -1;
    }
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *node = PyTuple_GET_ITEM(nodes, j);
        if (!PyTuple_Check(node) || PyTuple_GET_SIZE(node) != 2 || !PyLong_Check(PyTuple_GET_ITEM(node, 0))
            || !Py_IS_TYPE(PyTuple_GET_ITEM(node, 1), &ChainType)
            || PyLong_AsSsize_t(PyTuple_GET_ITEM(node, 0)) >= j) {
            PyErr_SetString(PyExc_TypeError, "a shared prefix is (parent index before it or -1, chain)");
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(columns); i++) {
        PyObject *spec = PyTuple_GET_ITEM(columns, i);
        if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) < 2 || PyTuple_GET_SIZE(spec) > 3) {
            PyErr_SetString(PyExc_TypeError, "a column is (expr, collection) or (rest, collection, node)");
            return -1;
        }
        if (PyTuple_GET_SIZE(spec) == 3) {
            PyObject *rest = PyTuple_GET_ITEM(spec, 0), *node = PyTuple_GET_ITEM(spec, 2);
            Py_ssize_t j = PyLong_Check(node) ? PyLong_AsSsize_t(node) : -1;
            if (j < 0 || j >= count || (rest != Py_None && !Py_IS_TYPE(rest, &ChainType))) {
                PyErr_SetString(PyExc_TypeError, "a shared-prefix column is (chain or None, collection, node index)");
                return -1;
            }
        }
    }
    return 0;
}

/* own_row(columns, focus, env) -> tuple | None (None: a non-collection column has several values). */
static PyObject *
chain_own_row(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "own_row(columns: tuple, focus, env)");
        return NULL;
    }
    if (check_columns(args[0], NULL) < 0)
        return NULL;
    return own_row(args[0], NULL, args[1], args[2]);
}

/* A row generator: gen(focus, env, idx) -> list of row tuples, one of three kinds mirroring runner.py. */
enum { G_BODY, G_EACH, G_UNION };

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int kind;
    int or_null;          /* EACH: forEachOrNull */
    PyObject *columns;    /* BODY: tuple of columns (see column_cell) */
    PyObject *nodes;      /* BODY: the shared prefixes (tuple of (parent, chain)) */
    PyObject *kids;       /* BODY: child generators; UNION: branches (tuple) */
    PyObject *fallback;   /* BODY: the Python own_row(focus, env), run to raise the named cardinality error */
    PyObject *items;      /* EACH: items_of(focus, env) -> list */
    PyObject *body;       /* EACH: the generator run per item */
    PyObject *flat_extractors;  /* BODY without kids: what a parent folds into its own columns; else None */
} Gen;

static PyTypeObject GenType;

static PyObject *gen_run(PyObject *gen, PyObject *focus, PyObject *env, Py_ssize_t idx);

static int
set_row_index(PyObject *env, Py_ssize_t idx)
{
    PyObject *value = PyLong_FromSsize_t(idx);
    if (value == NULL)
        return -1;
    int r = PyObject_SetAttr(env, str_row_index, value);
    Py_DECREF(value);
    return r;
}

static PyObject *
body_row(Gen *g, PyObject *focus, PyObject *env)
{
    PyObject *row = own_row(g->columns, g->nodes, focus, env);
    if (row == Py_None) {  /* let the Python twin raise the error that names the column */
        Py_DECREF(row);
        PyObject *call_args[2] = {focus, env};
        row = PyObject_Vectorcall(g->fallback, call_args, 2, NULL);
    }
    return row;
}

/* Rows of the cross product of parts (lists of tuples), in runner._product's order. */
static PyObject *
product(PyObject **parts, Py_ssize_t count)
{
    Py_ssize_t total = 1, at[64];
    if (count > 64) {
        PyErr_SetString(PyExc_ValueError, "too many nested selects");
        return NULL;
    }
    for (Py_ssize_t p = 0; p < count; p++) {
        total *= PyList_GET_SIZE(parts[p]);
        at[p] = 0;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(parts[p]); j++)
            if (!PyTuple_Check(PyList_GET_ITEM(parts[p], j))) {
                PyErr_SetString(PyExc_TypeError, "a row must be a tuple");
                return NULL;
            }
    }
    PyObject *rows = PyList_New(total);
    if (rows == NULL)
        return NULL;
    for (Py_ssize_t r = 0; r < total; r++) {
        Py_ssize_t width = 0;
        for (Py_ssize_t p = 0; p < count; p++)
            width += PyTuple_GET_SIZE(PyList_GET_ITEM(parts[p], at[p]));
        PyObject *row = PyTuple_New(width);
        if (row == NULL) {
            Py_DECREF(rows);
            return NULL;
        }
        Py_ssize_t w = 0;
        for (Py_ssize_t p = 0; p < count; p++) {
            PyObject *t = PyList_GET_ITEM(parts[p], at[p]);
            for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(t); j++) {
                PyObject *cell = PyTuple_GET_ITEM(t, j);
                Py_INCREF(cell);
                PyTuple_SET_ITEM(row, w++, cell);
            }
        }
        PyList_SET_ITEM(rows, r, row);
        for (Py_ssize_t p = count - 1; p >= 0; p--) {  /* the last part varies fastest */
            if (++at[p] < PyList_GET_SIZE(parts[p]))
                break;
            at[p] = 0;
        }
    }
    return rows;
}

static PyObject *
body_run(Gen *g, PyObject *focus, PyObject *env, Py_ssize_t idx)
{
    if (set_row_index(env, idx) < 0)
        return NULL;
    Py_ssize_t nkids = PyTuple_GET_SIZE(g->kids);
    int own = PyTuple_GET_SIZE(g->columns) > 0;
    if (nkids == 0) {  /* runner.flat: one row, even without columns */
        PyObject *row = body_row(g, focus, env);
        if (row == NULL)
            return NULL;
        PyObject *rows = PyList_New(1);
        if (rows == NULL) {
            Py_DECREF(row);
            return NULL;
        }
        PyList_SET_ITEM(rows, 0, row);
        return rows;
    }
    PyObject *parts[65] = {NULL};
    Py_ssize_t count = 0;
    PyObject *result = NULL;
    if (nkids > 63) {
        PyErr_SetString(PyExc_ValueError, "too many nested selects");
        return NULL;
    }
    if (own) {
        PyObject *row = body_row(g, focus, env);
        if (row == NULL)
            return NULL;
        parts[0] = PyList_New(1);
        if (parts[0] == NULL) {
            Py_DECREF(row);
            return NULL;
        }
        PyList_SET_ITEM(parts[0], 0, row);
        count = 1;
    }
    for (Py_ssize_t k = 0; k < nkids; k++) {
        PyObject *rows = gen_run(PyTuple_GET_ITEM(g->kids, k), focus, env, idx);
        if (rows == NULL)
            goto done;
        if (!PyList_Check(rows)) {
            Py_DECREF(rows);
            PyErr_SetString(PyExc_TypeError, "a select must yield a list of rows");
            goto done;
        }
        parts[count++] = rows;
        if (PyList_GET_SIZE(rows) == 0) {
            result = PyList_New(0);
            goto done;
        }
    }
    if (count == 1) {  /* _product of one part is that part */
        result = parts[0];
        Py_INCREF(result);
    }
    else
        result = product(parts, count);
done:
    for (Py_ssize_t p = 0; p < count; p++)
        Py_DECREF(parts[p]);
    return result;
}

static PyObject *
each_run(Gen *g, PyObject *focus, PyObject *env, Py_ssize_t idx)
{
    if (set_row_index(env, idx) < 0)  /* a sibling may have left its own index behind */
        return NULL;
    PyObject *items;
    if (Py_IS_TYPE(g->items, &ChainType)) {
        PyObject *cur, *coll;
        if (chain_run((Chain *)g->items, focus, env, &cur, &coll) < 0)
            return NULL;
        if (cur != NULL) {
            items = PyList_New(1);
            if (items == NULL) {
                Py_DECREF(cur);
                return NULL;
            }
            PyList_SET_ITEM(items, 0, cur);
        }
        else
            items = coll != NULL ? coll : PyList_New(0);
    }
    else {
        PyObject *call_args[2] = {focus, env};
        items = PyObject_Vectorcall(g->items, call_args, 2, NULL);
    }
    if (items == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(items, "forEach items must be a collection");
    Py_DECREF(items);
    if (seq == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *rows = NULL;
    if (n == 0) {
        Py_DECREF(seq);
        if (!g->or_null)
            return PyList_New(0);
        /* forEachOrNull keeps the parent row: the body on an empty focus (paths yield null, %rowIndex 0) */
        PyObject *none = PyList_New(0);
        if (none == NULL)
            return NULL;
        rows = gen_run(g->body, none, env, 0);
        Py_DECREF(none);
        return rows;
    }
    rows = PyList_New(0);
    if (rows == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *one = PyList_New(1), *got;
        if (one == NULL)
            goto error;
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        Py_INCREF(item);
        PyList_SET_ITEM(one, 0, item);
        got = gen_run(g->body, one, env, i);
        Py_DECREF(one);
        if (got == NULL)
            goto error;
        Py_ssize_t at = PyList_GET_SIZE(rows);
        int r = PyList_Check(got) ? PyList_SetSlice(rows, at, at, got) : -1;
        if (r < 0 && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a select must yield a list of rows");
        Py_DECREF(got);
        if (r < 0)
            goto error;
    }
    Py_DECREF(seq);
    return rows;
error:
    Py_XDECREF(rows);
    Py_DECREF(seq);
    return NULL;
}

static PyObject *
union_run(Gen *g, PyObject *focus, PyObject *env, Py_ssize_t idx)
{
    PyObject *rows = PyList_New(0);
    if (rows == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(g->kids); k++) {
        PyObject *got = gen_run(PyTuple_GET_ITEM(g->kids, k), focus, env, idx);
        if (got == NULL) {
            Py_DECREF(rows);
            return NULL;
        }
        Py_ssize_t at = PyList_GET_SIZE(rows);
        int r = PyList_Check(got) ? PyList_SetSlice(rows, at, at, got) : -1;
        if (r < 0 && !PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a select must yield a list of rows");
        Py_DECREF(got);
        if (r < 0) {
            Py_DECREF(rows);
            return NULL;
        }
    }
    return rows;
}

static PyObject *
gen_run(PyObject *gen, PyObject *focus, PyObject *env, Py_ssize_t idx)
{
    if (Py_IS_TYPE(gen, &GenType)) {
        Gen *g = (Gen *)gen;
        if (g->kind == G_BODY)
            return body_run(g, focus, env, idx);
        if (g->kind == G_EACH)
            return each_run(g, focus, env, idx);
        return union_run(g, focus, env, idx);
    }
    PyObject *index = PyLong_FromSsize_t(idx);  /* a Python generator (kept for anything else) */
    if (index == NULL)
        return NULL;
    PyObject *call_args[3] = {focus, env, index};
    PyObject *rows = PyObject_Vectorcall(gen, call_args, 3, NULL);
    Py_DECREF(index);
    return rows;
}

static PyObject *
Gen_vectorcall(Gen *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 3 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a row generator takes (focus, env, idx)");
        return NULL;
    }
    Py_ssize_t idx = PyLong_AsSsize_t(args[2]);
    if (idx == -1 && PyErr_Occurred())
        return NULL;
    return gen_run((PyObject *)self, args[0], args[1], idx);
}

static void
Gen_dealloc(Gen *self)
{
    Py_XDECREF(self->columns);
    Py_XDECREF(self->nodes);
    Py_XDECREF(self->kids);
    Py_XDECREF(self->fallback);
    Py_XDECREF(self->items);
    Py_XDECREF(self->body);
    Py_XDECREF(self->flat_extractors);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef Gen_members[] = {
    {"flat_extractors", T_OBJECT, offsetof(Gen, flat_extractors), READONLY,
     "a kid-less body's extractors (a parent folds them into its own columns), else None"},
    {NULL},
};

static PyTypeObject GenType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fhirqa.viewdef._chain.Gen",
    .tp_doc = PyDoc_STR("A compiled select: gen(focus, env, idx) -> list of row tuples (see runner.py)."),
    .tp_basicsize = sizeof(Gen),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Gen, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = (destructor)Gen_dealloc,
    .tp_members = Gen_members,
};

static Gen *
gen_new(int kind)
{
    Gen *g = PyObject_New(Gen, &GenType);
    if (g == NULL)
        return NULL;
    g->vectorcall = (vectorcallfunc)Gen_vectorcall;
    g->kind = kind;
    g->or_null = 0;
    g->columns = g->nodes = g->kids = g->fallback = g->items = g->body = NULL;
    Py_INCREF(Py_None);
    g->flat_extractors = Py_None;
    return g;
}

/* body(columns, nodes, kids, fallback, flat_extractors): own columns x each kid's rows (runner._body). */
static PyObject *
chain_body(PyObject *module, PyObject *args)
{
    PyObject *columns, *nodes, *kids, *fallback, *flat;
    if (!PyArg_ParseTuple(args, "O!O!O!OO:body", &PyTuple_Type, &columns, &PyTuple_Type, &nodes, &PyTuple_Type, &kids,
                          &fallback, &flat))
        return NULL;
    if (check_columns(columns, nodes) < 0)
        return NULL;
    Gen *g = gen_new(G_BODY);
    if (g == NULL)
        return NULL;
    Py_INCREF(columns);
    g->columns = columns;
    Py_INCREF(nodes);
    g->nodes = nodes;
    Py_INCREF(kids);
    g->kids = kids;
    Py_INCREF(fallback);
    g->fallback = fallback;
    Py_INCREF(flat);
    Py_SETREF(g->flat_extractors, flat);
    return (PyObject *)g;
}

/* each(items_of, or_null, body): the body once per item (forEach, forEachOrNull, repeat). */
static PyObject *
chain_each(PyObject *module, PyObject *args)
{
    PyObject *items, *body;
    int or_null;
    if (!PyArg_ParseTuple(args, "OpO:each", &items, &or_null, &body))
        return NULL;
    Gen *g = gen_new(G_EACH);
    if (g == NULL)
        return NULL;
    Py_INCREF(items);
    g->items = items;
    g->or_null = or_null;
    Py_INCREF(body);
    g->body = body;
    return (PyObject *)g;
}

/* union(branches): the branches' rows, one after the other (unionAll). */
static PyObject *
chain_union(PyObject *module, PyObject *args)
{
    PyObject *branches;
    if (!PyArg_ParseTuple(args, "O!:union", &PyTuple_Type, &branches))
        return NULL;
    Gen *g = gen_new(G_UNION);
    if (g == NULL)
        return NULL;
    Py_INCREF(branches);
    g->kids = branches;
    return (PyObject *)g;
}

/* chain.join(sep) as one column: [sep.join(items)] when every item is a str (what FHIRPath join() gives them),
 * else the Python expression (to_string() of numbers, booleans, quantities). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *chain, *sep, *fallback;
} Joined;

static PyObject *
Joined_vectorcall(Joined *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a joined chain takes (focus, env)");
        return NULL;
    }
    PyObject *cur, *coll, *text;
    if (chain_run((Chain *)self->chain, args[0], args[1], &cur, &coll) < 0)
        return NULL;
    if (cur != NULL) {
        if (!PyUnicode_CheckExact(cur)) {
            Py_DECREF(cur);
            return PyObject_Vectorcall(self->fallback, args, 2, NULL);
        }
        text = cur;  /* one string joins to itself */
    }
    else if (coll == NULL)
        text = PyUnicode_FromString("");
    else {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(coll); i++)
            if (!PyUnicode_CheckExact(PyList_GET_ITEM(coll, i))) {
                Py_DECREF(coll);
                return PyObject_Vectorcall(self->fallback, args, 2, NULL);
            }
        text = PyUnicode_Join(self->sep, coll);
        Py_DECREF(coll);
    }
    if (text == NULL)
        return NULL;
    PyObject *out = PyList_New(1);
    if (out == NULL) {
        Py_DECREF(text);
        return NULL;
    }
    PyList_SET_ITEM(out, 0, text);
    return out;
}

static void
Joined_dealloc(Joined *self)
{
    Py_XDECREF(self->chain);
    Py_XDECREF(self->sep);
    Py_XDECREF(self->fallback);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject JoinedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fhirqa.viewdef._chain.Joined",
    .tp_doc = PyDoc_STR("chain.join(sep) as an expression: joined(focus, env) -> [str]."),
    .tp_basicsize = sizeof(Joined),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Joined, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = (destructor)Joined_dealloc,
};

/* join(chain, sep, fallback) -> Joined */
static PyObject *
chain_join(PyObject *module, PyObject *args)
{
    PyObject *chain, *sep, *fallback;
    if (!PyArg_ParseTuple(args, "O!UO:join", &ChainType, &chain, &sep, &fallback))
        return NULL;
    Joined *j = PyObject_New(Joined, &JoinedType);
    if (j == NULL)
        return NULL;
    j->vectorcall = (vectorcallfunc)Joined_vectorcall;
    Py_INCREF(chain);
    j->chain = chain;
    Py_INCREF(sep);
    j->sep = sep;
    Py_INCREF(fallback);
    j->fallback = fallback;
    return (PyObject *)j;
}

/* A view's rows(resource) without a Python frame (CompiledView.rows when the view has no where clause): the
 * type test, the focus and Env, then the select's rows. Any error goes to failed(resource, exc), which raises
 * the view's error naming the resource. Measured: the Python rows() frame and Env.__init__ were ~10 % of the
 * canonical maps on synthea-r4 once the rows themselves were in C. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *gen, *resource_type, *env_type, *failed;
} Rows;

static PyObject *str_resource_type, *str_resource, *str_index;

static PyObject *
Rows_vectorcall(Rows *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "rows(resource)");
        return NULL;
    }
    PyObject *resource = args[0];
    if (!PyDict_CheckExact(resource))
        return PyList_New(0);
    PyObject *rtype = PyDict_GetItemWithError(resource, str_resource_type);
    if (rtype == NULL) {
        if (PyErr_Occurred())
            return NULL;
        rtype = Py_None;
    }
    int other = PyObject_RichCompareBool(rtype, self->resource_type, Py_NE);
    if (other != 0)
        return other < 0 ? NULL : PyList_New(0);
    PyObject *focus = PyList_New(1), *env = NULL, *rows = NULL;
    if (focus == NULL)
        return NULL;
    Py_INCREF(resource);
    PyList_SET_ITEM(focus, 0, resource);
    /* Env(focus) without running its __init__ frame: the same three slots */
    env = ((PyTypeObject *)self->env_type)->tp_alloc((PyTypeObject *)self->env_type, 0);
    if (env == NULL || PyObject_SetAttr(env, str_resource, focus) < 0 || set_row_index(env, 0) < 0
        || PyObject_SetAttr(env, str_index, Py_None) < 0)
        goto done;
    rows = gen_run(self->gen, focus, env, 0);
    if (rows == NULL) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        if (value == NULL) {  /* cannot happen after a failure; keep the error as it is */
            PyErr_Restore(type, value, tb);
            goto done;
        }
        if (tb != NULL)
            PyException_SetTraceback(value, tb);
        PyObject *call_args[2] = {resource, value};
        PyObject *got = PyObject_Vectorcall(self->failed, call_args, 2, NULL);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        if (got != NULL) {  /* failed() must raise */
            Py_DECREF(got);
            PyErr_SetString(PyExc_RuntimeError, "failed() returned instead of raising");
        }
    }
done:
    Py_XDECREF(env);
    Py_DECREF(focus);
    return rows;
}

static void
Rows_dealloc(Rows *self)
{
    Py_XDECREF(self->gen);
    Py_XDECREF(self->resource_type);
    Py_XDECREF(self->env_type);
    Py_XDECREF(self->failed);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject RowsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fhirqa.viewdef._chain.Rows",
    .tp_doc = PyDoc_STR("rows(resource) -> list of row tuples: a compiled view without where clauses."),
    .tp_basicsize = sizeof(Rows),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(Rows, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dealloc = (destructor)Rows_dealloc,
};

/* rows(gen, resource_type, env_type, failed) -> Rows */
static PyObject *
chain_rows(PyObject *module, PyObject *args)
{
    PyObject *gen, *resource_type, *env_type, *failed;
    if (!PyArg_ParseTuple(args, "OUO!O:rows", &gen, &resource_type, &PyType_Type, &env_type, &failed))
        return NULL;
    Rows *r = PyObject_New(Rows, &RowsType);
    if (r == NULL)
        return NULL;
    r->vectorcall = (vectorcallfunc)Rows_vectorcall;
    Py_INCREF(gen);
    r->gen = gen;
    Py_INCREF(resource_type);
    r->resource_type = resource_type;
    Py_INCREF(env_type);
    r->env_type = env_type;
    Py_INCREF(failed);
    r->failed = failed;
    return (PyObject *)r;
}

static PyMethodDef chain_methods[] = {
    {"own_row", (PyCFunction)(void (*)(void))chain_own_row, METH_FASTCALL,
     "own_row(columns, focus, env) -> tuple | None: one row of (expr, collection) columns; None when a "
     "non-collection column has several values (the caller raises the error)."},
    {"body", chain_body, METH_VARARGS,
     "body(columns, nodes, kids, fallback, flat_extractors) -> Gen: own columns x each kid's rows."},
    {"each", chain_each, METH_VARARGS, "each(items_of, or_null, body) -> Gen: the body once per item."},
    {"union", chain_union, METH_VARARGS, "union(branches) -> Gen: the branches' rows concatenated."},
    {"join", chain_join, METH_VARARGS,
     "join(chain, sep, fallback) -> Joined: [sep.join(strings)], else fallback(focus, env)."},
    {"rows", chain_rows, METH_VARARGS,
     "rows(gen, resource_type, env_type, failed) -> Rows: a view's rows(resource), errors raised by failed()."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef chain_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "fhirqa.viewdef._chain",
    .m_doc = "Compiled FHIRPath chains and ViewDefinition row assembly, in C (optional speed-up).",
    .m_size = -1,
    .m_methods = chain_methods,
};

PyMODINIT_FUNC
PyInit__chain(void)
{
    str_extension = PyUnicode_InternFromString("extension");
    str_url = PyUnicode_InternFromString("url");
    str_row_index = PyUnicode_InternFromString("row_index");
    str_resource_type = PyUnicode_InternFromString("resourceType");
    str_resource = PyUnicode_InternFromString("resource");
    str_index = PyUnicode_InternFromString("index");
    if (str_extension == NULL || str_url == NULL || str_row_index == NULL || str_resource_type == NULL
        || str_resource == NULL || str_index == NULL)
        return NULL;
    if (PyType_Ready(&ChainType) < 0 || PyType_Ready(&GenType) < 0 || PyType_Ready(&RowsType) < 0
        || PyType_Ready(&JoinedType) < 0)
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
    Py_INCREF(&GenType);
    if (PyModule_AddObject(module, "Gen", (PyObject *)&GenType) < 0) {
        Py_DECREF(&GenType);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "STEP_KINDS", K_COUNT) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
