"""Build the fastgo Cython kernels and install the `fastgo` command.

Every `fastgo/*.pyx` is compiled as `fastgo.<name>`. The TOML files of the top-level configs/
folder are installed as package data in fastgo/configs/, where `rundata.config.resolve_config`
finds them by name; the reference players of fastgo/references/ (fastgo.reference_players) are
package data of fastgo. Compiler directives are set once here;
`FASTGO_DEBUG=1` turns bounds checking, wraparound and initialised-memoryview checks back on
for a debug test run.
"""
import glob
import os

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("FASTGO_DEBUG", "") not in ("", "0")

directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "nonecheck": DEBUG,
    "embedsignature": True,
}

# -g0: no debug info in a release build (a quarter of the compile time; the code is the same).
# -O3, not -O2: -O2 builds in 27 s instead of 36 but its kernels were slower (2-core AMD EPYC
# Zen 3, builds alternated, medians of 3: bench board 9x9 -18%, 19x19 -17%, bench mcts -11%)
compile_args = ["-O0", "-g"] if DEBUG else ["-O3", "-g0"]

# Cython's utility code (memoryviews above all) compiled once, in fastgo._cyutility, rather
# than into every kernel: a third less C to compile.
SHARED_UTILITY = "fastgo._cyutility"

extensions = [
    Extension(
        "fastgo." + os.path.splitext(os.path.basename(path))[0],
        [path],
        include_dirs=[numpy.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    # the largest first: the parallel build hands them out in this order, and a large kernel
    # left to the end keeps one core compiling alone
    for path in sorted(glob.glob(os.path.join("fastgo", "*.pyx")), key=os.path.getsize,
                       reverse=True)
]


class ParallelBuildExt(build_ext):
    """build_ext compiling the extensions on every core unless told otherwise (-j N): pip's
    editable and wheel builds pass no -j."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = os.cpu_count() or 1


# FASTGO_EXTENSIONS=board,features builds only those (handy while one kernel is mid-edit).
_only = [name for name in os.environ.get("FASTGO_EXTENSIONS", "").split(",") if name]
if _only:
    extensions = [ext for ext in extensions if ext.name.split(".")[-1] in _only]
# first too: its C (memoryviews and the rest of Cython's utility code) is among the largest
extensions.insert(0, Extension(SHARED_UTILITY, [SHARED_UTILITY.replace(".", os.sep) + ".c"],
                               extra_compile_args=compile_args))

setup(
    name="fastgo",
    version="0.1.0",
    description=("AlphaZero-style self-play for Go: Cython kernels, ZeroMQ batched inference, "
                 "PyTorch training"),
    packages=find_packages(include=["fastgo", "fastgo.*", "rundata", "rundata.*", "network", "network.*",
                                    "wire", "wire.*",
                                    "inference_server", "inference_server.*", "recorder", "recorder.*",
                                    "selfplay_workers", "selfplay_workers.*", "play", "play.*",
                                    "trainer", "trainer.*",
                                    "evaluation", "evaluation.*", "roles", "roles.*",
                                    "supervision", "supervision.*", "dashboard", "dashboard.*",
                                    "comparison", "comparison.*", "fastgo_cli", "fastgo_cli.*"])
    + ["fastgo.configs"],
    package_dir={"fastgo.configs": "configs"},
    # the reference players (ref:NAME): fastgo/references/index.json and its NAME.ckpt files
    package_data={"fastgo": ["*.pxd", "*.pyx", "references/index.json", "references/*.ckpt",
                        "references/calibration.jsonl"],
                  "fastgo.configs": ["*.toml"],
                  "dashboard": ["static/*.html", "static/*.js", "static/*.css"]},
    # both steps on every core: Cython's translation and the C compiler (ParallelBuildExt)
    ext_modules=cythonize(extensions, compiler_directives=directives, annotate=False,
                          nthreads=os.cpu_count() or 1,
                          shared_utility_qualified_name=SHARED_UTILITY),
    cmdclass={"build_ext": ParallelBuildExt},
    python_requires=">=3.11",          # tomllib (the config loader)
    install_requires=[
        "numpy>=1.24",
        "pyzmq>=25",
        "msgpack>=1.2.1",
        "torch>=2.2",
        "matplotlib>=3.5",          # curve.png and loss.png of a run
        "aiohttp>=3.9",             # fastgo dashboard's server
        # The CPU inference backends server.backend = "auto" chooses among
        # (fastgo bench backends): export, ONNX Runtime, OpenVINO.
        "onnx>=1.14",
        "onnxruntime>=1.16",
        "openvino>=2024.0",
    ],
    extras_require={
        # `fastgo cluster --launcher ray`: roles as Ray actors on a Ray cluster.
        "ray": ["ray>=2.9"],
        # katrain: its own analysis client drives `fastgo analysis` in a system test.
        # selenium: the dashboard's tests in Debian's chromium (apt: chromium chromium-driver).
        # pytest-xdist (3.8: --no-loadscope-reorder): the suite runs on every core (pyproject.toml's addopts).
        # ruff and mypy pinned: .ci/run runs them before the tests, and a new release's new rules
        # would fail CI on code that did not change.
        "test": ["pytest>=7", "pytest-xdist>=3.8", "hypothesis>=6", "ray>=2.9", "katrain>=1.20",
                 "selenium>=4.10", "ruff==0.17.6", "mypy==2.4.1"],
    },
    entry_points={"console_scripts": ["fastgo = fastgo_cli.main:main"]},
    zip_safe=False,
)
