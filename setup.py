"""`pip install .`: the Python package python/trainclock/ plus its binding, built by CMake.

The binding (_trainclock*.so, target trainclock_python of python/CMakeLists.txt) is built with the
project's own CMake, for the interpreter that runs pip, in one of these build folders:
  - $TRAINCLOCK_BUILD_DIR when set (configured here if it has no CMakeCache.txt yet);
  - build/ (the native preset of `make build`) when it is configured for a Python of the same ABI
    (extension suffix): only the module target is brought up to date, reusing the built core;
  - else build/pip/, configured here with only what the module needs (no tests, GUI, benchmarks).
Offline: nothing is downloaded; it needs cmake, a C++17 compiler, libsimdjson-dev, libtomlplusplus-dev,
pybind11-dev and python3-dev (scripts/setup.sh installs them). Setuptools' own files go to build/setuptools/.
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
SETUPTOOLS_DIR = ROOT / "build" / "setuptools"


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(trainclock VERSION ([0-9.]+)", text).group(1)


def cache_value(build_dir, key):
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
        name, _, value = line.partition("=")
        if name.split(":")[0] == key:
            return value
    return None


def extension_suffix(python):
    if python is None or not Path(python).exists():
        return None
    run = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                         capture_output=True, text=True, check=False)
    return run.stdout.strip() if run.returncode == 0 else None


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        build_dir = self.choose_build_dir(suffix)
        if not (build_dir / "CMakeCache.txt").is_file():
            self.announce(f"trainclock: configuring {build_dir}", level=2)
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                            f"-DPython_EXECUTABLE={sys.executable}", "-DTRAINCLOCK_BUILD_PYTHON=ON",
                            "-DTRAINCLOCK_BUILD_TESTS=OFF", "-DTRAINCLOCK_BUILD_GUI=OFF",
                            "-DTRAINCLOCK_BUILD_BENCH=OFF"], check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "trainclock_python", "-j", jobs], check=True)
        built = build_dir / "python" / "trainclock" / f"_trainclock{suffix}"
        if not built.is_file():
            sys.exit(f"trainclock: {built} was not built: is pybind11-dev (and python3-dev) installed? "
                     "(the CMake output above says why the module was skipped)")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)

    @staticmethod
    def choose_build_dir(suffix):
        if os.environ.get("TRAINCLOCK_BUILD_DIR"):
            return Path(os.environ["TRAINCLOCK_BUILD_DIR"]).resolve()
        native = ROOT / "build"
        python = cache_value(native, "Python_EXECUTABLE") or cache_value(native, "_Python_EXECUTABLE")
        if (native / "python" / "trainclock" / f"_trainclock{suffix}").is_file() or extension_suffix(python) == suffix:
            return native
        return native / "pip"


SETUPTOOLS_DIR.mkdir(parents=True, exist_ok=True)
setup(
    version=project_version(),
    packages=["trainclock"],
    package_dir={"trainclock": "python/trainclock"},
    ext_modules=[CMakeExtension("trainclock._trainclock")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": str(SETUPTOOLS_DIR.relative_to(ROOT))},
             "egg_info": {"egg_base": str(SETUPTOOLS_DIR.relative_to(ROOT))}},
    zip_safe=False,
)
