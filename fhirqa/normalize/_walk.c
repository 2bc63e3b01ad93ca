/*
 * The two walks every ingested resource goes through, in C: the reference rewrite and the checked
 * flatten that emits its facts. Each is the exact twin of a Python reference implementation
 * (``references._rewrite_fast``, ``flatten._scan_dict``/``_emit_dict``) and the tests hold them equal.
 *
 * Why C: both walks touch every node of every resource, and in Python they were half of the ingest
 * time. Here the facts go straight into column buffers that Arrow wraps without a Python object per
 * fact. Anything unusual (a subclass of dict, a number beyond 64 bits, a field a check must judge) is
 * not decided here: the walk says so and the caller runs the Python implementation, which names the
 * problem. The module is optional; without a compiler fhirqa runs the Python walks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------- growable byte buffers */

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buf;

static int
buf_reserve(Buf *b, Py_ssize_t extra)
{
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int
buf_put(Buf *b, const void *src, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0)
        return -1;
    memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static void
buf_free(Buf *b)
{
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ---------------------------------------------------------------- the fact sink */

/* value_type codes, as flatten.VALUE_TYPES orders them */
enum { CODE_STRING = 0, CODE_NUMBER = 1, CODE_BOOLEAN = 2, CODE_NULL = 3 };

/* A fact's path is stored once per distinct path (a dictionary) and referred to by its entry number:
 * a batch of 800k facts has a few thousand distinct paths, and the Parquet writer takes an Arrow
 * dictionary column as it is instead of hashing every path again. */
typedef struct {
    PyObject_HEAD
    Buf path_index;    /* int32 per row: the row's entry in the path dictionary */
    Buf dict_data;     /* the distinct paths, back to back */
    Buf dict_offsets;  /* int32, entries + 1 */
    Buf dict_hashes;   /* uint64 per entry */
    int32_t *slots;    /* open addressing over the entries: entry + 1, 0 = free */
    Py_ssize_t slot_cap;
    Py_ssize_t entries;
    Buf codes;         /* int8 */
    Buf value_data;
    Buf value_offsets; /* int64, rows + 1 */
    Buf value_valid;   /* one byte per row; packed into a bitmap on export */
    Buf numbers;       /* float64 */
    Buf number_valid;  /* one byte per row */
    Py_ssize_t rows;
    Buf path;          /* the path of the node being walked */
} FactSink;

static int
sink_init_buffers(FactSink *s)
{
    int64_t zero = 0;
    int32_t zero32 = 0;
    s->rows = 0;
    s->path_index.len = s->dict_data.len = s->dict_offsets.len = s->dict_hashes.len = 0;
    s->codes.len = s->value_data.len = 0;
    s->value_offsets.len = s->value_valid.len = s->numbers.len = s->number_valid.len = 0;
    s->path.len = 0;
    s->entries = 0;
    if (s->slots == NULL) {
        s->slot_cap = 1024;
        s->slots = PyMem_Calloc((size_t)s->slot_cap, sizeof(int32_t));
        if (s->slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    } else {
        memset(s->slots, 0, (size_t)s->slot_cap * sizeof(int32_t));
    }
    if (buf_put(&s->dict_offsets, &zero32, 4) < 0 || buf_put(&s->value_offsets, &zero, 8) < 0)
        return -1;
    return 0;
}

static int
FactSink_init(FactSink *self, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, ":FactSink", kwlist))
        return -1;
    return sink_init_buffers(self);
}

static void
FactSink_dealloc(FactSink *self)
{
    buf_free(&self->path_index);
    buf_free(&self->dict_data);
    buf_free(&self->dict_offsets);
    buf_free(&self->dict_hashes);
    PyMem_Free(self->slots);
    self->slots = NULL;
    buf_free(&self->codes);
    buf_free(&self->value_data);
    buf_free(&self->value_offsets);
    buf_free(&self->value_valid);
    buf_free(&self->numbers);
    buf_free(&self->number_valid);
    buf_free(&self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
sink_grow_slots(FactSink *s)
{
    Py_ssize_t cap = s->slot_cap * 2;
    int32_t *slots = PyMem_Calloc((size_t)cap, sizeof(int32_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    const uint64_t *hashes = (const uint64_t *)s->dict_hashes.data;
    size_t mask = (size_t)cap - 1;
    for (Py_ssize_t e = 0; e < s->entries; e++) {
        size_t i = (size_t)hashes[e] & mask;
        while (slots[i])
            i = (i + 1) & mask;
        slots[i] = (int32_t)(e + 1);
    }
    PyMem_Free(s->slots);
    s->slots = slots;
    s->slot_cap = cap;
    return 0;
}

/* The dictionary entry of the current path, added when it is new. */
static int
sink_intern_path(FactSink *s, int32_t *entry)
{
    const unsigned char *p = (const unsigned char *)s->path.data;
    Py_ssize_t n = s->path.len;
    uint64_t h = 1469598103934665603ULL;  /* FNV-1a */
    for (Py_ssize_t k = 0; k < n; k++) {
        h ^= p[k];
        h *= 1099511628211ULL;
    }
    if ((s->entries + 1) * 2 > s->slot_cap && sink_grow_slots(s) < 0)
        return -1;
    size_t mask = (size_t)s->slot_cap - 1, i = (size_t)h & mask;
    const uint64_t *hashes = (const uint64_t *)s->dict_hashes.data;
    const int32_t *offsets = (const int32_t *)s->dict_offsets.data;
    for (int32_t e; (e = s->slots[i]) != 0; i = (i + 1) & mask) {
        e--;
        if (hashes[e] == h && offsets[e + 1] - offsets[e] == n
            && memcmp(s->dict_data.data + offsets[e], p, (size_t)n) == 0) {
            *entry = e;
            return 0;
        }
    }
    if (s->dict_data.len + n > INT32_MAX || s->entries >= INT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "more than 2 GB of distinct fact paths in one batch");
        return -1;
    }
    int32_t end = (int32_t)(s->dict_data.len + n);
    if (buf_put(&s->dict_data, p, n) < 0 || buf_put(&s->dict_offsets, &end, 4) < 0
        || buf_put(&s->dict_hashes, &h, 8) < 0)
        return -1;
    *entry = (int32_t)s->entries;
    s->slots[i] = (int32_t)(++s->entries);
    return 0;
}

/* Append one fact: the current path, a type code, the value text (NULL: null) and the number. */
static int
sink_emit(FactSink *s, int code, const char *value, Py_ssize_t value_len, int has_number, double number)
{
    int64_t end;
    int32_t entry;
    int8_t c = (int8_t)code;
    char valid;
    if (sink_intern_path(s, &entry) < 0)
        return -1;
    if (buf_put(&s->path_index, &entry, 4) < 0 || buf_put(&s->codes, &c, 1) < 0)
        return -1;
    if (value != NULL && buf_put(&s->value_data, value, value_len) < 0)
        return -1;
    end = (int64_t)s->value_data.len;
    valid = value != NULL;
    if (buf_put(&s->value_offsets, &end, 8) < 0 || buf_put(&s->value_valid, &valid, 1) < 0)
        return -1;
    if (!has_number)
        number = 0.0;
    valid = (char)has_number;
    if (buf_put(&s->numbers, &number, 8) < 0 || buf_put(&s->number_valid, &valid, 1) < 0)
        return -1;
    s->rows++;
    return 0;
}

/* Forget every fact from row ``rows`` on (a resource the checks must judge, or one they rejected). */
static void
sink_truncate(FactSink *s, Py_ssize_t rows)
{
    if (rows < 0 || rows >= s->rows)
        return;
    s->rows = rows;  /* paths the forgotten rows added stay in the dictionary, unused: harmless */
    s->path_index.len = rows * 4;
    s->value_data.len = (Py_ssize_t)((int64_t *)s->value_offsets.data)[rows];
    s->value_offsets.len = (rows + 1) * 8;
    s->codes.len = s->value_valid.len = s->number_valid.len = rows;
    s->numbers.len = rows * 8;
}

static PyObject *
FactSink_truncate(FactSink *self, PyObject *arg)
{
    Py_ssize_t rows = PyLong_AsSsize_t(arg);
    if (rows == -1 && PyErr_Occurred())
        return NULL;
    sink_truncate(self, rows);
    Py_RETURN_NONE;
}

static Py_ssize_t
FactSink_len(FactSink *self)
{
    return self->rows;
}

/* The columns as bytes, for ``pyarrow.Array.from_buffers``, rows in the order of ``ranges`` (a buffer of
 * int64 pairs: first row, row count; None: every row as it is): (rows, path_indices (int32),
 * path_dictionary_offsets (int32), path_dictionary_data, codes, value_validity, value_offsets (int64),
 * value_data, number_validity, numbers). Reordering here, while copying out, is what makes sorting the
 * facts by patient free: a batch's rows come grouped by resource, and each range is one memcpy per column. */
static PyObject *
FactSink_export(FactSink *self, PyObject *args)
{
    PyObject *ranges_obj = Py_None;
    if (!PyArg_ParseTuple(args, "|O:export", &ranges_obj))
        return NULL;
    Py_buffer view = {0};
    int64_t whole[2] = {0, (int64_t)self->rows};
    const int64_t *ranges = whole;
    Py_ssize_t nranges = 1, n = 0;
    if (ranges_obj != Py_None) {
        if (PyObject_GetBuffer(ranges_obj, &view, PyBUF_SIMPLE) < 0)
            return NULL;
        if (view.len % 16) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_ValueError, "export(): ranges must be int64 pairs");
            return NULL;
        }
        ranges = (const int64_t *)view.buf;
        nranges = view.len / 16;
    }
    for (Py_ssize_t r = 0; r < nranges; r++) {
        int64_t first = ranges[2 * r], count = ranges[2 * r + 1];
        if (first < 0 || count < 0 || first + count > (int64_t)self->rows) {
            if (view.buf)
                PyBuffer_Release(&view);
            PyErr_SetString(PyExc_ValueError, "export(): a range is outside the rows");
            return NULL;
        }
        n += (Py_ssize_t)count;
    }
    const int64_t *voff = (const int64_t *)self->value_offsets.data;
    Py_ssize_t value_bytes = 0;
    for (Py_ssize_t r = 0; r < nranges; r++)
        value_bytes += (Py_ssize_t)(voff[ranges[2 * r] + ranges[2 * r + 1]] - voff[ranges[2 * r]]);
    PyObject *index = PyBytes_FromStringAndSize(NULL, n * 4);
    PyObject *codes = PyBytes_FromStringAndSize(NULL, n);
    PyObject *vbits = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
    PyObject *offs = PyBytes_FromStringAndSize(NULL, (n + 1) * 8);
    PyObject *vdata = PyBytes_FromStringAndSize(NULL, value_bytes);
    PyObject *nbits = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
    PyObject *nums = PyBytes_FromStringAndSize(NULL, n * 8);
    if (!index || !codes || !vbits || !offs || !vdata || !nbits || !nums) {
        Py_XDECREF(index); Py_XDECREF(codes); Py_XDECREF(vbits); Py_XDECREF(offs);
        Py_XDECREF(vdata); Py_XDECREF(nbits); Py_XDECREF(nums);
        if (view.buf)
            PyBuffer_Release(&view);
        return NULL;
    }
    char *o_index = PyBytes_AS_STRING(index), *o_codes = PyBytes_AS_STRING(codes);
    unsigned char *o_vbits = (unsigned char *)PyBytes_AS_STRING(vbits);
    unsigned char *o_nbits = (unsigned char *)PyBytes_AS_STRING(nbits);
    int64_t *o_offs = (int64_t *)PyBytes_AS_STRING(offs);
    char *o_vdata = PyBytes_AS_STRING(vdata), *o_nums = PyBytes_AS_STRING(nums);
    memset(o_vbits, 0, (size_t)((n + 7) / 8));
    memset(o_nbits, 0, (size_t)((n + 7) / 8));
    Py_ssize_t row = 0;
    int64_t cursor = 0;
    o_offs[0] = 0;
    for (Py_ssize_t r = 0; r < nranges; r++) {
        Py_ssize_t first = (Py_ssize_t)ranges[2 * r], count = (Py_ssize_t)ranges[2 * r + 1];
        if (!count)
            continue;
        memcpy(o_index + row * 4, self->path_index.data + first * 4, (size_t)count * 4);
        memcpy(o_codes + row, self->codes.data + first, (size_t)count);
        memcpy(o_nums + row * 8, self->numbers.data + first * 8, (size_t)count * 8);
        int64_t base = voff[first];
        memcpy(o_vdata + cursor, self->value_data.data + base, (size_t)(voff[first + count] - base));
        for (Py_ssize_t k = 0; k < count; k++, row++) {
            o_offs[row + 1] = voff[first + k + 1] - base + cursor;
            if (self->value_valid.data[first + k])
                o_vbits[row >> 3] |= (unsigned char)(1u << (row & 7));
            if (self->number_valid.data[first + k])
                o_nbits[row >> 3] |= (unsigned char)(1u << (row & 7));
        }
        cursor = o_offs[row];
    }
    if (view.buf)
        PyBuffer_Release(&view);
    return Py_BuildValue(
        "(nNy#y#NNNNNN)", n, index,
        self->dict_offsets.data, self->dict_offsets.len,
        self->dict_data.data ? self->dict_data.data : "", self->dict_data.len,
        codes, vbits, offs, vdata, nbits, nums);
}

static PyObject *
FactSink_clear(FactSink *self, PyObject *Py_UNUSED(ignored))
{
    if (sink_init_buffers(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- path building */

static inline int
path_push_key(FactSink *s, PyObject *key, int dot)
{
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(key, &n);
    if (text == NULL)
        return -1;
    if (dot && buf_put(&s->path, ".", 1) < 0)
        return -1;
    return buf_put(&s->path, text, n);
}

static inline int
path_push_index(FactSink *s, Py_ssize_t index)
{
    char text[32];
    int n = snprintf(text, sizeof text, "[%zd]", index);
    return buf_put(&s->path, text, n);
}

/* ---------------------------------------------------------------- scalar text, as Python writes it */

/* Emit an int as str(value) / float(value); 1 when the int is beyond 64 bits (the caller decides). */
static int
emit_exact_int(FactSink *s, PyObject *value)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    char text[32];
    if (overflow)
        return 1;
    if (v == -1 && PyErr_Occurred())
        return -1;
    int n = snprintf(text, sizeof text, "%lld", v);
    return sink_emit(s, CODE_NUMBER, text, n, 1, (double)v);
}

static int
emit_exact_float(FactSink *s, PyObject *value)
{
    double v = PyFloat_AS_DOUBLE(value);
    char *text = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);  /* repr(value) */
    if (text == NULL)
        return -1;
    int rc = sink_emit(s, CODE_NUMBER, text, (Py_ssize_t)strlen(text), 1, v);
    PyMem_Free(text);
    return rc;
}

static int
emit_string(FactSink *s, PyObject *value)
{
    Py_ssize_t n;
    const char *text = PyUnicode_AsUTF8AndSize(value, &n);
    if (text == NULL)
        return -1;
    return sink_emit(s, CODE_STRING, text, n, 0, 0.0);
}

static int
emit_bool(FactSink *s, PyObject *value)
{
    return value == Py_True ? sink_emit(s, CODE_BOOLEAN, "true", 4, 0, 0.0)
                            : sink_emit(s, CODE_BOOLEAN, "false", 5, 0, 0.0);
}

/* ---------------------------------------------------------------- the checked walk (flatten._scan_dict) */

typedef struct {
    PyObject *check_str;    /* keys whose string value the checks look at (dates and references) */
    PyObject *references;   /* keys that must hold a Reference object */
    PyObject *check_scalar; /* keys where a number or boolean is wrong */
    PyObject *check_null;   /* keys where null is wrong */
} Rules;

/* Return values of the walks: 0 done, 1 noticed (a check must judge, or an unusual value), -1 error. */
#define NOTICED 1

static int
is_ascii_digits(const char *p, int n)
{
    for (int i = 0; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return 0;
    return 1;
}

/* YYYY[-MM[-DD[Thh:mm[:ss[.f+]][Z|(+|-)hh:mm]]]] in ASCII: the common case of validate._DATE_TIME.
 * False does not mean invalid (the regex also takes other Unicode digits): the caller then lets Python judge. */
static int
looks_like_date_time(PyObject *value)
{
    if (!PyUnicode_IS_ASCII(value))
        return 0;
    const char *p = (const char *)PyUnicode_DATA(value);
    Py_ssize_t n = PyUnicode_GET_LENGTH(value);
    Py_ssize_t i = 4;
    if (n < 4 || !is_ascii_digits(p, 4))
        return 0;
    if (n == 4)
        return 1;
    if (n < 7 || p[4] != '-' || !is_ascii_digits(p + 5, 2))
        return 0;
    if (n == 7)
        return 1;
    if (n < 10 || p[7] != '-' || !is_ascii_digits(p + 8, 2))
        return 0;
    if (n == 10)
        return 1;
    if (n < 16 || p[10] != 'T' || !is_ascii_digits(p + 11, 2) || p[13] != ':' || !is_ascii_digits(p + 14, 2))
        return 0;
    i = 16;
    if (i < n && p[i] == ':') {
        if (i + 3 > n || !is_ascii_digits(p + i + 1, 2))
            return 0;
        i += 3;
        if (i < n && p[i] == '.') {
            Py_ssize_t start = ++i;
            while (i < n && p[i] >= '0' && p[i] <= '9')
                i++;
            if (i == start)
                return 0;
        }
    }
    if (i == n)
        return 1;
    if (p[i] == 'Z')
        return i + 1 == n;
    if ((p[i] == '+' || p[i] == '-') && i + 6 == n && is_ascii_digits(p + i + 1, 2) && p[i + 3] == ':'
        && is_ascii_digits(p + i + 4, 2))
        return 1;
    return 0;
}

static inline int
key_is_reference(PyObject *key)
{
    return PyUnicode_IS_ASCII(key) && PyUnicode_GET_LENGTH(key) == 9
           && memcmp(PyUnicode_DATA(key), "reference", 9) == 0;
}

static inline int
in_set(PyObject *set, PyObject *key)
{
    return PySet_Contains(set, key);  /* 1, 0 or -1 */
}

static int scan_list(FactSink *s, PyObject *node, const Rules *rules);
static int scan_dict(FactSink *s, PyObject *node, const Rules *rules);

static int
scan_dict_items(FactSink *s, PyObject *node, const Rules *rules)
{
    Py_ssize_t pos = 0, base = s->path.len;
    PyObject *key, *value;
    int rc, hit;
    while (PyDict_Next(node, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key))
            return NOTICED;
        s->path.len = base;
        if (path_push_key(s, key, 0) < 0)
            return -1;
        PyTypeObject *kind = Py_TYPE(value);
        if (kind == &PyUnicode_Type) {
            if ((hit = in_set(rules->check_str, key)) < 0)
                return -1;
            if (hit) {
                if ((hit = in_set(rules->references, key)) < 0)
                    return -1;
                if (hit || !looks_like_date_time(value))
                    return NOTICED;
            }
            rc = emit_string(s, value);
        }
        else if (kind == &PyDict_Type) {
            if (key_is_reference(key))
                return NOTICED;
            if (buf_put(&s->path, ".", 1) < 0)
                return -1;
            rc = scan_dict(s, value, rules);
        }
        else if (kind == &PyList_Type) {
            if (key_is_reference(key))
                return NOTICED;
            rc = scan_list(s, value, rules);
        }
        else if (kind == &PyLong_Type || kind == &PyFloat_Type || kind == &PyBool_Type) {
            if ((hit = in_set(rules->check_scalar, key)) < 0)
                return -1;
            if (hit)
                return NOTICED;
            rc = kind == &PyLong_Type ? emit_exact_int(s, value)
                 : kind == &PyFloat_Type ? emit_exact_float(s, value) : emit_bool(s, value);
        }
        else if (value == Py_None) {
            if ((hit = in_set(rules->check_null, key)) < 0)
                return -1;
            if (hit)
                return NOTICED;
            rc = sink_emit(s, CODE_NULL, NULL, 0, 0, 0.0);
        }
        else
            return NOTICED;
        if (rc != 0)
            return rc;
    }
    s->path.len = base;
    return 0;
}

/* The walk touches nothing that runs Python code (exact str, dict, list, int, float, bool, None), so the
 * containers cannot change under it; the recursion guard keeps a hostile depth from the C stack. */
static int
scan_dict(FactSink *s, PyObject *node, const Rules *rules)
{
    if (Py_EnterRecursiveCall(" while flattening a resource"))
        return -1;
    int rc = scan_dict_items(s, node, rules);
    Py_LeaveRecursiveCall();
    return rc;
}

static int
scan_list(FactSink *s, PyObject *node, const Rules *rules)
{
    Py_ssize_t base = s->path.len;
    int rc;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(node); i++) {
        PyObject *value = PyList_GET_ITEM(node, i);
        PyTypeObject *kind = Py_TYPE(value);
        s->path.len = base;
        if (path_push_index(s, i) < 0)
            return -1;
        if (kind == &PyDict_Type) {
            if (buf_put(&s->path, ".", 1) < 0)
                return -1;
            Py_INCREF(value);  /* the list is not ours: hold the item while we walk it */
            rc = scan_dict(s, value, rules);
            Py_DECREF(value);
        }
        else if (kind == &PyUnicode_Type)
            rc = emit_string(s, value);
        else if (kind == &PyList_Type) {
            Py_INCREF(value);
            rc = scan_list(s, value, rules);
            Py_DECREF(value);
        }
        else if (kind == &PyLong_Type)
            rc = emit_exact_int(s, value);
        else if (kind == &PyFloat_Type)
            rc = emit_exact_float(s, value);
        else if (kind == &PyBool_Type)
            rc = emit_bool(s, value);
        else if (value == Py_None)
            rc = sink_emit(s, CODE_NULL, NULL, 0, 0, 0.0);
        else
            return NOTICED;
        if (rc != 0)
            return rc;
    }
    s->path.len = base;
    return 0;
}

/* FactSink.scan(resource, check_str, references, check_scalar, check_null) -> bool
 * True: the resource's facts were appended. False: the walk noticed a field the checks must judge (or a
 * value it does not handle); nothing was appended and the caller decides in Python. */
static PyObject *
FactSink_scan(FactSink *self, PyObject *args)
{
    PyObject *resource;
    Rules rules;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!:scan", &PyDict_Type, &resource, &PyFrozenSet_Type, &rules.check_str,
                          &PyFrozenSet_Type, &rules.references, &PyFrozenSet_Type, &rules.check_scalar,
                          &PyFrozenSet_Type, &rules.check_null))
        return NULL;
    Py_ssize_t before = self->rows;
    self->path.len = 0;
    int rc = Py_IS_TYPE(resource, &PyDict_Type) ? scan_dict(self, resource, &rules) : NOTICED;
    if (rc != 0)
        sink_truncate(self, before);
    if (rc < 0) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) {  /* a lone surrogate: Python names it */
            PyErr_Clear();
            Py_RETURN_FALSE;
        }
        return NULL;
    }
    return PyBool_FromLong(rc == 0);
}

