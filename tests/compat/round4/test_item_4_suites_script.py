"""Issue 35 item 4: ``tools/compat_suites.py`` rewrites a checkout's imports to ``llmplex.compat`` and runs its
tests; here on a tiny made-up checkout (the real snapshots are for ``tox -e compat-suites`` only)."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

TOOLS = Path(__file__).parents[3] / "tools"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


suites = _load("compat_suites")
RENAMES = {
    "src.utils.llm_adapters.openai": "llmplex.compat.util_llm.adapter",
    "src.utils.llm_adapters": "llmplex.compat.util_llm",
    "src.utils.llm": "llmplex.compat.util_llm",
    "src.utils.internal": "src.utils.internal",  # kept: an internal module is mapped to itself
}


def test_item_4_imports_and_dotted_strings_are_rewritten_longest_name_first() -> None:
    source = textwrap.dedent(
        """\
        from src.utils.llm import LLMClient
        import src.utils.llm_adapters.openai as adapter_module
        from src.utils.llm_adapters import OpenAIAdapter
        patch("src.utils.llm_adapters.openai.AsyncOpenAI")
        from src.utils.llm_errors import LLMError
        from mysrc.utils.llm import Other
        from src.utils.internal.helpers import keep
        """
    )
    assert suites.rewrite_source(source, RENAMES) == textwrap.dedent(
        """\
        from llmplex.compat.util_llm import LLMClient
        import llmplex.compat.util_llm.adapter as adapter_module
        from llmplex.compat.util_llm import OpenAIAdapter
        patch("llmplex.compat.util_llm.adapter.AsyncOpenAI")
        from src.utils.llm_errors import LLMError
        from mysrc.utils.llm import Other
        from src.utils.internal.helpers import keep
        """
    )
    assert suites.rewrite_source(source, {}) == source


def _tiny_checkout(root: Path) -> Path:
    (root / "src" / "utils").mkdir(parents=True)
    for package in (root / "src", root / "src" / "utils", root / "tests"):
        package.mkdir(exist_ok=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
    (root / "src" / "utils" / "llm.py").write_text("class LLMClient:\n    origin = 'original'\n", encoding="utf-8")
    (root / "tests" / "test_client.py").write_text(
        textwrap.dedent(
            """\
            from src.utils.llm import LLMClient


            def test_the_client_comes_from_llmplex():
                assert LLMClient.__module__.startswith("llmplex.compat")


            def test_the_original_is_gone():
                import pathlib
                assert not pathlib.Path("src/utils/llm.py").exists()
            """
        ),
        encoding="utf-8",
    )
    return root


def test_item_4_rewrite_tree_deletes_the_originals_and_rewrites_every_file(tmp_path: Path) -> None:
    root = _tiny_checkout(tmp_path / "tiny")
    changed = suites.rewrite_tree(root, RENAMES, remove=["src/utils/llm.py", "not/there.py"])
    assert changed == [root / "tests" / "test_client.py"]
    assert not (root / "src" / "utils" / "llm.py").exists()
    assert "llmplex.compat.util_llm" in (root / "tests" / "test_client.py").read_text(encoding="utf-8")


def test_item_4_a_suite_runs_on_a_rewritten_copy_and_reports_per_test(tmp_path: Path) -> None:
    checkout = _tiny_checkout(tmp_path / "tiny")
    suite = suites.Suite(
        name="tiny", checkout="tiny", root=".", tests=("tests",), renames=RENAMES, remove=("src/utils/llm.py",)
    )
    ours = suites.run_suite(suite, checkout, original=False)
    assert ours.results == {
        "tests.test_client::test_the_client_comes_from_llmplex": "passed",
        "tests.test_client::test_the_original_is_gone": "passed",
    }
    assert (checkout / "src" / "utils" / "llm.py").exists()  # the checkout itself is never changed
    report = suites._report(suite, ours, ours)
    assert report[0] == "## tiny: 2/2"


def test_item_4_the_command_refuses_without_snapshots_and_names_the_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        suites.main(["--snapshots", str(tmp_path / "missing")])
    assert stopped.value.code == 2 and "LLMPLEX_COMPAT_SNAPSHOTS" in capsys.readouterr().err
    assert suites.main(["--snapshots", str(tmp_path), "--suite", "no such suite"]) == 0


def test_item_4_the_tox_env_exists_outside_the_default_list() -> None:
    tox = (Path(__file__).parents[3] / "tox.ini").read_text(encoding="utf-8")
    assert "[testenv:compat-suites]" in tox
    env_list = next(line for line in tox.splitlines() if line.startswith("env_list"))
    assert "compat-suites" not in env_list
