#!/usr/bin/env python3
"""Tests of import_cycles.py: crate trees written to a temporary folder, checked by running
the script on them as CI does.

    python3 scripts/check/test_import_cycles.py
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "import_cycles.py")


def check(files):
    """Runs the script on a crates folder holding `demo` with `files` under src/."""
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            path = os.path.join(root, "demo", "src", rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(textwrap.dedent(text))
        run = subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True,
                             check=False)
        return run.returncode, run.stdout


LIB = "mod a;\nmod b;\nmod c;\npub use a::Top;\n"


class ImportCycles(unittest.TestCase):
    def test_a_cycle_written_as_brace_groups_is_named(self):
        code, out = check({
            "lib.rs": LIB,
            "a.rs": "use crate::{b::{self, Middle}, Top as _};\npub struct Top;\n",
            "b.rs": "pub struct Middle;\nuse super::{c::{Bottom}};\n",
            "c.rs": "pub struct Bottom;\nfn f() { let _ = crate::a::Top; }\n",
        })
        self.assertEqual(code, 1, out)
        self.assertEqual(out.splitlines(), [
            "demo: a -> b -> c -> a  (modules in the cycle: a, b, c)",
            "    demo/src/a.rs:1 uses crate::b",
            "    demo/src/b.rs:2 uses super::c::Bottom",
            "    demo/src/c.rs:2 uses crate::a::Top",
            "import cycles: 1",
        ])

    def test_a_cycle_through_a_re_export_is_named(self):
        # b takes `Deep` from `c`, which re-exports it from its child `c::deep`, which uses b.
        code, out = check({
            "lib.rs": "mod b;\nmod c;\n",
            "b.rs": "use crate::c::Deep;\npub struct B;\n",
            "c.rs": "mod deep;\npub use deep::*;\n",
            "c/deep.rs": "pub struct Deep(crate::b::B);\n",
        })
        self.assertEqual(code, 1, out)
        self.assertEqual(out.splitlines()[0],
                         "demo: b -> c::deep -> b  (modules in the cycle: b, c::deep)")

    def test_a_tree_without_a_cycle_passes(self):
        code, out = check({
            "lib.rs": LIB,
            # A child may use its parent, the parent's re-exports included.
            "a.rs": "use crate::{b::Middle, c::Bottom};\npub struct Top(Middle, Bottom);\n",
            "b.rs": "use crate::{c, Top};\npub struct Middle;\n",
            "c.rs": textwrap.dedent("""\
                // crate::a::Top in a comment, /* crate::b */ or a string is not a use.
                pub struct Bottom;
                const S: &str = "crate::a::Top";
                const R: &str = r#"crate::b::Middle"#;
                #[cfg(test)]
                mod tests {
                    use crate::{a, b};
                }
            """),
        })
        self.assertEqual((code, out), (0, "import cycles: 0\n"))


if __name__ == "__main__":
    unittest.main()