/* ---------------------------------------------------------------- the unchecked walk (flatten._emit) */

static int emit_value(FactSink *s, PyObject *value);

static int
emit_dict(FactSink *s, PyObject *node)
{
    Py_ssize_t pos = 0, base = s->path.len;
    PyObject *key, *value;
    if (Py_EnterRecursiveCall(" while flattening a resource"))
        return -1;
    Py_INCREF(node);
    while (PyDict_Next(node, &pos, &key, &value)) {
        int rc;
        if (!PyUnicode_Check(key)) {  /* path = prefix + key, as in Python */
            PyErr_Format(PyExc_TypeError, "can only concatenate str (not \"%.100s\") to str", Py_TYPE(key)->tp_name);
            goto error;
        }
        s->path.len = base;
        Py_INCREF(value);
        rc = path_push_key(s, key, 0);
        if (rc == 0)
            rc = emit_value(s, value);
        Py_DECREF(value);
        if (rc < 0)
            goto error;
    }
    s->path.len = base;
    Py_DECREF(node);
    Py_LeaveRecursiveCall();
    return 0;
error:
    Py_DECREF(node);
    Py_LeaveRecursiveCall();
    return -1;
}

static int
emit_number(FactSink *s, PyObject *value)
{
    if (Py_IS_TYPE(value, &PyLong_Type)) {
        int rc = emit_exact_int(s, value);
        if (rc != 1)
            return rc;
    }
    else if (Py_IS_TYPE(value, &PyFloat_Type))
        return emit_exact_float(s, value);
    /* repr(value) if isinstance(value, float) else str(value); float(value) */
    PyObject *text = PyFloat_Check(value) ? PyObject_Repr(value) : PyObject_Str(value);
    if (text == NULL)
        return -1;
    double number = PyFloat_Check(value) ? PyFloat_AsDouble(value) : PyLong_AsDouble(value);
    if (number == -1.0 && PyErr_Occurred()) {
        Py_DECREF(text);
        return -1;
    }
    Py_ssize_t n;
    const char *utf8 = PyUnicode_AsUTF8AndSize(text, &n);
    int rc = utf8 == NULL ? -1 : sink_emit(s, CODE_NUMBER, utf8, n, 1, number);
    Py_DECREF(text);
    return rc;
}

