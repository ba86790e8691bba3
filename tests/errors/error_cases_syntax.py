"""Error corpus: Python constructs a kernel may not use, and names it cannot resolve."""
from tilec import CompilationError

from error_corpus import Case

CASES = [
    Case("break", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i in range(n):
                break  # <-
        """, CompilationError, "unsupported syntax in a kernel: break", caret="break"),
    Case("continue", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i in range(n):
                continue  # <-
        """, CompilationError, "unsupported syntax in a kernel: continue", caret="continue"),
    Case("for_else", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i in range(n):  # <-
                tl.store(X + i, 1.0)
            else:
                tl.store(Y, 1.0)
        """, CompilationError, "for ... else is not supported", caret="for"),
    Case("while_else", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            i = 0
            while i < n:  # <-
                i += 1
            else:
                tl.store(Y, 1.0)
        """, CompilationError, "while ... else is not supported", caret="while"),
    Case("try_except", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            try:  # <-
                tl.store(X, 1.0)
            except Exception:
                pass
        """, CompilationError, "unsupported syntax in a kernel: try", caret="try"),
    Case("with_statement", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            with open("f") as f:  # <-
                pass
        """, CompilationError, "unsupported syntax in a kernel: with", caret="with"),
    Case("lambda", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            f = lambda v: v + 1  # <-
        """, CompilationError, "unsupported syntax in a kernel: Lambda expression", caret="lambda"),
    Case("list_comprehension", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            vals = [i * 2 for i in range(4)]  # <-
        """, CompilationError, "unsupported syntax in a kernel: ListComp expression", caret="[i * 2"),
    Case("generator_expression", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            s = sum(i for i in range(4))  # <-
        """, CompilationError, "name 'sum' is not defined", caret='sum('),
    Case("dict_literal", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            d = {"a": 1}  # <-
        """, CompilationError, "unsupported syntax in a kernel: Dict expression", caret="{"),
    Case("set_literal", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            s = {1, 2}  # <-
        """, CompilationError, "unsupported syntax in a kernel: Set expression", caret="{"),
    Case("global_statement", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            global COUNTER  # <-
        """, CompilationError, "unsupported syntax in a kernel: global", caret="global"),
    Case("nested_def", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            def helper(v):  # <-
                return v
        """, CompilationError, "unsupported syntax in a kernel: nested function definitions", caret="def"),
    Case("nested_class", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            class C:  # <-
                pass
        """, CompilationError, "unsupported syntax in a kernel: class definitions", caret="class"),
    Case("import_in_kernel", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            import math  # <-
        """, CompilationError, "unsupported syntax in a kernel: import", caret="import"),
    Case("raise", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            raise ValueError("no")  # <-
        """, CompilationError, "unsupported syntax in a kernel: raise", caret="raise"),
    Case("del", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = 1
            del v  # <-
        """, CompilationError, "unsupported syntax in a kernel: del", caret="del"),
    Case("yield", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            yield 1  # <-
        """, CompilationError, "unsupported syntax in a kernel: Yield expression", caret="yield"),
    Case("walrus", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            if (m := n) > 0:  # <-
                tl.store(X, 1.0)
        """, CompilationError, "unsupported syntax in a kernel: NamedExpr expression", caret="m := n"),
    Case("fstring", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            s = f"{n}"  # <-
        """, CompilationError, "f-strings can only format compile-time values", caret='f"'),
    Case("starred_assignment", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a, *rest = 1, 2, 3  # <-
        """, CompilationError, "unsupported assignment target: Starred", caret="*rest"),
    Case("tensor_slice", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.load(X + tl.arange(0, BLOCK))
            w = v[2:4]  # <-
        """, CompilationError, "unsupported tensor index slice(2, 4, None)", caret="v[2:4]"),
    Case("tensor_integer_index", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.load(X + tl.arange(0, BLOCK))
            w = v[0]  # <-
        """, CompilationError, "unsupported tensor index 0", caret="v[0]"),
    Case("subscript_store", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.zeros((BLOCK,), tl.float32)
            v[0] = 1.0  # <-
        """, CompilationError, "unsupported assignment target: Subscript", caret="v[0]"),
    Case("attribute_store", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.zeros((BLOCK,), tl.float32)
            v.foo = 1  # <-
        """, CompilationError, "unsupported assignment target: Attribute", caret="v.foo"),
    Case("for_over_tensor", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.load(X + tl.arange(0, BLOCK))
            for e in v:  # <-
                tl.store(Y, e)
        """, CompilationError, "a kernel `for` loop must iterate over range(...)", caret="v"),
    Case("for_tuple_target", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i, j in range(n):  # <-
                pass
        """, CompilationError, "the loop variable must be a plain name", caret="i, j"),
    Case("in_operator", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            if n in (1, 2):  # <-
                tl.store(X, 1.0)
        """, CompilationError, "operator In cannot be applied to tensors", caret="n in"),
    Case("augmented_subscript", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.zeros((BLOCK,), tl.float32)
            v[0] += 1.0  # <-
        """, CompilationError, "augmented assignment only to plain names is supported", caret="v[0]"),
    Case("string_arithmetic", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.load(X + tl.arange(0, BLOCK))
            w = v + "a"  # <-
        """, CompilationError, "cannot use str value 'a' as a tensor", caret='v + '),
    Case("varargs_kernel", """
        @tilec.jit
        def k(X, Y, n, *rest, BLOCK: tl.constexpr = 16):  # <-
            pass
        """, CompilationError, "kernels take plain positional parameters only", launch="k[(1,)](x, y, 16)"),
    Case("kwargs_kernel", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr, **extra):  # <-
            pass
        """, CompilationError, "kernels take plain positional parameters only"),
    Case("match_statement", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            match n:  # <-
                case 1:
                    tl.store(X, 1.0)
        """, CompilationError, "unsupported syntax in a kernel: Match", caret="match"),
    Case("kernel_returns_value", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):  # <-
            return n
        """, CompilationError, "a kernel cannot return a value"),
    Case("unpack_too_many", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            a, b = 1, 2, 3  # <-
        """, CompilationError, "cannot unpack 3 values into 2 names", caret="a, b"),
    Case("store_string", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X, "abc")  # <-
        """, CompilationError, "cannot use str value 'abc' as a tensor", caret='tl.store'),
    Case("undefined_name", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            tl.store(X, not_defined_anywhere)  # <-
        """, CompilationError, "name 'not_defined_anywhere' is not defined", caret='not_defined_anywhere'),
    Case("unknown_tl_function", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            r = tl.arangee(0, BLOCK)  # <-
        """, CompilationError, "has no attribute 'arangee'", caret='tl.arangee'),
    Case("unknown_tensor_method", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = tl.load(X + tl.arange(0, BLOCK))
            w = v.frobnicate()  # <-
        """, CompilationError, "tensor has no attribute 'frobnicate'", caret='v.frobnicate'),
    Case("mutable_global", """
        TABLE = [1, 2, 3]

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = TABLE  # <-
        """, CompilationError, "cannot use global 'TABLE' of type list inside a kernel", caret='TABLE'),
    Case("plain_python_call", """
        def helper(v):
            return v

        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = helper(1)  # <-
        """, CompilationError, "cannot call helper: it is a plain Python function", caret="helper(1)"),
    Case("numpy_call", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            v = np.sqrt(2.0)  # <-
        """, CompilationError, "cannot use numpy.sqrt (ufunc) inside a kernel", caret="np.sqrt"),
    Case("use_before_assignment", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            if n > 0:
                v = 1.0
            tl.store(X, v)  # <-
        """, CompilationError, "name 'v' is not defined", caret='v'),
    Case("unbound_loop_variable", """
        @tilec.jit
        def k(X, Y, n, BLOCK: tl.constexpr):
            for i in range(n):
                pass
            tl.store(X + i, 1.0)  # <-
        """, CompilationError, "name 'i' is not defined", caret='i'),
]
