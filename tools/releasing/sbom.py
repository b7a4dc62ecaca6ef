"""A CycloneDX SBOM of what installing the release brings, with every component's licence.

The distributions are installed from the wheelhouse into a fresh venv (with uv),
and ``cyclonedx-py environment`` describes that venv: each component's licence
from its metadata (an SPDX expression, a classifier, or the text of its
``License:`` field and licence files). A component whose metadata declares no
licence at all gets the one its provider documents, marked ``concluded``: the
local model's part packages carry the licence of the model they hold, from
``llmplex_llamacpp.catalogue``. A component left without any licence fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from uv import find_uv_bin

__all__ = ["SBOMError", "make_sbom", "unlicensed"]

_CATALOGUE_LICENCES = (
    "import json\n"
    "try:\n"
    "    from llmplex_llamacpp.catalogue import MODELS\n"
    "except ImportError:\n"
    "    MODELS = ()\n"
    "print(json.dumps({p.distribution: m.licence for m in MODELS for p in m.parts}))\n"
)


class SBOMError(RuntimeError):
    """The SBOM could not be made, or lists a component without a licence."""


def _run(command: list[str], what: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SBOMError(f"{what} failed (`{' '.join(command)}`):\n{done.stderr[-4000:]}")
    return done.stdout


def unlicensed(document: dict[str, object]) -> list[str]:
    """``name version`` of every component listed without a licence (the root component, llmplex, included)."""
    components = document.get("components", [])
    metadata = document.get("metadata", {})
    assert isinstance(components, list)
    assert isinstance(metadata, dict)
    listed = [metadata["component"], *components] if "component" in metadata else components
    return [f"{c['name']} {c.get('version', '?')}" for c in listed if not c.get("licenses")]


def _conclude(document: dict[str, object], licences: dict[str, str]) -> None:
    components = document.get("components", [])
    assert isinstance(components, list)
    for component in components:
        licence = licences.get(component["name"])
        if component.get("licenses") or licence is None:
            continue
        key = "id" if licence.replace("-", "").replace(".", "").isalnum() else "name"
        component["licenses"] = [{"license": {key: licence, "acknowledgement": "concluded"}}]


def make_sbom(
    wheelhouse: Path,
    names: list[str],
    output: Path,
    *,
    root_pyproject: Path,
    offline: bool = False,
    constraints: Path | None = None,
    validate: bool = True,
) -> dict[str, object]:
    """Install ``names`` from ``wheelhouse`` into a fresh venv and write its SBOM (CycloneDX 1.6 JSON) to ``output``."""
    uv = find_uv_bin()
    with tempfile.TemporaryDirectory(prefix="llmplex-sbom-") as folder:
        venv = Path(folder) / "venv"
        _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], "creating the SBOM's venv")
        python = str(venv / "bin" / "python")
        install = [uv, "pip", "install", "--quiet", "--python", python, "--find-links", str(wheelhouse), *names]
        install += ["--offline"] if offline else []
        install += ["--constraint", str(constraints)] if constraints else []
        _run(install, "installing the release into the SBOM's venv")
        raw = Path(folder) / "sbom.json"
        _run(
            [
                sys.executable,
                "-m",
                "cyclonedx_py",
                "environment",
                "--gather-license-texts",
                "--no-validate",
                "--output-reproducible",
                "--sv",
                "1.6",
                "--pyproject",
                str(root_pyproject),
                "--of",
                "JSON",
                "-o",
                str(raw),
                python,
            ],
            "cyclonedx-py",
        )
        licences = json.loads(_run([python, "-c", _CATALOGUE_LICENCES], "reading the local models' licences"))
        document: dict[str, object] = json.loads(raw.read_text(encoding="utf-8"))
    _conclude(document, licences)
    missing = unlicensed(document)
    if missing:
        raise SBOMError(
            f"no licence is known for {', '.join(missing)}: their metadata declares none; add the licence their "
            "publisher documents (for a model's part packages, the model's `licence` in llmplex_llamacpp.catalogue)"
        )
    text = json.dumps(document, indent=2, sort_keys=True)
    if validate:
        from cyclonedx.schema import SchemaVersion
        from cyclonedx.validation.json import JsonStrictValidator

        error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
        if error is not None:
            raise SBOMError(f"the SBOM is not valid CycloneDX 1.6: {error}")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text + "\n", encoding="utf-8")
    return document