static int
emit_value(FactSink *s, PyObject *value)
{
    if (PyUnicode_Check(value))
        return emit_string(s, value);
    if (PyDict_Check(value)) {
        if (buf_put(&s->path, ".", 1) < 0)
            return -1;
        return emit_dict(s, value);
    }
    if (PyList_Check(value)) {
        Py_ssize_t base = s->path.len;
        Py_INCREF(value);
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            int rc;
            s->path.len = base;
            Py_INCREF(item);
            rc = path_push_index(s, i);
            if (rc == 0)
                rc = emit_value(s, item);
            Py_DECREF(item);
            if (rc < 0) {
                Py_DECREF(value);
                return -1;
            }
        }
        s->path.len = base;
        Py_DECREF(value);
        return 0;
    }
    if (PyBool_Check(value))
        return emit_bool(s, value);
    if (PyLong_Check(value) || PyFloat_Check(value))
        return emit_number(s, value);
    if (value == Py_None)
        return sink_emit(s, CODE_NULL, NULL, 0, 0, 0.0);
    return 0;  /* anything else is not JSON: the Python walk skips it too */
}

/* FactSink.emit(resource) -> None: append the facts of a resource already judged valid (no checks). */
static PyObject *
FactSink_emit(FactSink *self, PyObject *resource)
{
    if (!PyDict_Check(resource)) {
        PyErr_SetString(PyExc_TypeError, "emit() takes a dict");
        return NULL;
    }
    Py_ssize_t before = self->rows;
    self->path.len = 0;
    if (emit_dict(self, resource) < 0) {
        sink_truncate(self, before);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef FactSink_methods[] = {
    {"scan", (PyCFunction)FactSink_scan, METH_VARARGS,
     "scan(resource, check_str, references, check_scalar, check_null) -> bool: append the facts of a resource "
     "while noticing fields the checks must judge (False: nothing appended)."},
    {"emit", (PyCFunction)FactSink_emit, METH_O, "emit(resource): append the facts of a resource, no checks."},
    {"truncate", (PyCFunction)FactSink_truncate, METH_O, "truncate(rows): forget every fact from row ``rows`` on."},
    {"export", (PyCFunction)FactSink_export, METH_VARARGS,
     "export(ranges=None) -> (rows, path_indices, path_dictionary_offsets, path_dictionary_data, codes, "
     "value_validity, value_offsets, value_data, number_validity, numbers): the columns as bytes for "
     "pyarrow.Array.from_buffers, rows in the order of ``ranges`` (int64 pairs: first row, count)."},
    {"clear", (PyCFunction)FactSink_clear, METH_NOARGS, "clear(): forget every fact."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods FactSink_as_sequence = {
    .sq_length = (lenfunc)FactSink_len,
};

static PyTypeObject FactSinkType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fhirqa.normalize._walk.FactSink",
    .tp_doc = PyDoc_STR("Column buffers of facts (path, value type code, value, number), filled by the C walks."),
    .tp_basicsize = sizeof(FactSink),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FactSink_init,
    .tp_dealloc = (destructor)FactSink_dealloc,
    .tp_methods = FactSink_methods,
    .tp_as_sequence = &FactSink_as_sequence,
};

/* ---------------------------------------------------------------- the reference rewrite */

static inline int
starts_with_ascii(PyObject *text, const char *prefix, Py_ssize_t n)
{
    if (PyUnicode_GET_LENGTH(text) < n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyUnicode_READ_CHAR(text, i) != (Py_UCS4)(unsigned char)prefix[i])
            return 0;
    return 1;
}

/* Resolve one "reference" string of ``node`` in place: 0 resolved or left as it is, 1 a dangling "urn:"
 * reference, -1 error. */
static int
rewrite_reference(PyObject *node, PyObject *key, PyObject *value, PyObject *full_urls, PyObject *resolve)
{
    PyObject *resolved = PyDict_GetItemWithError(full_urls, value);  /* borrowed */
    PyObject *owned = NULL;
    int rc;
    if (resolved == NULL && PyErr_Occurred())
        return -1;
    if (resolved == Py_None)  /* full_urls.get(value) is None: as if absent */
        resolved = NULL;
    if (resolved == NULL && !starts_with_ascii(value, "#", 1) && !starts_with_ascii(value, "urn:", 4)
        && PyUnicode_FindChar(value, '?', 0, PyUnicode_GET_LENGTH(value), 1) == -1) {
        Py_INCREF(value);  /* Python code runs: hold what we pass it */
        owned = PyObject_CallOneArg(resolve, value);
        Py_DECREF(value);
        if (owned == NULL)
            return -1;
        if (owned != Py_None)
            resolved = owned;
    }
    if (resolved == NULL) {
        Py_XDECREF(owned);
        return starts_with_ascii(value, "urn:", 4);
    }
    /* Replacing the value of an existing key does not resize the dict: iteration stays valid. */
    Py_INCREF(key);
    rc = PyDict_SetItem(node, key, resolved);
    Py_DECREF(key);
    Py_XDECREF(owned);
    return rc < 0 ? -1 : 0;
}

static int rewrite_node(PyObject *node, PyObject *full_urls, PyObject *resolve, int depth);

/* A child of a container: recurse into a plain dict or list (0/1 as rewrite_node), 2 for any other dict or
 * list (left to Python), 0 for anything else. */
static int
rewrite_child(PyObject *child, PyObject *full_urls, PyObject *resolve, int depth)
{
    if (Py_IS_TYPE(child, &PyDict_Type) || Py_IS_TYPE(child, &PyList_Type)) {
        Py_INCREF(child);
        int rc = rewrite_node(child, full_urls, resolve, depth + 1);
        Py_DECREF(child);
        return rc;
    }
    return PyDict_Check(child) || PyList_Check(child) ? 2 : 0;
}

/* Rewrite the "reference" strings under ``node`` in place. 0 done, 1 dangling seen, 2 an unusual
 * container (the caller redoes the rewrite in Python, which is idempotent), -1 error. */
static int
rewrite_node(PyObject *node, PyObject *full_urls, PyObject *resolve, int depth)
{
    int dangles = 0, rc;
    if (depth > 10000)
        return 2;
    if (Py_IS_TYPE(node, &PyList_Type)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(node); i++) {
            rc = rewrite_child(PyList_GET_ITEM(node, i), full_urls, resolve, depth);
            if (rc < 0 || rc == 2)
                return rc;
            dangles |= rc;
        }
        return dangles;
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(node, &pos, &key, &value)) {
        if (Py_IS_TYPE(value, &PyUnicode_Type)) {
            if (!PyUnicode_Check(key) || !key_is_reference(key))
                continue;
            rc = rewrite_reference(node, key, value, full_urls, resolve);
        }
        else
            rc = rewrite_child(value, full_urls, resolve, depth);
        if (rc < 0 || rc == 2)
            return rc;
        dangles |= rc;
    }
    return dangles;
}

/* rewrite_references(node, full_urls, resolve) -> True (a bundle-local reference dangles), False, or None
 * (a container the C walk does not handle: the caller runs the Python rewrite). */
static PyObject *
walk_rewrite_references(PyObject *module, PyObject *args)
{
    PyObject *node, *full_urls, *resolve;
    if (!PyArg_ParseTuple(args, "OO!O:rewrite_references", &node, &PyDict_Type, &full_urls, &resolve))
        return NULL;
    if (!Py_IS_TYPE(node, &PyDict_Type) && !Py_IS_TYPE(node, &PyList_Type))
        Py_RETURN_NONE;
    int rc = rewrite_node(node, full_urls, resolve, 0);
    if (rc < 0)
        return NULL;
    if (rc == 2)
        Py_RETURN_NONE;
    return PyBool_FromLong(rc);
}

static PyMethodDef walk_methods[] = {
    {"rewrite_references", walk_rewrite_references, METH_VARARGS,
     "rewrite_references(node, full_urls, resolve) -> bool | None: rewrite every 'reference' string in place "
     "(full_urls lookup, else resolve(value) for non-local ones); True when a 'urn:' reference dangles, "
     "None when the node holds containers this walk leaves to Python."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef walk_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "fhirqa.normalize._walk",
    .m_doc = "The reference rewrite and the checked flatten of fhirqa's ingest, in C (optional speed-up).",
    .m_size = -1,
    .m_methods = walk_methods,
};

PyMODINIT_FUNC
PyInit__walk(void)
{
    if (PyType_Ready(&FactSinkType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&walk_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&FactSinkType);
    if (PyModule_AddObject(module, "FactSink", (PyObject *)&FactSinkType) < 0) {
        Py_DECREF(&FactSinkType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
