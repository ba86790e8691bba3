"""LLVM IR that tilec got wrong is a BackendError, never a process abort, also when it carries debug information
(parsing such a module makes LLVM verify it and abort when it is broken, unless the debug-info upgrade is off:
``codegen/driver.py: no_fatal_parse``). Each case runs in a fresh interpreter, so an abort fails the test instead
of ending the run."""
import subprocess
import sys
import textwrap

import pytest

BROKEN_WITH_DEBUG_INFO = textwrap.dedent('''
    define float @f(float %a, float %b) !dbg !5 {
      %c = call float @llvm.maxnum.f32(float %a, float %b), !dbg !8
      ret float %c, !dbg !8
    }
    declare float @llvm.maxnum.f32(float)
    !llvm.dbg.cu = !{!0}
    !llvm.module.flags = !{!3, !4}
    !0 = distinct !DICompileUnit(language: DW_LANG_C, file: !1, producer: "t", isOptimized: true, runtimeVersion: 0, emissionKind: LineTablesOnly)
    !1 = !DIFile(filename: "k.py", directory: "/")
    !3 = !{i32 2, !"Debug Info Version", i32 3}
    !4 = !{i32 2, !"Dwarf Version", i32 4}
    !5 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
    !6 = !DISubroutineType(types: !7)
    !7 = !{}
    !8 = !DILocation(line: 2, column: 3, scope: !5)
''')


@pytest.mark.parametrize("parser", ["tilec.codegen.driver", "tilec.gpu.llvm_codegen"])
def test_a_broken_module_with_debug_info_is_a_backend_error(parser):
    code = textwrap.dedent(f'''
        import sys
        from {parser} import parse
        from tilec.errors import BackendError
        try:
            parse(sys.stdin.read())
        except BackendError as e:
            print("BackendError:", str(e).splitlines()[0])
        else:
            print("parsed")
    ''')
    r = subprocess.run([sys.executable, "-c", code], input=BROKEN_WITH_DEBUG_INFO, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("BackendError: LLVM rejected the generated"), r.stdout + r.stderr
